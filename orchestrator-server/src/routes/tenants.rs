//! `/tenants` (service scope): create with a first admin key, list.

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use orchestrator_core::api::CreateTenant;
use std::sync::Arc;

pub(crate) async fn create(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: CreateTenant = req.json()?;
    let created = app.core.create_tenant(req.caller()?, body).await?;
    Ok(req.created(&created))
}

pub(crate) async fn list(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let page = app
        .core
        .list_tenants(req.caller()?, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}
