//! Tasks: the executable units agents and workers claim.

use super::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use uuid::Uuid;

/// The states of a task. Terminal: `completed`, `cancelled`;
/// `failed` is terminal unless retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    Pending,
    Claimed,
    InProgress,
    OutputPendingAssessment,
    Escalated,
    Completed,
    Failed,
    Cancelled,
}

impl TaskState {
    pub const ALL: [TaskState; 8] = [
        Self::Pending,
        Self::Claimed,
        Self::InProgress,
        Self::OutputPendingAssessment,
        Self::Escalated,
        Self::Completed,
        Self::Failed,
        Self::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Claimed => "claimed",
            Self::InProgress => "in_progress",
            Self::OutputPendingAssessment => "output_pending_assessment",
            Self::Escalated => "escalated",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// Held by an agent: claimed or in progress.
    pub fn is_held(self) -> bool {
        matches!(self, Self::Claimed | Self::InProgress)
    }

    /// Nothing more will happen without an operator (completed, cancelled, failed).
    pub fn is_done(self) -> bool {
        matches!(self, Self::Completed | Self::Cancelled | Self::Failed)
    }
}

impl fmt::Display for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Scheduler priority. Claim order is `critical > high > normal > low`;
/// any other value is rejected at create with 422.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    Critical,
    High,
    #[default]
    Normal,
    Low,
}

impl Priority {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Critical => "critical",
            Self::High => "high",
            Self::Normal => "normal",
            Self::Low => "low",
        }
    }

    /// The rank the claim queue orders by (higher first).
    pub fn rank(self) -> i32 {
        match self {
            Self::Critical => 3,
            Self::High => 2,
            Self::Normal => 1,
            Self::Low => 0,
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Self::Critical, Self::High, Self::Normal, Self::Low]
            .into_iter()
            .find(|p| p.as_str() == text)
    }
}

/// Control-plane classification of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum TaskKind {
    #[default]
    Delivery,
    Assessment,
    Approval,
    Orchestrator,
}

impl TaskKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Delivery => "delivery",
            Self::Assessment => "assessment",
            Self::Approval => "approval",
            Self::Orchestrator => "orchestrator",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Delivery,
            Self::Assessment,
            Self::Approval,
            Self::Orchestrator,
        ]
        .into_iter()
        .find(|p| p.as_str() == text)
    }
}

/// Where a task runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ExecutionBackend {
    #[default]
    RuntimeOnly,
    RuntimePlusTask,
}

impl ExecutionBackend {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RuntimeOnly => "runtime_only",
            Self::RuntimePlusTask => "runtime_plus_task",
        }
    }
}

/// The task `type` words (a closed set, as in other implementations of the
/// contract); any other is `422`. A `String` on the wire types so requests
/// are built from plain words.
pub const TASK_TYPES: &[&str] = &[
    "analysis",
    "code",
    "assessment",
    "test",
    "docs",
    "orchestration",
    "custom",
];

