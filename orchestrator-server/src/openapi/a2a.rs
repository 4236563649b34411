//! A2A (agent-to-agent): each route's input and output types.

use super::describe::*;
use http::Method as M;
use orchestrator_core::api::a2a::{A2aTask, A2aTaskEvent, AgentCard, SubmitA2aTask};

/// A2A (agent-to-agent).
pub(super) fn docs() -> Vec<Doc> {
    vec![
        op(M::GET, "/.well-known/agent.json", "The A2A agent card", plain::<AgentCard>()),
        op(M::POST, "/api/v1/a2a/tasks", "Submit an A2A task", created::<A2aTask>()).body::<SubmitA2aTask>(),
        op(M::GET, "/api/v1/a2a/tasks/{id}", "Get an A2A task", ok::<A2aTask>()),
        op(M::GET, "/api/v1/a2a/tasks/{id}/events", "Follow an A2A task's state", Success::Events(schema::<A2aTaskEvent>, "`event: task.state_changed` frames; the stream ends after a terminal state.")),
    ]
}
