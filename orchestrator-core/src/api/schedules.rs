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
        /// The slot gets a `skipped` run, reason `overlap` (the default).
        #[default]
        Skip = "skip",
        /// The first such slot waits and fires when the running one ends;
        /// later ones skip.
        BufferOne = "buffer_one",
        /// The slot fires anyway.
        AllowAll = "allow_all",
        /// The running workflows or tasks are cancelled, then the slot
        /// fires.
        CancelPrevious = "cancel_previous",
    }
);

wire_enum!(
    /// What happens to slots missed while no server ran.
    #[derive(Default)]
    CatchupPolicy {
        /// None fires; each is a `skipped` run, reason `missed`.
        Skip = "skip",
        /// Only the most recent fires; the older ones are skipped (the
        /// default).
        #[default]
        Latest = "latest",
        /// Each fires in order, at most [`MAX_BACKFILL_SLOTS`].
        All = "all",
    }
);

wire_enum!(
    /// How a slot ended.
    RunOutcome {
        /// The workflow or task was launched.
        Launched = "launched",
        /// Nothing was launched (overlap, missed); see `reason`.
        Skipped = "skipped",
        /// The previous run was cancelled and the target launched.
        CancelledPrevious = "cancelled_previous",
        /// The launch failed; `reason` says why.
        Failed = "failed",
    }
);

/// What a slot launches: a workflow (the `POST /workflows` body) or a task
/// (the `POST /tasks` body without `request_id`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ScheduleTarget {
    /// Launch a workflow (the `POST /workflows` body).
    Workflow {
        /// The playbook to launch.
        playbook_id: Uuid,
        /// The workspace the workflow runs in.
        workspace_id: Uuid,
        /// Defaults to the schedule's name plus the slot time.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// The workflow's parameters, name to value.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parameters: Option<BTreeMap<String, String>>,
        /// Metadata for the workflow; `schedule_id` and `scheduled_for` are
        /// added.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<Value>,
    },
    /// Create a task.
    Task {
        /// The `POST /tasks` body, without `request_id`; `schedule_id` and
        /// `scheduled_for` are added to its metadata.
        task: Box<CreateTask>,
    },
}

/// `POST /api/v1/schedules`: exactly one of `cron` and `every_seconds`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateSchedule {
    /// The schedule's name, 1 to 200 characters, unique in the tenant.
    pub name: String,
    /// What the schedule is for, for people.
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
    /// What a due slot does while the previous run still runs (default `skip`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlap: Option<OverlapPolicy>,
    /// What happens to slots missed while no server ran (default `latest`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catchup: Option<CatchupPolicy>,
    /// Default 3,600; at most 31,536,000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catchup_window_seconds: Option<i64>,
    /// 0 to 3,600, default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter_seconds: Option<i64>,
    /// No slot fires before this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<Timestamp>,
    /// No slot fires after this time; must be after `start_at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_at: Option<Timestamp>,
    /// Create the schedule paused (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// What each slot launches: a workflow or a task.
    pub target: ScheduleTarget,
    /// Replays the first answer when sent again.
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
    /// A new name, 1 to 200 characters, unique in the tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A new description; `null` clears it.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<Option<String>>,
    /// A new cron spec, replacing the current spec (`every_seconds` is
    /// cleared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cron: Option<String>,
    /// A new interval, 1 to 31,536,000, replacing the current spec (`cron` is
    /// cleared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every_seconds: Option<i64>,
    /// A new IANA zone the cron spec is read in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    /// A new overlap policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlap: Option<OverlapPolicy>,
    /// A new catch-up policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catchup: Option<CatchupPolicy>,
    /// A new catch-up window, 0 to 31,536,000 seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catchup_window_seconds: Option<i64>,
    /// A new jitter, 0 to 3,600 seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter_seconds: Option<i64>,
    /// A new earliest fire time; `null` clears it.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub start_at: Option<Option<Timestamp>>,
    /// A new latest fire time; `null` clears it.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub end_at: Option<Option<Timestamp>>,
    /// Pause (`true`) or resume (`false`) the schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// A new target, checked as on create.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<ScheduleTarget>,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// A schedule record.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Schedule {
    /// The schedule's id, used in `/schedules/:id` routes.
    pub id: Uuid,
    /// The schedule's name, unique in the tenant.
    pub name: String,
    /// What the schedule is for.
    pub description: Option<String>,
    /// The cron spec; null for an interval schedule.
    pub cron: Option<String>,
    /// The interval in seconds; null for a cron schedule.
    pub every_seconds: Option<i64>,
    /// The IANA zone the cron spec is read in.
    pub timezone: String,
    /// What a due slot does while the previous run still runs.
    pub overlap: OverlapPolicy,
    /// What happens to slots missed while no server ran.
    pub catchup: CatchupPolicy,
    /// How far back missed slots are caught up, in seconds.
    pub catchup_window_seconds: i64,
    /// Up to this many seconds are added to each fire time (fixed per
    /// schedule).
    pub jitter_seconds: i64,
    /// No slot fires before this time; null for no bound.
    pub start_at: Option<Timestamp>,
    /// No slot fires after this time; null for no bound.
    pub end_at: Option<Timestamp>,
    /// Whether the schedule is paused (no slot fires; paused time is never
    /// caught up).
    pub paused: bool,
    /// What each slot launches.
    pub target: ScheduleTarget,
    /// When the next slot fires (its time plus jitter); null while paused
    /// or after `end_at`.
    pub next_fire_at: Option<Timestamp>,
    /// When a slot last fired; null before the first.
    pub last_fired_at: Option<Timestamp>,
    /// Runs that launched, cancelled the previous one or failed (triggers and
    /// backfills included).
    pub fire_count: i64,
    /// Runs that were skipped.
    pub skip_count: i64,
    /// When the schedule was created.
    pub created_at: Timestamp,
    /// When the schedule last changed.
    pub updated_at: Timestamp,
}

