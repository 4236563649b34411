//! `/events`: the entity-event layer, as a list and as a stream (SSE).

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use crate::routes::logs::{poll_interval, sse_reply};
use crate::sse::{self, Sender};
use orchestrator_core::api::EventFilter;
use orchestrator_core::events::EventKey;
use orchestrator_core::store::Topic;
use orchestrator_core::{Caller, ControlPlane};
use serde_json::json;
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::watch;

const STREAM_BATCH: u32 = 200;

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
    let (sender, body) = sse::sse_channel(app.core.config().stream_slow_consumer_timeout);
    tokio::spawn(follow_events(
        app.core.clone(),
        caller,
        filter,
        key,
        sender,
        app.stopping.clone(),
    ));
    Ok(sse_reply(body))
}

async fn follow_events(
    core: ControlPlane,
    caller: Caller,
    filter: EventFilter,
    mut key: EventKey,
    mut sender: Sender,
    mut stopping: watch::Receiver<bool>,
) {
    let mut wake = core.store().wakeups();
    let heartbeat = core.config().stream_heartbeat;
    let poll = poll_interval(&core);
    let mut next_heartbeat = tokio::time::Instant::now() + heartbeat;
    loop {
        if *stopping.borrow() {
            return;
        }
        loop {
            let events = match core
                .read_events_forward(&caller, &filter, key, STREAM_BATCH)
                .await
            {
                Ok(events) => events,
                Err(e) => {
                    tracing::warn!(error = %e, "event stream read failed");
                    sender.finish_with(sse::frame(None, "error", &json!({"error": "read_failed"})));
                    return;
                }
            };
            let count = events.len();
            for (event_key, event) in events {
                let id = event.id.to_string();
                if !sender
                    .send(sse::frame(Some(&id), &event.event_type, &event))
                    .await
                {
                    return;
                }
                key = event_key;
                next_heartbeat = tokio::time::Instant::now() + heartbeat;
            }
            if count < STREAM_BATCH as usize {
                break;
            }
        }
        // Wait for this topic's wake-up, the poll fallback or a heartbeat;
        // then read again.
        let poll_timer = tokio::time::sleep(poll);
        tokio::pin!(poll_timer);
        loop {
            tokio::select! {
                _ = stopping.changed() => return,
                _ = sender.closed() => return,
                woke = wake.recv() => match woke {
                    Ok(Topic::Events) | Err(RecvError::Lagged(_)) => {}
                    // The other topic: wait again without reading.
                    Ok(Topic::Logs) => continue,
                    Err(RecvError::Closed) => return,
                },
                _ = &mut poll_timer => {}
                _ = tokio::time::sleep_until(next_heartbeat) => {
                    if !sender.send(&b": heartbeat\n\n"[..]).await {
                        return;
                    }
                    next_heartbeat = tokio::time::Instant::now() + heartbeat;
                }
            }
            break;
        }
    }
}
