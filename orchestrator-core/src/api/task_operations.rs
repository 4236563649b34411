//! The bodies of the task lifecycle's operations (claim, start, complete,
//! fail, the operator actions) and what a claimed task carries with it
//! (credentials, git access, context, task tokens); the task record itself
//! and its filters stay in [`super::tasks`].

use super::Timestamp;
use super::tasks::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// `POST /tasks/claim`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ClaimTask {
    /// The agent claiming; the task is assigned to it.
    pub agent_id: Uuid,
    /// The worker hosting the agent, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<Uuid>,
    /// Added to the agent's registered tags for this claim (`orchestrator`
    /// only counts for orchestrator or hybrid agents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing_tags: Option<Vec<String>>,
    /// Only tasks of this workflow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    /// Merge `workflow`, `workspace`, `documents` (workspace files) and
    /// `attachments` (the workflow's input files) into the task's `context`.
    #[serde(default)]
    pub include_context: bool,
    /// Only tasks of this execution environment (which the claimer may then
    /// run even without an `env:` tag for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_environment_id: Option<Uuid>,
    /// 0 to 30 (default 0): when nothing is claimable, hold the request
    /// this long for a task to become claimable (a long poll).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_seconds: Option<i64>,
}

/// Who acts on a task when the credential is not bound to an agent or worker
/// (an admin key, an unbound agent key). Bound keys act as their owner.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct StartTask {
    /// The agent starting the task (the assignee), for credentials not bound to
    /// one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
    /// Fencing: the attempt the caller holds (else 409 `LEASE_LOST`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<i64>,
    /// The worker acting, for credentials not bound to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<Uuid>,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// `POST /tasks/:id/complete`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CompleteTask {
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// What the task produced (any JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// Measurements of the run (tokens, cost, time), kept as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Value>,
    /// Repository facts (`linked_prs`, `branches`, `ci_status`,
    /// `merge_history`), read back by `GET /tasks/:id/git`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_info: Option<Value>,
    /// `verification.passed == false` sends the task to `output_pending_assessment`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<Value>,
    /// The agent completing the task (the assignee), for credentials not bound
    /// to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
    /// The worker acting, for credentials not bound to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<Uuid>,
    /// Artifacts to store with the task (each as `POST /tasks/:id/artifacts` takes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<Vec<TaskArtifact>>,
    /// Fencing: the attempt the caller holds (else 409 `LEASE_LOST`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<i64>,
}

/// `POST /tasks/:id/artifacts` (and each of `artifacts` in complete): a file
/// the task produced, stored as a workspace artifact linked to the task, its
/// workflow, work item, stage and role.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct TaskArtifact {
    /// The file's name.
    pub file_name: String,
    /// The bytes, standard base64; at most 10 MiB decoded.
    pub content_base64: String,
    /// The media type; guessed from the file name's extension when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// What the artifact is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Stable logical key; derived from the file name when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Only for credentials not bound to an agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// The failure packet.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct TaskError {
    /// What kind of failure (`timeout`, `agent_lost`, a runtime's own word); a
    /// retry policy's `non_retryable_categories` match it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// What went wrong, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Whether trying again may help.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recoverable: Option<bool>,
}

/// `POST /tasks/:id/fail`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FailTask {
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// What went wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<TaskError>,
    /// The agent failing the task, for credentials not bound to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
    /// The worker acting, for credentials not bound to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<Uuid>,
    /// 0 to 86,400: the retry waits this long instead of the policy's delay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<i64>,
    /// Fencing: the attempt the caller holds (else 409 `LEASE_LOST`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<i64>,
}

/// Body of the operator operations: `reason` is required by reassign and
/// escalate, `feedback` by request-changes, `instructions` by
/// resolve-escalation; the preferred ids only by reassign.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct TaskAction {
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Why; required by reassign and escalate, recorded with the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What to change; required by request-changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// How to go on; required by resolve-escalation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Reassign: only this agent may claim the task next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_agent_id: Option<Uuid>,
    /// Reassign: only this worker's agents may claim the task next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_worker_id: Option<Uuid>,
    /// The agent acting, for credentials not bound to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
    /// The worker acting, for credentials not bound to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<Uuid>,
}

/// `POST /tasks/:id/claim-credentials`: at least one handle.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ClaimCredentials {
    /// The `llm_api_key` handle of the claim answer's `credentials`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_api_key_claim_handle: Option<String>,
    /// The `llm_extra_headers` handle of the claim answer's `credentials`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_extra_headers_claim_handle: Option<String>,
    /// The `mcp_server` handles of the claim answer's `credentials`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_claim_handles: Option<Vec<String>>,
}

/// `GET /tasks/:id/git`, derived from the `git_info` given at completion.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TaskGit {
    /// Pull requests the task linked (`[]` when none).
    pub linked_prs: Value,
    /// Branches the task used (`[]` when none).
    pub branches: Value,
    /// The CI status reported; null when none.
    pub ci_status: Value,
    /// Merges reported (`[]` when none).
    pub merge_history: Value,
    /// The `git_info` as given (`{}` when none).
    pub raw: Value,
}

/// `GET /tasks/:id/context`: what an agent needs to work on the task.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TaskContext {
    /// The task.
    pub task: Task,
    /// The task's workflow record with its `workflow_stages`; null for a
    /// task outside a workflow.
    pub workflow: Option<Value>,
    /// The workspace packet (name, repository, memory); null without one.
    pub workspace: Option<Value>,
    /// The workspace's files (metadata and download URLs).
    pub documents: Vec<Value>,
    /// The workflow's input files (name, content type, base64 content).
    pub attachments: Vec<Value>,
    /// With `?agent_id=`: the agent the packet was prepared for (its
    /// routing tags, tools and profile); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<super::Agent>,
}

/// `GET /tasks/:id/context` query. `agent_id` asks for the packet as that
/// agent sees it: the agent must exist in the tenant (404), and a task held
/// by another agent is refused (409), so a runtime never reads a packet
/// meant for someone else.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct TaskContextQuery {
    /// The agent the packet is for; it must be the holder when the task is
    /// held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
}

/// `POST /tasks/:id/token`: who asks (bound credentials act as their owner;
/// unbound ones name the assignee).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct IssueTaskToken {
    /// The assignee asking, for credentials not bound to an agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
    /// The assignee's worker asking, for credentials not bound to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<Uuid>,
}

/// A credential limited to one task's routes while its assignment lasts
/// (`Authorization: Bearer <token>`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TaskToken {
    /// The credential, sent as `Authorization: Bearer`.
    pub token: String,
    /// The one task the token reaches.
    pub task_id: Uuid,
    /// The assignee the token acts as.
    pub agent_id: Uuid,
    /// When the token expires (the task's timeout plus 15 minutes); it stops
    /// earlier when the assignment ends.
    pub expires_at: Timestamp,
}
