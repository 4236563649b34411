//! Where a task token may go (see `orchestrator_core::lifecycle::task_token`).
//!
//! The core resolves the token to the assignee agent and its one task; this
//! module keeps it to the routes about that task. Everything else answers
//! `403 FORBIDDEN` in the envelope before the handler runs.

use http::Method;
use orchestrator_core::Error;
use uuid::Uuid;

/// Routes a task token may call: `(method, path, which parameter must be
/// the token's task (`task`) or its assignee agent (`agent`))`.
const ALLOWED: &[(Method, &str, Bound)] = &[
    (Method::GET, "/api/v1/tasks/{id}", Bound::Task),
    (Method::GET, "/api/v1/tasks/{id}/context", Bound::Task),
    (Method::GET, "/api/v1/tasks/{id}/git", Bound::Task),
    (Method::POST, "/api/v1/tasks/{id}/start", Bound::Task),
    (Method::POST, "/api/v1/tasks/{id}/complete", Bound::Task),
    (Method::POST, "/api/v1/tasks/{id}/fail", Bound::Task),
    (
        Method::POST,
        "/api/v1/tasks/{id}/claim-credentials",
        Bound::Task,
    ),
    (Method::GET, "/api/v1/tasks/{id}/handoffs", Bound::Task),
    (Method::POST, "/api/v1/tasks/{id}/handoffs", Bound::Task),
    (Method::POST, "/api/v1/tasks/{id}/artifacts", Bound::Task),
    (Method::POST, "/api/v1/agents/{id}/heartbeat", Bound::Agent),
    (Method::POST, INGEST, Bound::Body),
];

const INGEST: &str = "/api/v1/logs/ingest";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Bound {
    /// The `{id}` path parameter must be the token's task.
    Task,
    /// The `{id}` path parameter must be the task's assignee agent.
    Agent,
    /// Every log entry of the body must name the token's task.
    Body,
}

fn refused(task_id: Uuid) -> Error {
    Error::forbidden(format!(
        "a task token only reaches the routes of its own task ({task_id})"
    ))
}

/// Checks the route (before the body is read).
pub(crate) fn check_route(
    method: &Method,
    path: &str,
    params: &[(String, String)],
    task_id: Uuid,
    agent_id: Option<Uuid>,
) -> Result<(), Error> {
    let bound = ALLOWED
        .iter()
        .find(|(m, p, _)| {
            *p == path && (m == method || (*m == Method::GET && method == Method::HEAD))
        })
        .map(|(_, _, bound)| *bound)
        .ok_or_else(|| refused(task_id))?;
    let id = params
        .iter()
        .find(|(k, _)| k == "id")
        .and_then(|(_, v)| Uuid::parse_str(v).ok());
    let ok = match bound {
        Bound::Task => id == Some(task_id),
        Bound::Agent => id.is_some() && id == agent_id,
        Bound::Body => true,
    };
    if ok { Ok(()) } else { Err(refused(task_id)) }
}

/// Checks the body of `POST /logs/ingest`: every entry must carry the
/// token's `task_id`. A body that is not JSON is left to the handler (which
/// answers 422).
pub(crate) fn check_body(path: &str, body: &[u8], task_id: Uuid) -> Result<(), Error> {
    if path != INGEST {
        return Ok(());
    }
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return Ok(());
    };
    let Some(entries) = value.get("entries").and_then(|e| e.as_array()) else {
        return Ok(());
    };
    let wanted = task_id.to_string();
    let all_ours = entries.iter().all(|entry| {
        entry
            .get("task_id")
            .and_then(|t| t.as_str())
            .and_then(|t| Uuid::parse_str(t).ok())
            .is_some_and(|t| t.to_string() == wanted)
    });
    if all_ours {
        Ok(())
    } else {
        Err(Error::forbidden(format!(
            "a task token only ingests log entries whose task_id is its own task ({task_id})"
        )))
    }
}
