//! `/bulk-actions` (admin): one action over many tasks or workflows, run in
//! the background.

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use orchestrator_core::api::CreateBulkAction;
use std::sync::Arc;

pub(crate) async fn create(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: CreateBulkAction = req.json()?;
    let action = app.core.create_bulk_action(req.caller()?, body).await?;
    Ok(req.accepted(&action))
}

pub(crate) async fn list(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let page = app
        .core
        .list_bulk_actions(req.caller()?, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn get(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let action = app
        .core
        .get_bulk_action(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&action))
}

pub(crate) async fn cancel(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let action = app
        .core
        .cancel_bulk_action(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&action))
}
