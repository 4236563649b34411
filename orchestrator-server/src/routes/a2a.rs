//! A2A task ingress: the agent card, submission, the A2A task view and its
//! status stream (SSE).

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use crate::sse;
use bytes::Bytes;
use http::StatusCode;
use http::uri::Authority;
use orchestrator_core::api::{AgentCard, SubmitA2aTask};
use orchestrator_core::events::EventKey;
use orchestrator_core::store::Topic;
use std::sync::Arc;

/// `GET /.well-known/agent.json` (no credential): the card, with endpoint
/// URLs on the address the client used (`X-Forwarded-Host` /
/// `X-Forwarded-Proto` when a proxy sets them, else `Host`).
pub(crate) async fn card(_app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    Ok(Reply::plain(
        StatusCode::OK,
        &AgentCard::for_base(&base_url(&req)),
    ))
}

/// The first value of a possibly comma-separated proxy header.
fn first_value<'a>(req: &'a Req, name: &str) -> Option<&'a str> {
    req.header(name)
        .and_then(|v| v.split(',').next())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

/// `scheme://host[:port]` of the request; a host that is not a valid
/// authority is ignored, so the card never carries header junk.
pub(crate) fn base_url(req: &Req) -> String {
    let host = [first_value(req, "x-forwarded-host"), req.header("host")]
        .into_iter()
        .flatten()
        .find(|h| h.parse::<Authority>().is_ok())
        .unwrap_or("localhost");
    let scheme = match first_value(req, "x-forwarded-proto") {
        Some(p) if p.eq_ignore_ascii_case("https") => "https",
        Some(p) if p.eq_ignore_ascii_case("http") => "http",
        _ if req.is_https() => "https",
        _ => "http",
    };
    format!("{scheme}://{host}")
}

/// `POST /a2a/tasks`: `{data: A2A task}` with status `submitted`.
pub(crate) async fn submit(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: SubmitA2aTask = req.json()?;
    let task = app.core.submit_a2a_task(req.caller()?, body).await?;
    Ok(req.created(&task))
}

pub(crate) async fn get(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let task = app
        .core
        .get_a2a_task(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&task))
}

/// Where an A2A status stream stands: the last event read, its id, and
/// whether the terminal status has gone out.
#[derive(Clone, Copy)]
struct Position {
    key: EventKey,
    seen: i64,
    finished: bool,
}

/// `GET /a2a/tasks/:id/events`: the task's status changes from its creation
/// (or after `Last-Event-ID`), then live; frames `id:` event id, `event:
/// task.state_changed`, `data: {task_id, status, created_at}`. The stream
/// ends after a terminal status (completed, failed, canceled).
pub(crate) async fn events(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let caller = req.caller()?.clone();
    let id = req.uuid("id")?;
    // 404 for a task the caller cannot see, before the stream starts.
    app.core.get_a2a_task(&caller, id).await?;
    let after = sse::resume_id(req.header("last-event-id"), None).unwrap_or(0);
    let start = Position {
        key: app.core.event_start(&caller, after).await?,
        seen: after,
        finished: false,
    };
    let (sender, body) = sse::sse_channel(&app)?;
    let core = app.core.clone();
    let read = move |at: Position| {
        let (core, caller) = (core.clone(), caller.clone());
        async move {
            let events = core
                .read_a2a_events(&caller, id, at.key, sse::STREAM_BATCH)
                .await?;
            if events.is_empty() {
                // Nothing new: over when the task already stands terminal.
                let finished = core.a2a_stream_finished(&caller, id, at.seen).await?;
                return Ok(if finished {
                    vec![(Position { finished, ..at }, Bytes::new())]
                } else {
                    Vec::new()
                });
            }
            let mut out = Vec::with_capacity(events.len());
            let mut finished = at.finished;
            for (key, event_id, frame) in events {
                let bytes = match frame {
                    Some(frame) if !finished => {
                        finished = frame.status.is_terminal();
                        sse::frame(Some(&event_id.to_string()), "task.state_changed", &frame)
                    }
                    _ => Bytes::new(),
                };
                out.push((
                    Position {
                        key,
                        seen: event_id,
                        finished,
                    },
                    bytes,
                ));
            }
            Ok(out)
        }
    };
    let feed = sse::Feed {
        topic: Topic::Events,
        key: start,
        read,
        heartbeat: || Bytes::from_static(b": heartbeat\n\n"),
        ends: |at: &Position| at.finished,
    };
    sse::spawn_follow(&app, &req, feed, sender);
    Ok(sse::reply(body))
}
