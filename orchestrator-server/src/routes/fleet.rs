//! `/fleet/workers`, `/fleet/live-containers` and `/containers` (admin):
//! what the workers run, from their heartbeats.

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use orchestrator_core::Error;
use orchestrator_core::api::fleet::{ContainerFilter, ContainerState};
use std::sync::Arc;
use uuid::Uuid;

pub(crate) async fn workers(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let workers = app.core.fleet_workers(req.caller()?).await?;
    Ok(req.ok(&workers))
}

pub(crate) async fn live_containers(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let containers = app.core.live_containers(req.caller()?).await?;
    Ok(req.ok(&containers))
}

fn uuid_filter(req: &Req, name: &str) -> Result<Option<Uuid>, ApiError> {
    match req.query_value(name).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(text) => {
            Ok(Some(text.parse().map_err(|_| {
                Error::invalid_field(name, "must be a UUID")
            })?))
        }
    }
}

pub(crate) async fn containers(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let state = match req.query_value("state").filter(|v| !v.is_empty()) {
        None => None,
        Some(text) => Some(ContainerState::parse(&text).ok_or_else(|| {
            Error::invalid_field(
                "state",
                "must be created, running, paused, restarting, exited or dead",
            )
        })?),
    };
    let filter = ContainerFilter {
        worker_id: uuid_filter(&req, "worker_id")?,
        state,
        task_id: uuid_filter(&req, "task_id")?,
    };
    let page = app
        .core
        .list_containers(req.caller()?, filter, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}
