//! The rules of a schedule's fields, shared by create and patch.

use crate::api::schedules::{MAX_JITTER_SECONDS, MAX_SCHEDULE_SECONDS, ScheduleTarget};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::schedules::fire::launch;
use crate::schedules::rows::ScheduleRow;
use chrono::{DateTime, Utc};

pub(crate) fn name(name: &str) -> Result<String> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 {
        return Err(Error::invalid_field("name", "must be 1 to 200 characters"));
    }
    Ok(name.to_owned())
}

pub(crate) fn catchup_window(seconds: i64) -> Result<i64> {
    if !(0..=MAX_SCHEDULE_SECONDS).contains(&seconds) {
        return Err(Error::invalid_field(
            "catchup_window_seconds",
            "must be 0 to 31,536,000",
        ));
    }
    Ok(seconds)
}

pub(crate) fn jitter(seconds: i64) -> Result<i64> {
    if !(0..=MAX_JITTER_SECONDS).contains(&seconds) {
        return Err(Error::invalid_field("jitter_seconds", "must be 0 to 3,600"));
    }
    Ok(seconds)
}

pub(crate) fn window(start_at: Option<DateTime<Utc>>, end_at: Option<DateTime<Utc>>) -> Result<()> {
    if let (Some(start), Some(end)) = (start_at, end_at)
        && end <= start
    {
        return Err(Error::invalid_field("end_at", "must be after start_at"));
    }
    Ok(())
}

/// The shape rules of a target that serde does not check.
pub(crate) fn target_shape(target: &ScheduleTarget) -> Result<()> {
    match target {
        ScheduleTarget::Workflow { metadata, .. }
            if metadata.as_ref().is_some_and(|m| !m.is_object()) =>
        {
            Err(Error::schema_field(
                "target.metadata",
                "must be a JSON object",
            ))
        }
        ScheduleTarget::Task { task } if task.request_id.is_some() => Err(Error::schema_field(
            "target.task.request_id",
            "a schedule's task takes no request_id (each slot fires once)",
        )),
        _ => Ok(()),
    }
}

/// Prefixes a field error of the launch with `target.` (`target.playbook_id`,
/// `target.task.title`), so the answer names the field of the schedule body.
fn in_target(error: Error, task: bool) -> Error {
    let prefix = if task { "target.task." } else { "target." };
    error.prefix_fields(prefix)
}

impl ControlPlane {
    /// Launches `row`'s target in a transaction that is then rolled back:
    /// a dangling playbook, workspace or task reference is a 400 at create,
    /// checked by the very path a fire takes.
    pub(crate) async fn check_target(&self, caller: &Caller, row: &ScheduleRow) -> Result<()> {
        target_shape(&row.target.0)?;
        let task = matches!(row.target.0, ScheduleTarget::Task { .. });
        let mut tx = self.store().begin().await?;
        let now = self.clock().now();
        let launched = launch(&mut tx, caller, row, (now, now)).await;
        drop(tx);
        launched.map(drop).map_err(|e| in_target(e, task))
    }
}
