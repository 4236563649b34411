//! Events: each route's input and output types.

use super::describe::*;
use http::Method as M;
use orchestrator_core::api::*;

/// Events.
pub(super) fn docs() -> Vec<Doc> {
    vec![
        op(M::GET, "/api/v1/events", "List events (cursor list); a worker's websocket upgrade opens the worker channel", Success::Cursor(schema::<Event>, EVENT_CURSOR)).query::<EventFilter>(),
        op(M::GET, "/api/v1/events/stream", "Follow events", events_sse()).query::<EventFilter>(),
    ]
}
