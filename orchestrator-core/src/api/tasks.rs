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
    /// Waiting to be claimed (or for its `run_at`).
    Pending,
    /// Claimed by an agent, not started yet.
    Claimed,
    /// Started by the agent holding it.
    InProgress,
    /// Completed with a failed verification; waits for an operator to approve
    /// or ask for changes.
    OutputPendingAssessment,
    /// Handed to a human; waits for the escalation to be resolved.
    Escalated,
    /// Done (terminal).
    Completed,
    /// Failed with no retry left (terminal unless retried).
    Failed,
    /// Cancelled (terminal).
    Cancelled,
}

impl TaskState {
    /// Every state, in lifecycle order.
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

    /// The wire name (`in_progress`, ...).
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

    /// The state named `text`, or `None` for a name that is not one.
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
    /// Claimed before anything else.
    Critical,
    /// Claimed before `normal` and `low`.
    High,
    /// The default.
    #[default]
    Normal,
    /// Claimed last.
    Low,
}

impl Priority {
    /// The wire name.
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

    /// The priority named `text`, or `None` for a name that is not one.
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
    /// Delivers work (the default).
    #[default]
    Delivery,
    /// Assesses another task's output.
    Assessment,
    /// Asks for an approval.
    Approval,
    /// Plans and steers a workflow.
    Orchestrator,
}

impl TaskKind {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Delivery => "delivery",
            Self::Assessment => "assessment",
            Self::Approval => "approval",
            Self::Orchestrator => "orchestrator",
        }
    }

    /// The kind named `text`, or `None` for a name that is not one.
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
    /// In the agent runtime alone (the default).
    #[default]
    RuntimeOnly,
    /// In the agent runtime plus a task sandbox.
    RuntimePlusTask,
}

impl ExecutionBackend {
    /// The wire name.
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
    /// The task's title.
    pub title: String,
    /// What kind of work (`type` on the wire): one of [`TASK_TYPES`].
    #[serde(rename = "type")]
    pub task_type: String,
    /// The control-plane classification (default `delivery`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_kind: Option<TaskKind>,
    /// What to do, in words; the ACP prompt when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Claim order among pending tasks (default `normal`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<Priority>,
    /// The workflow the task belongs to, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    /// The work item the task works on, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_item_id: Option<Uuid>,
    /// The workspace the task belongs to (the workflow's when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<Uuid>,
    /// The workflow stage the task belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage_name: Option<String>,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Preferred specialist role: the task then requires the routing tag `role:<role>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Input data for the agent that claims the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// Context for the agent alongside `input`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Value>,
    /// Where the task runs (default `runtime_only`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_backend: Option<ExecutionBackend>,
    /// 1 to 240, default 180.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_minutes: Option<i64>,
    /// The most tokens the agent should spend on the task, recorded for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<f64>,
    /// The most the task should cost, in US dollars, recorded for the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_cap_usd: Option<f64>,
    /// The most agent loop iterations the task should take, recorded for the
    /// agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<i64>,
    /// How often the agent should retry a failed LLM call, recorded for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_max_retries: Option<i64>,
    /// When true, a failure with retries left goes back to pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_retry: Option<bool>,
    /// 0 to 10, default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<i64>,
    /// Free-form caller metadata kept on the task.
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
    /// The handoff's id.
    pub id: Uuid,
    /// The task handed off.
    pub task_id: Uuid,
    /// The handoff's number on the task, from 1.
    pub sequence: i64,
    /// The agent that wrote it, if known.
    pub agent_id: Option<Uuid>,
    /// What was done, in words.
    pub summary: String,
    /// What changed (free form).
    #[serde(default)]
    pub changes: Option<Value>,
    /// Decisions taken (free form).
    #[serde(default)]
    pub decisions: Option<Value>,
    /// What is left to do (free form).
    #[serde(default)]
    pub remaining_items: Option<Value>,
    /// What stands in the way (free form).
    #[serde(default)]
    pub blockers: Option<Value>,
    /// What was produced (free form).
    #[serde(default)]
    pub artifacts: Option<Value>,
    /// When it was written.
    pub created_at: Timestamp,
}

