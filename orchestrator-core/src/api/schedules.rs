//! Schedules (admin): launch a workflow or create a task on a cron or
//! interval spec, exactly once per slot, with their runs.

use super::Timestamp;
use super::tasks::CreateTask;
use super::wire_enum::wire_enum;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use uuid::Uuid;

/// The largest `every_seconds`, `catchup_window_seconds` (one year).
pub const MAX_SCHEDULE_SECONDS: i64 = 31_536_000;
/// The largest `jitter_seconds`.
pub const MAX_JITTER_SECONDS: i64 = 3_600;
/// The default `catchup_window_seconds`.
pub const DEFAULT_CATCHUP_WINDOW_SECONDS: i64 = 3_600;
/// The most slots one backfill (or one catch-up) fires.
pub const MAX_BACKFILL_SLOTS: u64 = 1_000;

wire_enum!(
    /// What a due slot does while the previous run's workflow or task is
    /// still running.
    #[derive(Default)]
    OverlapPolicy {
        #[default]
        Skip = "skip",
        BufferOne = "buffer_one",
        AllowAll = "allow_all",
        CancelPrevious = "cancel_previous",
    }
);

wire_enum!(
    /// What happens to slots missed while no server ran.
    #[derive(Default)]
    CatchupPolicy {
        Skip = "skip",
        #[default]
        Latest = "latest",
        All = "all",
    }
);

wire_enum!(
    /// How a slot ended.
    RunOutcome {
        Launched = "launched",
        Skipped = "skipped",
        CancelledPrevious = "cancelled_previous",
        Failed = "failed",
    }
);

/// What a slot launches: a workflow (the `POST /workflows` body) or a task
/// (the `POST /tasks` body without `request_id`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ScheduleTarget {
    Workflow {
        playbook_id: Uuid,
        workspace_id: Uuid,
        /// Defaults to the schedule's name plus the slot time.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parameters: Option<BTreeMap<String, String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<Value>,
    },
    Task {
        task: Box<CreateTask>,
    },
}

/// `POST /api/v1/schedules`: exactly one of `cron` and `every_seconds`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateSchedule {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Five fields (`minute hour day-of-month month day-of-week`) or a macro
    /// (`@hourly @daily @weekly @monthly @yearly`), read in `timezone`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cron: Option<String>,
    /// 1 to 31,536,000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every_seconds: Option<i64>,
    /// An IANA zone name; `UTC` by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlap: Option<OverlapPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catchup: Option<CatchupPolicy>,
    /// Default 3,600; at most 31,536,000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catchup_window_seconds: Option<i64>,
    /// 0 to 3,600, default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    pub target: ScheduleTarget,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// Reads a field that may be absent (`None`), `null` (`Some(None)`) or a
/// value: how a patch clears a nullable field.
fn nullable<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(deserializer).map(Some)
}

/// `PATCH /api/v1/schedules/:id`: any field but `id`. Naming `cron` or
/// `every_seconds` replaces the spec (the other one is cleared); `null`
/// clears `description`, `start_at` and `end_at`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PatchSchedule {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<Option<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cron: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlap: Option<OverlapPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catchup: Option<CatchupPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catchup_window_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter_seconds: Option<i64>,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub start_at: Option<Option<Timestamp>>,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub end_at: Option<Option<Timestamp>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<ScheduleTarget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// A schedule record.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Schedule {
    pub id: Uuid,
    pub name: String,
    pub description: Option<String>,
    pub cron: Option<String>,
    pub every_seconds: Option<i64>,
    pub timezone: String,
    pub overlap: OverlapPolicy,
    pub catchup: CatchupPolicy,
    pub catchup_window_seconds: i64,
    pub jitter_seconds: i64,
    pub start_at: Option<Timestamp>,
    pub end_at: Option<Timestamp>,
    pub paused: bool,
    pub target: ScheduleTarget,
    /// When the next slot fires (its time plus jitter); null while paused
    /// or after `end_at`.
    pub next_fire_at: Option<Timestamp>,
    pub last_fired_at: Option<Timestamp>,
    pub fire_count: i64,
    pub skip_count: i64,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// `DELETE /api/v1/schedules/:id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeletedSchedule {
    pub id: Uuid,
    pub deleted: bool,
}

/// One slot of a schedule and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ScheduleRun {
    pub id: Uuid,
    pub schedule_id: Uuid,
    pub scheduled_for: Timestamp,
    pub fired_at: Timestamp,
    pub outcome: RunOutcome,
    /// `overlap`, `missed`, `schedule overlap`, or why a launch failed.
    pub reason: Option<String>,
    pub workflow_id: Option<Uuid>,
    pub task_id: Option<Uuid>,
}

/// `POST /api/v1/schedules/:id/trigger` (the body is optional).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct TriggerSchedule {
    /// Fire even while a previous run is running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_overlap: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// `POST /api/v1/schedules/:id/backfill`: every slot in `[from, to)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct BackfillSchedule {
    pub from: Timestamp,
    pub to: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// The answer of a backfill: how many slots it will fire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Backfill {
    pub schedule_id: Uuid,
    pub slots: u64,
}

/// `POST /api/v1/schedules/preview`: the next fire times of a spec (what
/// the dashboard's form shows while it is edited).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PreviewSchedule {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cron: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_at: Option<Timestamp>,
    /// How many fire times (1 to 50, default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
}

/// The next fire times of a spec: UTC instants, and the same instants as
/// local wall-clock times of the zone (`2026-03-29T03:00:00+02:00`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SchedulePreview {
    pub timezone: String,
    pub fire_times: Vec<Timestamp>,
    pub local_times: Vec<String>,
}

/// `GET /api/v1/schedules` filters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ScheduleFilter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// Case-insensitive substring of the name or description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<String>,
}
