//! Agents and workers: who claims and executes tasks.

use super::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// What kinds of task an agent takes. Orchestrator and hybrid agents carry
/// the `orchestrator` routing tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ExecutionMode {
    /// Takes ordinary work tasks (the default).
    #[default]
    Specialist,
    /// Takes orchestrator tasks, the ones that plan a workflow.
    Orchestrator,
    /// Takes both work tasks and orchestrator tasks.
    Hybrid,
}

impl ExecutionMode {
    /// The wire name, as stored and as sent.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Specialist => "specialist",
            Self::Orchestrator => "orchestrator",
            Self::Hybrid => "hybrid",
        }
    }

    /// The mode named `text`, or `None` for a name that is not one.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Specialist, Self::Orchestrator, Self::Hybrid]
            .into_iter()
            .find(|m| m.as_str() == text)
    }

    /// Whether the agent gets the `orchestrator` routing tag (orchestrator and
    /// hybrid agents).
    pub fn takes_orchestrator_tasks(self) -> bool {
        !matches!(self, Self::Specialist)
    }
}

/// How an agent talks to the platform: the REST claim loop, or ACP sessions
/// (`/acp/*` routes accept only `acp` agents).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum AgentProtocol {
    /// The HTTP claim loop (the default).
    #[default]
    Rest,
    /// Agent Client Protocol: the agent works through ACP sessions.
    Acp,
}

impl AgentProtocol {
    /// The wire name, as stored and as sent.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rest => "rest",
            Self::Acp => "acp",
        }
    }
}

/// Tool names an agent needs and can use.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AgentTools {
    /// Tools the agent cannot work without.
    #[serde(default)]
    pub required: Vec<String>,
    /// Tools the agent uses when they are there.
    #[serde(default)]
    pub optional: Vec<String>,
}

/// `GET /agents` filters: what a client resolving a typed agent (a name,
/// an id prefix, a short id) asks for instead of reading every agent.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AgentFilter {
    /// Only agents whose id starts with these 4 to 32 hex digits (no
    /// dashes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_prefix: Option<String>,
    /// Only agents whose id ends with these 4 to 32 hex digits: the short
    /// id listings show is the last 8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_suffix: Option<String>,
    /// Only agents with this name, compared case-insensitively.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The page (from 1); read with the other paging parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// Rows per page; read with the other paging parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_page: Option<u32>,
}

/// `POST /agents/register`. Heartbeat interval 5 to 3600 s, default 60.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RegisterAgent {
    /// The agent's display name.
    pub name: String,
    /// `rest` (default) or `acp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<AgentProtocol>,
    /// Tags matched against a task's `required_tags` at claim time; the server
    /// adds `orchestrator` for orchestrator and hybrid agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing_tags: Option<Vec<String>>,
    /// What kinds of task the agent takes (default `specialist`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_mode: Option<ExecutionMode>,
    /// Issue an agent-scope key bound to the new agent, shown once in the
    /// answer's `api_key` (default true; `false` registers without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue_api_key: Option<bool>,
    /// How often the agent promises a heartbeat, 5 to 3600 seconds (default
    /// 60); two missed intervals make it `inactive`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_interval_seconds: Option<i64>,
    /// The tools the agent needs and can use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<AgentTools>,
    /// The worker hosting the agent, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<Uuid>,
    /// Free-form caller metadata kept on the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// The agent's ACP declaration (for `protocol: acp`), copied into its
    /// sessions' metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acp: Option<Value>,
    /// Free-form profile of the agent (what it is good at), kept as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<Value>,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// An agent record. `status` is `active`, `busy` (active and holding a
/// claimed or in-progress task) or `inactive` (missed 2 heartbeats).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Agent {
    /// The agent's id: `agent_id` in claims and task routes.
    pub id: Uuid,
    /// The agent's display name.
    pub name: String,
    /// `rest` or `acp`.
    pub protocol: AgentProtocol,
    /// The tags the agent claims with (its registered tags; `orchestrator`
    /// included for orchestrator and hybrid agents).
    pub routing_tags: Vec<String>,
    /// What kinds of task the agent takes.
    pub execution_mode: ExecutionMode,
    /// `active`, `busy` (holding a claimed or in-progress task) or `inactive`
    /// (missed 2 heartbeats).
    pub status: String,
    /// The worker hosting the agent, if any.
    pub worker_id: Option<Uuid>,
    /// How often the agent promised a heartbeat, in seconds.
    pub heartbeat_interval_seconds: i64,
    /// The tools the agent needs and can use.
    pub tools: AgentTools,
    /// Free-form caller metadata.
    pub metadata: Value,
    /// The agent's ACP declaration, if it registered one.
    pub acp: Option<Value>,
    /// The agent's profile, if it registered one.
    pub profile: Option<Value>,
    /// The task the agent holds (claimed or in progress), if any.
    pub current_task_id: Option<Uuid>,
    /// When the last heartbeat arrived (registration counts as one).
    pub last_heartbeat_at: Timestamp,
    /// When the agent registered.
    pub created_at: Timestamp,
    /// When the agent last changed.
    pub updated_at: Timestamp,
    /// Only in the registration answer, when a key was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
}

/// `POST /agents/:id/heartbeat` answer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HeartbeatAck {
    /// Always true: the heartbeat was recorded.
    pub ack: bool,
    /// The agent's status after the heartbeat (`active` or `busy`).
    pub status: String,
}

/// An agent to create with a worker.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct WorkerAgentSpec {
    /// The agent's display name.
    pub name: String,
    /// Tags the agent claims with, beside the worker's own tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing_tags: Option<Vec<String>>,
    /// What kinds of task the agent takes (default `specialist`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_mode: Option<ExecutionMode>,
}