/// `POST /tasks/:id/handoffs`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateHandoff {
    /// What was done, in words (required).
    pub summary: String,
    /// What changed (free form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<Value>,
    /// Decisions taken (free form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decisions: Option<Value>,
    /// What is left to do (free form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining_items: Option<Value>,
    /// What stands in the way (free form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blockers: Option<Value>,
    /// What was produced (free form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<Value>,
    /// The agent writing it, for credentials not bound to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// The task read model.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Task {
    /// The task's id, used in `/tasks/:id` routes.
    pub id: Uuid,
    /// The task's title.
    pub title: String,
    /// What kind of work (`type` on the wire): one of [`TASK_TYPES`].
    #[serde(rename = "type")]
    pub task_type: String,
    /// The control-plane classification.
    pub task_kind: TaskKind,
    /// Whether the task plans its workflow (claimed only by orchestrator or
    /// hybrid agents).
    pub is_orchestrator_task: bool,
    /// What to do, in words.
    pub description: Option<String>,
    /// Claim order among pending tasks.
    pub priority: Priority,
    /// Where the task stands.
    pub state: TaskState,
    /// The workflow the task belongs to, if any.
    pub workflow_id: Option<Uuid>,
    /// The work item the task works on, if any.
    pub work_item_id: Option<Uuid>,
    /// The workspace the task belongs to, if any.
    pub workspace_id: Option<Uuid>,
    /// The workflow activation an orchestrator task processes, if any.
    pub activation_id: Option<Uuid>,
    /// The workflow stage the task belongs to, if any.
    pub stage_name: Option<String>,
    /// The role whose agents may claim the task, if any.
    pub role: Option<String>,
    /// Tags a claimer must carry (`role:<role>`, `orchestrator`).
    pub required_tags: Vec<String>,
    /// Where the task runs.
    pub execution_backend: ExecutionBackend,
    /// Whether the task ran (or runs) in a task sandbox: `runtime_plus_task`
    /// and claimed.
    pub used_task_sandbox: bool,
    /// The execution environment the task runs in (`id, name, image, cpu,
    /// memory, pull_policy, compatibility_status, agent_hint`); null without
    /// one.
    pub execution_environment: Option<Value>,
    /// The agent holding or last holding the task, if any.
    pub assigned_agent_id: Option<Uuid>,
    /// The worker of that agent, if any.
    pub assigned_worker_id: Option<Uuid>,
    /// Only this agent may claim the task, if set.
    pub preferred_agent_id: Option<Uuid>,
    /// Only this worker's agents may claim the task, if set.
    pub preferred_worker_id: Option<Uuid>,
    /// Input data for the agent.
    pub input: Value,
    /// Context for the agent (merged with workflow and workspace data when
    /// claimed with `include_context`).
    pub context: Value,
    /// What the agent reported at completion, if it completed.
    pub output: Option<Value>,
    /// The failure packet (`category`, `message`, `recoverable`) of a failed
    /// attempt, if any.
    pub error: Option<Value>,
    /// The metrics the agent reported at completion, if any.
    pub metrics: Option<Value>,
    /// The git information the agent reported at completion (see `GET
    /// /tasks/:id/git`).
    pub git_info: Option<Value>,
    /// The verification the agent reported at completion, if any.
    pub verification: Option<Value>,
    /// How long the task may be held before it fails with category `timeout`.
    pub timeout_minutes: i64,
    /// The token budget recorded for the agent, if any.
    pub token_budget: Option<f64>,
    /// The cost cap recorded for the agent, in US dollars, if any.
    pub cost_cap_usd: Option<f64>,
    /// The iteration limit recorded for the agent, if any.
    pub max_iterations: Option<i64>,
    /// The LLM retry limit recorded for the agent, if any.
    pub llm_max_retries: Option<i64>,
    /// Whether a failure with retries left goes back to pending.
    pub auto_retry: bool,
    /// How many retries the task allows (without a retry policy).
    pub max_retries: i64,
    /// How many times the task went back to pending after a failure or a lost
    /// agent.
    pub retry_count: i64,
    /// Free-form caller metadata.
    pub metadata: Value,
    /// Credential handles for the runtime; empty until LLM
    /// settings or MCP servers exist.
    pub credentials: Vec<Value>,
    /// When the task was last claimed; null before.
    pub claimed_at: Option<Timestamp>,
    /// When the task was last started; null before.
    pub started_at: Option<Timestamp>,
    /// When the task ended: completed, failed (with no retry left) or
    /// cancelled; null while it is open. Durations end here.
    pub completed_at: Option<Timestamp>,
    /// When the task was created.
    pub created_at: Timestamp,
    /// When the task last changed.
    pub updated_at: Timestamp,
    /// The retry policy with its defaults filled in; null without one.
    pub retry_policy: Option<super::RetryPolicy>,
    /// 1 for the first run, +1 at each retry.
    pub attempt: i64,
    /// Not claimable before this time; null when claimable at once.
    pub run_at: Option<Timestamp>,
    /// The holder's last reported progress.
    pub progress: Option<Value>,
    /// When `progress` was last reported.
    pub progress_at: Option<Timestamp>,
    /// Cancellation was asked of the holder.
    pub cancel_requested: bool,
    /// Cancelled (reason `expired`) if still pending then.
    pub expires_at: Option<Timestamp>,
    /// The holder's lease, in seconds; null without one.
    pub heartbeat_timeout_seconds: Option<i64>,
    /// When the holder's lease runs out (held tasks with a heartbeat timeout).
    pub lease_expires_at: Option<Timestamp>,
    /// The key that made creates with it answer this task while it is open.
    pub dedupe_key: Option<String>,
    /// The concurrency limit key the task counts against, if any.
    pub concurrency_key: Option<String>,
    /// The rate limit key the task's claims count against, if any.
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
    /// Only tasks in this state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<TaskState>,
    /// Only tasks of this workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<Uuid>,
    /// Only tasks of this workflow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    /// Only tasks of this work item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_item_id: Option<Uuid>,
    /// Only tasks assigned to this agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assigned_agent_id: Option<Uuid>,
    /// Only tasks of this workflow activation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_id: Option<Uuid>,
    /// Only tasks of this execution backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_backend: Option<ExecutionBackend>,
    /// Only orchestrator tasks (`true`) or only others (`false`).
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
    /// The page to answer, from 1 (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// Tasks per page (default 20, at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_page: Option<u32>,
}
