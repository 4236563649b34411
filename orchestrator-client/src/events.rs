//! `/events`: the entity-event layer.

use crate::client::{Client, M, decode};
use crate::error::{Error, Result};
use crate::logs::pairs;
use crate::paging;
use crate::sse;
use futures_util::stream::{BoxStream, StreamExt};
use orchestrator_core::api::{Event, EventFilter, EventPage};
use serde::Deserialize;

/// The `Events` routes: get one from [`Client::events`](crate::Client::events).
pub struct Events<'c> {
    pub(crate) client: &'c Client,
}

#[derive(Deserialize)]
struct AfterEnvelope {
    data: Vec<Event>,
    meta: AfterMeta,
}

#[derive(Deserialize)]
struct AfterMeta {
    next_after: Option<String>,
    has_more: bool,
}

impl Events<'_> {
    /// `GET /events`: oldest first after `filter.after`.
    pub async fn list(&self, filter: &EventFilter) -> Result<EventPage> {
        let builder = self
            .client
            .request(M::GET, "/api/v1/events")
            .query(&pairs(filter));
        let response = self.client.send(builder).await?;
        let envelope: AfterEnvelope = decode(response).await?;
        Ok(EventPage {
            items: envelope.data,
            next_after: envelope.meta.next_after,
            has_more: envelope.meta.has_more,
        })
    }

    /// `GET /events/stream`: events after `filter.after` (or new ones only),
    /// then live; reconnects and resumes after the last event yielded.
    pub fn stream(&self, filter: &EventFilter) -> BoxStream<'static, Result<Event>> {
        let mut filter = filter.clone();
        let last_id = filter.after.take().map(|a| a.to_string());
        filter.limit = None;
        sse::reconnecting(
            self.client.clone(),
            "/api/v1/events/stream".into(),
            pairs(&filter),
            last_id,
        )
        .map(|item| {
            item.and_then(|event| {
                serde_json::from_str::<Event>(&event.data).map_err(|e| Error::Decode {
                    status: 200,
                    message: format!("bad event frame: {e}"),
                })
            })
        })
        .boxed()
    }
}

impl Events<'_> {
    /// Every event matching `filter` after `filter.after`, oldest first,
    /// read page after page as one stream (it ends at the newest event; use
    /// [`Events::stream`] to keep following).
    pub fn list_all(&self, filter: &EventFilter) -> BoxStream<'static, Result<Event>> {
        let client = self.client.clone();
        let filter = filter.clone();
        paging::cursors(move |after: Option<i64>| {
            let client = client.clone();
            let mut filter = filter.clone();
            if after.is_some() {
                filter.after = after;
            }
            async move {
                let page = client.events().list(&filter).await?;
                let next = if page.has_more {
                    page.next_after.as_deref().and_then(|a| a.parse().ok())
                } else {
                    None
                };
                Ok((page.items, next))
            }
        })
    }
}
