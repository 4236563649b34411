//! Schedules (issue 29): each route's input and output types.

use super::describe::*;
use http::Method as M;
use orchestrator_core::api::schedules::{
    Backfill, BackfillSchedule, CreateSchedule, DeletedSchedule, PatchSchedule, PreviewSchedule,
    Schedule, SchedulePreview, ScheduleRun, TriggerSchedule,
};

/// Schedules.
pub(super) fn docs() -> Vec<Doc> {
    vec![
        op(M::POST, "/api/v1/schedules", "Create a schedule", created::<Schedule>()).body::<CreateSchedule>(),
        op(M::GET, "/api/v1/schedules", "List schedules", page::<Schedule>())
            .param("paused", BOOL, "Paused or running schedules only")
            .param("search", TEXT, "Name or description contains")
            .paged(),
        op(M::POST, "/api/v1/schedules/preview", "The next fire times of a spec", ok::<SchedulePreview>()).body::<PreviewSchedule>(),
        op(M::GET, "/api/v1/schedules/{id}", "Get a schedule", ok::<Schedule>()),
        op(M::PATCH, "/api/v1/schedules/{id}", "Patch a schedule", ok::<Schedule>()).body::<PatchSchedule>(),
        op(M::DELETE, "/api/v1/schedules/{id}", "Delete a schedule", ok::<DeletedSchedule>()),
        op(M::POST, "/api/v1/schedules/{id}/pause", "Pause a schedule", ok::<Schedule>()),
        op(M::POST, "/api/v1/schedules/{id}/resume", "Resume a schedule", ok::<Schedule>()),
        op(M::POST, "/api/v1/schedules/{id}/trigger", "Fire a schedule once now", created::<ScheduleRun>()).body::<TriggerSchedule>(),
        op(M::POST, "/api/v1/schedules/{id}/backfill", "Fire the slots of a past range", accepted::<Backfill>()).body::<BackfillSchedule>(),
        op(M::GET, "/api/v1/schedules/{id}/runs", "List a schedule's runs", page::<ScheduleRun>()).paged(),
    ]
}
