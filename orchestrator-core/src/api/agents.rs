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
    #[default]
    Specialist,
    Orchestrator,
    Hybrid,
}

impl ExecutionMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Specialist => "specialist",
            Self::Orchestrator => "orchestrator",
            Self::Hybrid => "hybrid",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Self::Specialist, Self::Orchestrator, Self::Hybrid]
            .into_iter()
            .find(|m| m.as_str() == text)
    }

    pub fn takes_orchestrator_tasks(self) -> bool {
        !matches!(self, Self::Specialist)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum AgentProtocol {
    #[default]
    Rest,
    Acp,
}

impl AgentProtocol {
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
    #[serde(default)]
    pub required: Vec<String>,
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
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<AgentProtocol>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing_tags: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_mode: Option<ExecutionMode>,
    /// Issue an agent-scope key bound to the new agent, shown once in the
    /// answer's `api_key` (default true; `false` registers without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue_api_key: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_interval_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<AgentTools>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acp: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// An agent record. `status` is `active`, `busy` (active and holding a
/// claimed or in-progress task) or `inactive` (missed 2 heartbeats).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Agent {
    pub id: Uuid,
    pub name: String,
    pub protocol: AgentProtocol,
    pub routing_tags: Vec<String>,
    pub execution_mode: ExecutionMode,
    pub status: String,
    pub worker_id: Option<Uuid>,
    pub heartbeat_interval_seconds: i64,
    pub tools: AgentTools,
    pub metadata: Value,
    pub acp: Option<Value>,
    pub profile: Option<Value>,
    pub current_task_id: Option<Uuid>,
    pub last_heartbeat_at: Timestamp,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// Only in the registration answer, when a key was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
}

/// `POST /agents/:id/heartbeat` answer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HeartbeatAck {
    pub ack: bool,
    pub status: String,
}

/// An agent to create with a worker.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct WorkerAgentSpec {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing_tags: Option<Vec<String>>,
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
    pub name: String,
    /// `external`, `acp` or `claude_code` (open word).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_type: Option<String>,
    /// One of [`CONNECTION_MODES`]; `websocket` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing_tags: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_interval_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_info: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<Vec<WorkerAgentSpec>>,
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
    pub id: Uuid,
    pub name: String,
    pub routing_tags: Vec<String>,
    pub execution_mode: ExecutionMode,
    pub api_key: String,
}

/// The worker registration answer (keys shown once).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RegisteredWorker {
    pub worker_id: Uuid,
    pub worker_api_key: String,
    pub agents: Vec<RegisteredWorkerAgent>,
    /// Absolute `ws://host/api/v1/events` when the request named its host,
    /// else the path.
    pub websocket_url: String,
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
    pub id: Uuid,
    pub deleted: bool,
    /// Keys revoked by the deletion (the worker's and its agents').
    pub keys_revoked: u64,
}

/// A worker record. `status` is `online` or `offline`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Worker {
    pub worker_id: Uuid,
    pub name: String,
    pub runtime_type: String,
    pub connection_mode: String,
    pub routing_tags: Vec<String>,
    pub host_info: Value,
    pub heartbeat_interval_seconds: i64,
    pub metadata: Value,
    pub status: String,
    pub current_task_id: Option<Uuid>,
    pub metrics: Option<Value>,
    pub agents: Vec<Uuid>,
    pub last_heartbeat_at: Timestamp,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// `POST /workers/:id/heartbeat`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct WorkerHeartbeat {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_task_id: Option<Uuid>,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    #[serde(default)]
    pub include_context: bool,
    /// Only tasks of this execution environment (as on `POST /tasks/claim`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_environment_id: Option<Uuid>,
    /// 0 to 30 (default 0): the long poll of `POST /tasks/claim`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_seconds: Option<i64>,
}