/// How a worker says it talks to the control plane (a closed set); any other
/// word is `422`.
pub const CONNECTION_MODES: &[&str] = &["websocket", "sse", "polling"];

/// `POST /workers/register`. Heartbeat interval 5 to 3600 s, default 30.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RegisterWorker {
    /// The worker's name; with `take_over_offline` it identifies the worker to
    /// take over.
    pub name: String,
    /// `external`, `acp` or `claude_code` (open word).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_type: Option<String>,
    /// One of [`CONNECTION_MODES`]; `websocket` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_mode: Option<String>,
    /// Tags matched against a task's `required_tags` when the worker's agents
    /// claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing_tags: Option<Vec<String>>,
    /// How often the worker promises a heartbeat, 5 to 3600 seconds (default
    /// 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_interval_seconds: Option<i64>,
    /// What the worker reports about its host (free form, shown as given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_info: Option<Value>,
    /// Free-form caller metadata kept on the worker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// Agents to create with the worker, each with its own key in the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<Vec<WorkerAgentSpec>>,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Beyond the contract: when true and the tenant has an offline worker
    /// of this name, that worker is taken over instead of registering
    /// another (a worker process that restarts keeps its identity): its
    /// keys and its agents' keys are revoked and fresh ones issued, its
    /// agents are reused in order for `agents` (extra ones created, surplus
    /// ones retired), and tasks its agents still held from the previous
    /// run are released as if their agent was lost. Without an offline
    /// worker of the name (or when it is online), a new worker is
    /// registered as usual.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub take_over_offline: Option<bool>,
}

/// One agent created with a worker, with its key.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RegisteredWorkerAgent {
    /// The agent's id.
    pub id: Uuid,
    /// The agent's display name.
    pub name: String,
    /// The tags the agent claims with.
    pub routing_tags: Vec<String>,
    /// What kinds of task the agent takes.
    pub execution_mode: ExecutionMode,
    /// The agent's key, shown only in this answer.
    pub api_key: String,
}

/// The worker registration answer (keys shown once).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RegisteredWorker {
    /// The new (or taken-over) worker's id.
    pub worker_id: Uuid,
    /// The worker's key, shown only in this answer.
    pub worker_api_key: String,
    /// The worker's agents, each with its key.
    pub agents: Vec<RegisteredWorkerAgent>,
    /// Absolute `ws://host/api/v1/events` when the request named its host,
    /// else the path.
    pub websocket_url: String,
    /// How often the worker must send a heartbeat, in seconds.
    pub heartbeat_interval_seconds: i64,
    /// True when an offline worker of the name was taken over (see
    /// [`RegisterWorker::take_over_offline`]) rather than a new one made.
    #[serde(default)]
    pub taken_over: bool,
}

/// `DELETE /workers/:id` (beyond the contract): the worker is gone, its
/// keys and its agents' keys are revoked and its agents retired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeletedWorker {
    /// The deleted worker's id.
    pub id: Uuid,
    /// Always true: the worker is gone.
    pub deleted: bool,
    /// Keys revoked by the deletion (the worker's and its agents').
    pub keys_revoked: u64,
}

/// A worker record. `status` is `online` or `offline`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Worker {
    /// The worker's id, used in `/workers/:id` routes.
    pub worker_id: Uuid,
    /// The worker's name.
    pub name: String,
    /// What runs the tasks: `external`, `acp`, `claude_code` or another word.
    pub runtime_type: String,
    /// How the worker talks to the control plane: one of [`CONNECTION_MODES`].
    pub connection_mode: String,
    /// Tags the worker's agents claim with.
    pub routing_tags: Vec<String>,
    /// What the worker reported about its host.
    pub host_info: Value,
    /// How often the worker promised a heartbeat, in seconds.
    pub heartbeat_interval_seconds: i64,
    /// Free-form caller metadata.
    pub metadata: Value,
    /// `online` or `offline` (missed heartbeats).
    pub status: String,
    /// The task the worker last reported working on, if any.
    pub current_task_id: Option<Uuid>,
    /// The metrics the worker last reported, if any.
    pub metrics: Option<Value>,
    /// The ids of the worker's agents.
    pub agents: Vec<Uuid>,
    /// When the last heartbeat arrived.
    pub last_heartbeat_at: Timestamp,
    /// When the worker registered.
    pub created_at: Timestamp,
    /// When the worker last changed.
    pub updated_at: Timestamp,
}

/// `POST /workers/:id/heartbeat`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct WorkerHeartbeat {
    /// The status the worker reports for itself, kept as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The task the worker is working on now, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_task_id: Option<Uuid>,
    /// Free-form metrics (load, memory, ...), kept until the next report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Value>,
    /// What the worker runs now; replaces its previous report (absent keeps
    /// it, `[]` clears it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containers: Option<Vec<super::fleet::ContainerReport>>,
}

/// `POST /workers/:id/next`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct WorkerNext {
    /// Which of the worker's agents claims; the first agent without a held
    /// task when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
    /// Only tasks of this workflow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    /// Merge `workflow`, `workspace`, `documents` and `attachments` into the
    /// claimed task's `context` (as on `POST /tasks/claim`).
    #[serde(default)]
    pub include_context: bool,
    /// Only tasks of this execution environment (as on `POST /tasks/claim`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_environment_id: Option<Uuid>,
    /// 0 to 30 (default 0): the long poll of `POST /tasks/claim`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_seconds: Option<i64>,
}