/// `DELETE /api/v1/schedules/:id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeletedSchedule {
    /// The deleted schedule's id.
    pub id: Uuid,
    /// Always true: the schedule and its runs are gone (what they launched
    /// stays).
    pub deleted: bool,
}

/// One slot of a schedule and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ScheduleRun {
    /// The run's id.
    pub id: Uuid,
    /// The schedule the run belongs to.
    pub schedule_id: Uuid,
    /// The slot's time (for a trigger, the time it was asked).
    pub scheduled_for: Timestamp,
    /// When the slot actually fired.
    pub fired_at: Timestamp,
    /// How the slot ended.
    pub outcome: RunOutcome,
    /// `overlap`, `missed`, `schedule overlap`, or why a launch failed.
    pub reason: Option<String>,
    /// The workflow launched, for a workflow target.
    pub workflow_id: Option<Uuid>,
    /// The task created, for a task target.
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
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// `POST /api/v1/schedules/:id/backfill`: every slot in `[from, to)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct BackfillSchedule {
    /// The first slot time to fire (included).
    pub from: Timestamp,
    /// The end of the range (excluded).
    pub to: Timestamp,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// The answer of a backfill: how many slots it will fire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Backfill {
    /// The schedule backfilled.
    pub schedule_id: Uuid,
    /// How many slots the background job will fire (at most
    /// [`MAX_BACKFILL_SLOTS`]).
    pub slots: u64,
}

/// `POST /api/v1/schedules/preview`: the next fire times of a spec (what
/// the dashboard's form shows while it is edited).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PreviewSchedule {
    /// A cron spec to preview; exclusive with `every_seconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cron: Option<String>,
    /// An interval to preview, 1 to 31,536,000; exclusive with `cron`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every_seconds: Option<i64>,
    /// The IANA zone the cron spec is read in (default `UTC`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    /// Fire times before this one are left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<Timestamp>,
    /// Fire times after this one are left out.
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
    /// The zone the local times are in.
    pub timezone: String,
    /// The next fire times, in UTC (jitter not included).
    pub fire_times: Vec<Timestamp>,
    /// The same instants as local wall-clock times of the zone, RFC 3339 with
    /// offset.
    pub local_times: Vec<String>,
}

/// `GET /api/v1/schedules` filters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ScheduleFilter {
    /// Only paused (`true`) or only active (`false`) schedules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// Case-insensitive substring of the name or description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<String>,
}
