//! Schedules: launch a workflow or create a task on a cron or interval
//! spec, each slot at most once.
//!
//! - `spec.rs`: the cron (croner) or interval spec read in an IANA zone
//!   (chrono-tz), next slots with the daylight-saving rules, jitter;
//! - `rows.rs`: the `schedules` and `schedule_runs` tables;
//! - `fields.rs`: the rules of the request fields and the target check;
//! - `fire.rs`: one slot fired in one transaction (run row + launch), the
//!   overlap policies, failed launches;
//! - `job.rs`: the background runner's job: due slots, catch-up, buffers,
//!   backfills, and when to wake next;
//! - `operations.rs`: create, list, get, patch, delete, pause, resume,
//!   preview;
//! - `runs.rs`: trigger, backfill and the run history;
//! - `stats.rs`: runs by outcome and fire lag, for the metrics endpoint.
//!
//! This module sits above `lifecycle` (a `cancel_previous` overlap cancels
//! through the operator's cancel) and `workflows`/`tasks` (it launches
//! through their create paths); nothing below uses it.

mod fields;
mod fire;
mod job;
mod operations;
mod rows;
mod runs;
mod spec;
mod stats;

pub use stats::{LAG_BUCKETS, ScheduleStats};
