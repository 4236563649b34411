//! Fleet and containers: what workers report they run (in their
//! heartbeats), and the admin views over it.

use super::Timestamp;
use super::wire_enum::wire_enum;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

wire_enum!(
    /// A container's (or process's) state as the worker reports it.
    ContainerState {
        Created = "created",
        Running = "running",
        Paused = "paused",
        Restarting = "restarting",
        Exited = "exited",
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
    pub name: String,
    pub image: String,
    pub state: ContainerState,
    pub task_id: Option<Uuid>,
    pub started_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_percent: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<i64>,
}

/// A container as last reported (`GET /containers`,
/// `GET /fleet/live-containers`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Container {
    pub id: String,
    pub worker_id: Uuid,
    pub worker_name: String,
    /// The worker's status now (`online`, `offline`, ...).
    pub worker_status: String,
    pub name: String,
    pub image: String,
    pub state: ContainerState,
    pub task_id: Option<Uuid>,
    pub started_at: Timestamp,
    pub cpu_percent: Option<f64>,
    pub memory_bytes: Option<i64>,
    /// When the worker's heartbeat carrying it arrived.
    pub reported_at: Timestamp,
}

/// `GET /containers` filters.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ContainerFilter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ContainerState>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<Uuid>,
}

/// An agent of a fleet worker and the task it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FleetAgent {
    pub id: Uuid,
    pub name: String,
    pub status: String,
    /// The claimed or in-progress task, if any.
    pub current_task_id: Option<Uuid>,
}

/// An environment a worker can run (named by an `env:<name>` routing tag).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FleetEnvironment {
    pub id: Uuid,
    pub name: String,
    pub image: String,
}

/// One worker of `GET /fleet/workers`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FleetWorker {
    pub worker_id: Uuid,
    pub name: String,
    pub status: String,
    pub routing_tags: Vec<String>,
    pub heartbeat_interval_seconds: i64,
    pub last_heartbeat_at: Timestamp,
    pub agents: Vec<FleetAgent>,
    /// Containers in state `running` in the worker's latest report.
    pub running_containers: i64,
    pub environments: Vec<FleetEnvironment>,
}
