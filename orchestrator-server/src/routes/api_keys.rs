//! `/api-keys`: list, create (the key is shown once), revoke.

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use orchestrator_core::api::CreateApiKey;
use std::sync::Arc;

pub(crate) async fn list(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let page = app
        .core
        .list_api_keys(req.caller()?, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn create(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: CreateApiKey = req.json()?;
    let created = app.core.create_api_key(req.caller()?, body).await?;
    Ok(req.created(&created))
}

pub(crate) async fn revoke(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let key = app
        .core
        .revoke_api_key(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&key))
}
