//! Run control of tasks: retry policies, delays, leases and heartbeats
//! (the fields beside `POST /tasks` live on [`super::CreateTask`]).

use super::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// How a failed task is tried again: on `POST /tasks` (`retry_policy`) and
/// at the top level of a playbook definition (the default for its tasks).
/// The record shows the policy with every default filled in.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RetryPolicy {
    /// 1 to 100; counts the first attempt.
    pub max_attempts: i64,
    /// 0 to 86,400, default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_interval_seconds: Option<i64>,
    /// 1.0 to 10.0, default 2.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_coefficient: Option<f64>,
    /// At most 86,400; default 100 × the initial interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_interval_seconds: Option<i64>,
    /// 0.0 to 1.0, default 0.2: the delay is multiplied by a random factor
    /// in `[1 − jitter, 1 + jitter]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<f64>,
    /// Error categories that fail the task at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_retryable_categories: Option<Vec<String>>,
}

/// `POST /tasks/:id/heartbeat`, by the holder while the task is claimed or
/// in progress.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct TaskHeartbeat {
    /// The attempt the holder works on (fencing: another one is 409
    /// `LEASE_LOST`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<i64>,
    /// Any JSON object, at most 64 KiB; shown on the task as `progress`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<Value>,
    /// Only for credentials not bound to an agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
}

/// The heartbeat answer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TaskHeartbeatAck {
    /// Always true: the heartbeat was recorded and the lease renewed.
    pub ack: bool,
    /// Null when the task has no `heartbeat_timeout_seconds`.
    pub lease_expires_at: Option<Timestamp>,
    /// The operator asked to cancel: stop and fail or complete the task.
    pub cancel_requested: bool,
}

/// `POST /tasks/:id/reschedule`: exactly one of `run_at`, `delay_seconds`;
/// only while the task is `pending`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RescheduleTask {
    /// When the task becomes claimable; a time already passed makes it
    /// claimable at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_at: Option<Timestamp>,
    /// 0 to 31,536,000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_seconds: Option<i64>,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}
