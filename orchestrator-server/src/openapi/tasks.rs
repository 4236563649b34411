//! Tasks: each route's input and output types.

use super::describe::*;
use http::Method as M;
use http::StatusCode;
use orchestrator_core::api::*;
use orchestrator_core::api::workspaces::Artifact;

/// Tasks.
pub(super) fn docs() -> Vec<Doc> {
    vec![
        op(M::POST, "/api/v1/tasks", "Create a task", created::<Task>()).body::<CreateTask>(),
        op(M::POST, "/api/v1/tasks/create-batch", "Create several tasks, each on its own", ok::<Vec<CreatedItem>>()).body::<CreateBatch>(),
        op(M::GET, "/api/v1/tasks", "List tasks", page::<Task>()).query::<TaskFilter>(),
        op(M::POST, "/api/v1/tasks/claim", "Claim a ready task", ok::<Task>()).body::<ClaimTask>().or_no_content(),
        op(M::GET, "/api/v1/tasks/{id}", "Get a task", ok::<Task>()),
        op(M::GET, "/api/v1/tasks/{id}/context", "A task's context packet", ok::<TaskContext>()).query::<TaskContextQuery>(),
        op(M::GET, "/api/v1/tasks/{id}/git", "A task's git coordinates", ok::<TaskGit>()),
        op(M::GET, "/api/v1/tasks/{id}/stream", "Follow a streaming task's events", events_sse())
            .param("after", CURSOR_AFTER, "Resume after this event id")
            .plain_error(StatusCode::CONFLICT, r#"{"type": "object", "required": ["error"], "properties": {"error": {"const": "task_not_streaming"}}}"#),
        op(M::POST, "/api/v1/tasks/{id}/claim-credentials", "Resolve the credentials of a claimed task", ok::<ClaimedCredentials>()).body::<ClaimCredentials>(),
        op(M::POST, "/api/v1/tasks/{id}/token", "A token limited to this task, for the assignee's command", created::<TaskToken>()).body::<IssueTaskToken>(),
        op(M::POST, "/api/v1/tasks/{id}/start", "Start a claimed task", ok::<Task>()).body::<StartTask>(),
        op(M::POST, "/api/v1/tasks/{id}/complete", "Complete a task", ok::<Task>()).body::<CompleteTask>(),
        op(M::POST, "/api/v1/tasks/complete-batch", "Complete several tasks, each on its own", ok::<Vec<CompletedItem>>()).body::<CompleteBatch>(),
        op(M::POST, "/api/v1/tasks/{id}/fail", "Fail a task", ok::<Task>()).body::<FailTask>(),
        op(M::POST, "/api/v1/tasks/{id}/heartbeat", "Renew the holder's lease and report progress", ok::<TaskHeartbeatAck>()).body::<TaskHeartbeat>(),
        op(M::POST, "/api/v1/tasks/{id}/reschedule", "Move a pending task's run_at", ok::<Task>()).body::<RescheduleTask>(),
        op(M::POST, "/api/v1/tasks/{id}/retry", "Retry a task", ok::<Task>()).body::<TaskAction>(),
        op(M::POST, "/api/v1/tasks/{id}/request-changes", "Send a task back with requested changes", ok::<Task>()).body::<TaskAction>(),
        op(M::POST, "/api/v1/tasks/{id}/reassign", "Reassign a task", ok::<Task>()).body::<TaskAction>(),
        op(M::POST, "/api/v1/tasks/{id}/skip", "Skip a task", ok::<Task>()).body::<TaskAction>(),
        op(M::POST, "/api/v1/tasks/{id}/escalate", "Escalate a task", ok::<Task>()).body::<TaskAction>(),
        op(M::POST, "/api/v1/tasks/{id}/resolve-escalation", "Resolve a task's escalation", ok::<Task>()).body::<TaskAction>(),
        op(M::POST, "/api/v1/tasks/{id}/approve-output", "Approve a task's output", ok::<Task>()).body::<TaskAction>(),
        op(M::POST, "/api/v1/tasks/{id}/cancel", "Cancel a task", ok::<Task>()).body::<TaskAction>(),
        op(M::GET, "/api/v1/tasks/{id}/handoffs", "A task's handoffs", ok::<Vec<Handoff>>()),
        op(M::POST, "/api/v1/tasks/{id}/handoffs", "Record a handoff", created::<Handoff>()).body::<CreateHandoff>(),
        op(M::POST, "/api/v1/tasks/{id}/artifacts", "Attach an artifact to a task (base64 content in JSON)", created::<Artifact>()).body::<TaskArtifact>(),
    ]
}
