//! `/events`: the entity-event layer, as a list and as a stream (SSE).

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use crate::sse;
use bytes::Bytes;
use orchestrator_core::api::EventFilter;
use orchestrator_core::events::EventKey;
use orchestrator_core::store::Topic;
use serde_json::json;
use std::sync::Arc;

/// `GET /events`: oldest first after `after`; `meta: {next_after, has_more}`.
pub(crate) async fn list(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let filter: EventFilter = req.query()?;
    let page = app.core.list_events(req.caller()?, filter).await?;
    Ok(req.ok_with_meta(
        &page.items,
        &json!({ "next_after": page.next_after, "has_more": page.has_more }),
    ))
}

/// `GET /events/stream`: replays events after `Last-Event-ID` or `after`,
/// then follows live. Frames: `id:` event id, `event:` event type, `data:`
/// the event; idle streams get a `: heartbeat` comment.
pub(crate) async fn stream(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let filter: EventFilter = req.query()?;
    follow(app, &req, filter).await
}

/// An SSE stream of the events `filter` selects: those after `Last-Event-ID`
/// (or `filter.after`) first, then live ones; from the newest when neither
/// is given. Other streams of events (a task's) reuse it.
pub(crate) async fn follow(
    app: Arc<App>,
    req: &Req,
    filter: EventFilter,
) -> Result<Reply, ApiError> {
    let caller = req.caller()?.clone();
    let key = match sse::resume_id(
        req.header("last-event-id"),
        filter.after.map(|a| a.to_string()).as_deref(),
    ) {
        Some(after) => app.core.event_start(&caller, after).await?,
        None => app.core.event_head(&caller).await?,
    };
    let (sender, body) = sse::sse_channel(&app)?;
    let core = app.core.clone();
    let read = move |key: EventKey| {
        let (core, caller, filter) = (core.clone(), caller.clone(), filter.clone());
        async move {
            let events = core
                .read_events_forward(&caller, &filter, key, sse::STREAM_BATCH)
                .await?;
            Ok(events
                .into_iter()
                .map(|(key, event)| {
                    let id = event.id.to_string();
                    (key, sse::frame(Some(&id), &event.event_type, &event))
                })
                .collect())
        }
    };
    let feed = sse::Feed {
        topic: Topic::Events,
        key,
        read,
        heartbeat: || Bytes::from_static(b": heartbeat\n\n"),
        ends: |_| false,
    };
    sse::spawn_follow(&app, req, feed, sender);
    Ok(sse::reply(body))
}