/// `POST /tasks`. `type` is one of [`TASK_TYPES`].
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateTask {
    pub title: String,
    #[serde(rename = "type")]
    pub task_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_kind: Option<TaskKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<Priority>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_item_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Preferred specialist role: the task then requires the routing tag `role:<role>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_backend: Option<ExecutionBackend>,
    /// 1 to 240, default 180.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_minutes: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_cap_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_max_retries: Option<i64>,
    /// When true, a failure with retries left goes back to pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_retry: Option<bool>,
    /// 0 to 10, default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// Beyond the contract: only this agent may claim the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_agent_id: Option<Uuid>,
    /// Beyond the contract: only this worker's agents may claim the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_worker_id: Option<Uuid>,
    /// The execution environment the task runs in (not a blocked one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_environment_id: Option<Uuid>,
    /// How failures are retried (not beside `auto_retry` / `max_retries`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_policy: Option<super::RetryPolicy>,
    /// Not claimable before this time (not beside `delay_seconds`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_at: Option<Timestamp>,
    /// 0 to 31,536,000: `run_at` = now + this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_seconds: Option<i64>,
    /// Still pending then: cancelled with reason `expired` (not beside `ttl_seconds`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<Timestamp>,
    /// 1 to 31,536,000: `expires_at` = now + this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds: Option<i64>,
    /// 5 to 3,600: the holder's lease; released when no claim, start or
    /// heartbeat came for this long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_timeout_seconds: Option<i64>,
    /// 1 to 200 characters: while a task of the tenant with this key is not
    /// in a terminal state, a create with it answers that task (200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedupe_key: Option<String>,
    /// 1 to 200 characters: at most the key's limit (default 1) of the
    /// tenant's tasks with this key are held at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency_key: Option<String>,
    /// 1 to 200 characters, naming a rate limit that is set: at most its
    /// `limit` tasks with this key are claimed in any window of its period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit_key: Option<String>,
}

/// The latest structured handoff of a task.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Handoff {
    pub id: Uuid,
    pub task_id: Uuid,
    pub sequence: i64,
    pub agent_id: Option<Uuid>,
    pub summary: String,
    #[serde(default)]
    pub changes: Option<Value>,
    #[serde(default)]
    pub decisions: Option<Value>,
    #[serde(default)]
    pub remaining_items: Option<Value>,
    #[serde(default)]
    pub blockers: Option<Value>,
    #[serde(default)]
    pub artifacts: Option<Value>,
    pub created_at: Timestamp,
}

/// `POST /tasks/:id/handoffs`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateHandoff {
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decisions: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining_items: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blockers: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// The task read model.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Task {
    pub id: Uuid,
    pub title: String,
    #[serde(rename = "type")]
    pub task_type: String,
    pub task_kind: TaskKind,
    pub is_orchestrator_task: bool,
    pub description: Option<String>,
    pub priority: Priority,
    pub state: TaskState,
    pub workflow_id: Option<Uuid>,
    pub work_item_id: Option<Uuid>,
    pub workspace_id: Option<Uuid>,
    pub activation_id: Option<Uuid>,
    pub stage_name: Option<String>,
    pub role: Option<String>,
    /// Tags a claimer must carry (`role:<role>`, `orchestrator`).
    pub required_tags: Vec<String>,
    pub execution_backend: ExecutionBackend,
    pub used_task_sandbox: bool,
    pub execution_environment: Option<Value>,
    pub assigned_agent_id: Option<Uuid>,
    pub assigned_worker_id: Option<Uuid>,
    pub preferred_agent_id: Option<Uuid>,
    pub preferred_worker_id: Option<Uuid>,
    pub input: Value,
    pub context: Value,
    pub output: Option<Value>,
    pub error: Option<Value>,
    pub metrics: Option<Value>,
    pub git_info: Option<Value>,
    pub verification: Option<Value>,
    pub timeout_minutes: i64,
    pub token_budget: Option<f64>,
    pub cost_cap_usd: Option<f64>,
    pub max_iterations: Option<i64>,
    pub llm_max_retries: Option<i64>,
    pub auto_retry: bool,
    pub max_retries: i64,
    pub retry_count: i64,
    pub metadata: Value,
    /// Credential handles for the runtime; empty until LLM
    /// settings or MCP servers exist.
    pub credentials: Vec<Value>,
    pub claimed_at: Option<Timestamp>,
    pub started_at: Option<Timestamp>,
    /// When the task ended: completed, failed (with no retry left) or
    /// cancelled; null while it is open. Durations end here.
    pub completed_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// The retry policy with its defaults filled in; null without one.
    pub retry_policy: Option<super::RetryPolicy>,
    /// 1 for the first run, +1 at each retry.
    pub attempt: i64,
    /// Not claimable before this time; null when claimable at once.
    pub run_at: Option<Timestamp>,
    /// The holder's last reported progress.
    pub progress: Option<Value>,
    pub progress_at: Option<Timestamp>,
    /// Cancellation was asked of the holder.
    pub cancel_requested: bool,
    /// Cancelled (reason `expired`) if still pending then.
    pub expires_at: Option<Timestamp>,
    pub heartbeat_timeout_seconds: Option<i64>,
    /// When the holder's lease runs out (held tasks with a heartbeat timeout).
    pub lease_expires_at: Option<Timestamp>,
    pub dedupe_key: Option<String>,
    pub concurrency_key: Option<String>,
    pub rate_limit_key: Option<String>,
    /// When a limit first held the task back (null when none did).
    pub limit_waiting_at: Option<Timestamp>,
    /// Only on the single-task read: the latest handoff, or null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_handoff: Option<Option<Handoff>>,
}

/// `GET /tasks` filters.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct TaskFilter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<TaskState>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_item_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assigned_agent_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_backend: Option<ExecutionBackend>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_orchestrator_task: Option<bool>,
    /// `true`: only delayed tasks (`pending` with `run_at` still ahead, not
    /// claimable yet); `false`: every task but those.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delayed: Option<bool>,
    /// Only tasks whose id starts with these 4 to 32 hex digits (no
    /// dashes): one request finds what a typed id prefix names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_prefix: Option<String>,
    /// Only tasks whose id ends with these 4 to 32 hex digits: the short
    /// id listings show is the last 8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_suffix: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_page: Option<u32>,
}

/// `POST /tasks/claim`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ClaimTask {
    pub agent_id: Uuid,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<Uuid>,
    /// Added to the agent's registered tags for this claim (`orchestrator`
    /// only counts for orchestrator or hybrid agents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing_tags: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
    /// Fencing: the attempt the caller holds (else 409 `LEASE_LOST`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// `POST /tasks/:id/complete`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CompleteTask {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_info: Option<Value>,
    /// `verification.passed == false` sends the task to `output_pending_assessment`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
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
    pub file_name: String,
    pub content_base64: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Only for credentials not bound to an agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// The failure packet.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct TaskError {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recoverable: Option<bool>,
}

/// `POST /tasks/:id/fail`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FailTask {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<TaskError>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_agent_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_worker_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<Uuid>,
}

/// `POST /tasks/:id/claim-credentials`: at least one handle.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ClaimCredentials {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_api_key_claim_handle: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_extra_headers_claim_handle: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_claim_handles: Option<Vec<String>>,
}

/// `GET /tasks/:id/git`, derived from the `git_info` given at completion.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TaskGit {
    pub linked_prs: Value,
    pub branches: Value,
    pub ci_status: Value,
    pub merge_history: Value,
    pub raw: Value,
}

/// `GET /tasks/:id/context`: what an agent needs to work on the task.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TaskContext {
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
}

/// `POST /tasks/:id/token`: who asks (bound credentials act as their owner;
/// unbound ones name the assignee).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct IssueTaskToken {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<Uuid>,
}

/// A credential limited to one task's routes while its assignment lasts
/// (`Authorization: Bearer <token>`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TaskToken {
    pub token: String,
    pub task_id: Uuid,
    pub agent_id: Uuid,
    pub expires_at: Timestamp,
}
