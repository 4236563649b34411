//! Fleet and containers: what workers report they run (in their
//! heartbeats), and the admin views over it.

use super::Timestamp;
use super::wire_enum::wire_enum;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

wire_enum!(
    /// A container's (or process's) state as the worker reports it.
    ContainerState {
        /// Created, not started yet.
        Created = "created",
        /// Running.
        Running = "running",
        /// Paused by the runtime.
        Paused = "paused",
        /// Being restarted by the runtime.
        Restarting = "restarting",
        /// Stopped (the process ended).
        Exited = "exited",
        /// Failed to stop or be removed; the runtime gave up on it.
        Dead = "dead",
    }
);

/// One container or process in a worker heartbeat's `containers` list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ContainerReport {
    /// The runtime's id (a container id, or `pid:<n>` for a process).
    pub id: String,
    /// The container's (or process's) name.
    pub name: String,
    /// The image it runs (the command for a process).
    pub image: String,
    /// Its state as the runtime reports it.
    pub state: ContainerState,
    /// The task it runs, if any.
    pub task_id: Option<Uuid>,
    /// When it started.
    pub started_at: Timestamp,
    /// CPU use at the report, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_percent: Option<f64>,
    /// Memory use at the report, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<i64>,
}

/// A container as last reported (`GET /containers`,
/// `GET /fleet/live-containers`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Container {
    /// The runtime's id (a container id, or `pid:<n>` for a process).
    pub id: String,
    /// The worker that reported it.
    pub worker_id: Uuid,
    /// The reporting worker's name.
    pub worker_name: String,
    /// The worker's status now (`online`, `offline`, ...).
    pub worker_status: String,
    /// The container's (or process's) name.
    pub name: String,
    /// The image it runs.
    pub image: String,
    /// Its state at the last report.
    pub state: ContainerState,
    /// The task it runs, if any.
    pub task_id: Option<Uuid>,
    /// When it started.
    pub started_at: Timestamp,
    /// CPU use at the last report, in percent; null when not reported.
    pub cpu_percent: Option<f64>,
    /// Memory use at the last report, in bytes; null when not reported.
    pub memory_bytes: Option<i64>,
    /// When the worker's heartbeat carrying it arrived.
    pub reported_at: Timestamp,
}

/// `GET /containers` filters.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ContainerFilter {
    /// Only containers reported by this worker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<Uuid>,
    /// Only containers in this state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ContainerState>,
    /// Only containers running this task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<Uuid>,
}

/// An agent of a fleet worker and the task it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FleetAgent {
    /// The agent's id.
    pub id: Uuid,
    /// The agent's name.
    pub name: String,
    /// `active`, `busy` or `inactive`.
    pub status: String,
    /// The claimed or in-progress task, if any.
    pub current_task_id: Option<Uuid>,
}

/// An environment a worker can run (named by an `env:<name>` routing tag).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FleetEnvironment {
    /// The environment's id.
    pub id: Uuid,
    /// The environment's name.
    pub name: String,
    /// The environment's image.
    pub image: String,
}

/// One worker of `GET /fleet/workers`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FleetWorker {
    /// The worker's id.
    pub worker_id: Uuid,
    /// The worker's name.
    pub name: String,
    /// `online` or `offline`.
    pub status: String,
    /// The worker's routing tags (`env:<name or id>` tags name its
    /// environments).
    pub routing_tags: Vec<String>,
    /// How often the worker promised a heartbeat, in seconds.
    pub heartbeat_interval_seconds: i64,
    /// When the last heartbeat arrived.
    pub last_heartbeat_at: Timestamp,
    /// The worker's agents and the tasks they hold.
    pub agents: Vec<FleetAgent>,
    /// Containers in state `running` in the worker's latest report.
    pub running_containers: i64,
    /// The environments the worker can run, from its `env:` routing tags.
    pub environments: Vec<FleetEnvironment>,
}
