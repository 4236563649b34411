//! `/api/v1/schedules` (admin): create, list, get, patch, delete, pause,
//! resume, trigger, backfill, runs, and the preview of a spec's fire times.

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use orchestrator_core::Error;
use orchestrator_core::api::schedules::{
    BackfillSchedule, CreateSchedule, PatchSchedule, PreviewSchedule, ScheduleFilter,
    TriggerSchedule,
};
use std::sync::Arc;

pub(crate) async fn create(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: CreateSchedule = req.json()?;
    let schedule = app.core.create_schedule(req.caller()?, body).await?;
    Ok(req.created(&schedule))
}

pub(crate) async fn list(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let paused = match req.query_value("paused").as_deref() {
        None | Some("") => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(_) => return Err(Error::invalid_field("paused", "must be true or false").into()),
    };
    let filter = ScheduleFilter {
        paused,
        search: req.query_value("search"),
    };
    let page = app
        .core
        .list_schedules(req.caller()?, filter, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn get(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let schedule = app
        .core
        .get_schedule(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&schedule))
}

pub(crate) async fn patch(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: PatchSchedule = req.json()?;
    let schedule = app
        .core
        .patch_schedule(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.ok(&schedule))
}

pub(crate) async fn delete(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let deleted = app
        .core
        .delete_schedule(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&deleted))
}

pub(crate) async fn pause(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let schedule = app
        .core
        .set_schedule_paused(req.caller()?, req.uuid("id")?, true)
        .await?;
    Ok(req.ok(&schedule))
}

pub(crate) async fn resume(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let schedule = app
        .core
        .set_schedule_paused(req.caller()?, req.uuid("id")?, false)
        .await?;
    Ok(req.ok(&schedule))
}

pub(crate) async fn trigger(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: TriggerSchedule = req.json()?;
    let run = app
        .core
        .trigger_schedule(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.created(&run))
}

pub(crate) async fn backfill(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: BackfillSchedule = req.json()?;
    let backfill = app
        .core
        .backfill_schedule(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.accepted(&backfill))
}

pub(crate) async fn runs(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let page = app
        .core
        .list_schedule_runs(req.caller()?, req.uuid("id")?, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn preview(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: PreviewSchedule = req.json()?;
    req.caller()?;
    Ok(req.ok(&app.core.preview_schedule(&body)?))
}
