//! The worker channel: the websocket a worker opens at
//! `GET /api/v1/events` with `Upgrade: websocket` and its worker key as
//! `Authorization: Bearer`. Every frame is one JSON text frame
//! `{"type": ..., ...}`.
//!
//! Server → worker ([`ServerMessage`]):
//! - `connection.ready` once, first: `worker_id`, `agents` (ids),
//!   `heartbeat_interval_seconds`;
//! - `task.assigned` with `task` (the claimed task, as `POST /workers/:id/next`
//!   returns it; with the context packet when the socket was opened with
//!   `?include_context=true`) and `agent_id`: the server claimed it for that
//!   agent. At most one held task per agent, as the claim engine ensures;
//! - `worker.signal` with `signal` (`drain` or `cancel_task`) and `task_id`
//!   (for `cancel_task`), sent by an admin through `POST /workers/:id/signal`;
//! - `task.cancel_requested` with `task_id` and `agent_id`: an operator asked
//!   to cancel a held task that has a heartbeat timeout (run control §4);
//! - `error` with `message` for a frame the server could not read (the socket
//!   stays open).
//!
//! Worker → server ([`WorkerMessage`]):
//! - `task.assignment_ack` with `task_id`;
//! - `signal.ack` with `signal` and optional `task_id`;
//! - `worker.heartbeat` with the optional fields of `POST /workers/:id/heartbeat`
//!   (`status`, `current_task_id`, `metrics`): the same effect (liveness).

use crate::api::Task;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// A frame the server sends on the worker channel.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type")]
pub enum ServerMessage {
    /// `connection.ready`: the first frame, once the socket is open.
    #[serde(rename = "connection.ready")]
    ConnectionReady {
        /// The worker the key belongs to.
        worker_id: Uuid,
        /// The ids of the worker's agents.
        agents: Vec<Uuid>,
        /// How often the worker must send a heartbeat, in seconds.
        heartbeat_interval_seconds: i64,
    },
    /// `task.assigned`: the server claimed `task` for `agent_id`; the worker
    /// should acknowledge it with `task.assignment_ack` and start it.
    #[serde(rename = "task.assigned")]
    TaskAssigned {
        /// The worker's agent the task was claimed for.
        agent_id: Uuid,
        /// The claimed task, as `POST /workers/:id/next` answers it.
        task: Box<Task>,
    },
    /// `worker.signal`: an admin's signal through `POST /workers/:id/signal`.
    #[serde(rename = "worker.signal")]
    WorkerSignal {
        /// What the worker is asked to do.
        signal: SignalKind,
        /// The task to stop, for `cancel_task`.
        #[serde(default)]
        task_id: Option<Uuid>,
    },
    /// Run control §4: cancellation was requested of a task this worker's
    /// agent holds; stop it and fail or complete it.
    #[serde(rename = "task.cancel_requested")]
    TaskCancelRequested {
        /// The task whose cancellation was requested.
        task_id: Uuid,
        /// The worker's agent that holds it.
        #[serde(default)]
        agent_id: Option<Uuid>,
    },
    /// `error`: the server could not read a frame; the socket stays open.
    #[serde(rename = "error")]
    Error {
        /// What was wrong with the frame.
        message: String,
    },
}

/// A frame a worker sends on the worker channel.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", deny_unknown_fields)]
pub enum WorkerMessage {
    /// `task.assignment_ack`: the worker took the assigned task `task_id`.
    #[serde(rename = "task.assignment_ack")]
    TaskAssignmentAck {
        /// The task acknowledged.
        task_id: Uuid,
    },
    /// `signal.ack`: the worker received a signal.
    #[serde(rename = "signal.ack")]
    SignalAck {
        /// The signal acknowledged.
        signal: SignalKind,
        /// The task of a `cancel_task` signal.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task_id: Option<Uuid>,
    },
    /// `worker.heartbeat`: the same effect as `POST /workers/:id/heartbeat`.
    #[serde(rename = "worker.heartbeat")]
    Heartbeat {
        /// The status the worker reports for itself, kept as given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<String>,
        /// The task the worker is working on now, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        current_task_id: Option<Uuid>,
        /// Free-form metrics (load, memory, ...), kept until the next report.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metrics: Option<Value>,
        /// What the worker runs now; replaces its previous report (absent keeps
        /// it, `[]` clears it).
        /// What the worker runs now; replaces its previous report (absent
        /// keeps it, `[]` clears it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        containers: Option<Vec<super::fleet::ContainerReport>>,
    },
}

/// What a `worker.signal` asks of the worker.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SignalKind {
    /// Finish the held tasks, take no new ones.
    Drain,
    /// Stop working on `task_id`.
    CancelTask,
}

impl SignalKind {
    /// The wire name (`drain`, `cancel_task`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Drain => "drain",
            Self::CancelTask => "cancel_task",
        }
    }
}

/// `POST /workers/:id/signal` (admin, beyond the contract).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SignalWorker {
    /// What the worker is asked to do.
    pub signal: SignalKind,
    /// The task to stop; required for `cancel_task`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<Uuid>,
}

/// The answer of `POST /workers/:id/signal`: the signal is recorded as a
/// `worker.signal` event (`event_id`) and delivered to the worker's open
/// channels, on any replica.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SignalSent {
    /// The worker signalled.
    pub worker_id: Uuid,
    /// The signal sent.
    pub signal: SignalKind,
    /// The task to stop, for `cancel_task`.
    pub task_id: Option<Uuid>,
    /// The id of the `worker.signal` event that records the signal.
    pub event_id: i64,
}
