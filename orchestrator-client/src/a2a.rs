//! A2A ingress: the agent card, submission, the A2A task view and its
//! status stream.

use crate::client::{Client, JsonWithRequestId, M, decode};
use crate::error::{Error, Result};
use crate::sse;
use futures_util::stream::{BoxStream, StreamExt};
use orchestrator_core::api::{A2aTask, A2aTaskEvent, AgentCard, SubmitA2aTask};
use uuid::Uuid;

/// The `A2a` routes: get one from [`Client::a2a`](crate::Client::a2a).
pub struct A2a<'c> {
    pub(crate) client: &'c Client,
}

/// One frame of an A2A task's status stream.
#[derive(Debug, Clone, PartialEq)]
pub struct A2aStreamItem {
    /// The event id (pass as `last_event_id` to resume after it).
    pub id: Option<String>,
    /// The event.
    pub event: A2aTaskEvent,
}

impl A2a<'_> {
    /// `GET /.well-known/agent.json` (needs no credential).
    pub async fn card(&self) -> Result<AgentCard> {
        let builder = self.client.request(M::GET, "/.well-known/agent.json");
        let response = self.client.send(builder).await?;
        decode(response).await
    }

    /// `POST /a2a/tasks`: the new task's A2A view (`submitted`).
    pub async fn submit(&self, request: &SubmitA2aTask) -> Result<A2aTask> {
        self.client
            .data(
                self.client
                    .request(M::POST, "/api/v1/a2a/tasks")
                    .json_id(self.client, request),
            )
            .await
    }

    /// `GET /a2a/tasks/:id`.
    pub async fn get(&self, id: Uuid) -> Result<A2aTask> {
        self.client
            .data(
                self.client
                    .request(M::GET, &format!("/api/v1/a2a/tasks/{id}")),
            )
            .await
    }

    /// `GET /a2a/tasks/:id/events`: the task's status changes from its
    /// creation (or after `last_event_id`), then live. The stream ends after
    /// a terminal status (or when the server closes it); a broken connection
    /// is resumed after the last frame yielded.
    pub fn events(
        &self,
        id: Uuid,
        last_event_id: Option<String>,
    ) -> BoxStream<'static, Result<A2aStreamItem>> {
        sse::until_closed(
            self.client.clone(),
            format!("/api/v1/a2a/tasks/{id}/events"),
            Vec::new(),
            last_event_id,
        )
        .map(|item| {
            item.and_then(|frame| {
                serde_json::from_str::<A2aTaskEvent>(&frame.data)
                    .map(|event| A2aStreamItem {
                        id: frame.id,
                        event,
                    })
                    .map_err(|e| Error::Decode {
                        status: 200,
                        message: format!("bad A2A frame: {e}"),
                    })
            })
        })
        .scan(false, |ended, item| {
            let out = if *ended {
                None
            } else {
                *ended = item.as_ref().map_or(true, |i| i.event.status.is_terminal());
                Some(item)
            };
            futures_util::future::ready(out)
        })
        .boxed()
    }
}
