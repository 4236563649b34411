//! `/concurrency-limits` and `/rate-limits` (admin): flow limits per key
//! (run control §6). The key is the last path segment, percent-decoded.

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use orchestrator_core::api::{SetConcurrencyLimit, SetRateLimit};
use orchestrator_core::error::Error;
use std::sync::Arc;

/// The `{key}` of the path (a key that is not UTF-8 names none: 404).
fn key(req: &Req) -> Result<String, ApiError> {
    req.param_decoded("key")
        .ok_or_else(|| Error::not_found("limit").into())
}

pub(crate) async fn list_concurrency(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let page = app
        .core
        .list_concurrency_limits(req.caller()?, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn get_concurrency(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let limit = app
        .core
        .get_concurrency_limit(req.caller()?, &key(&req)?)
        .await?;
    Ok(req.ok(&limit))
}

pub(crate) async fn set_concurrency(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: SetConcurrencyLimit = req.json()?;
    let limit = app
        .core
        .set_concurrency_limit(req.caller()?, &key(&req)?, body)
        .await?;
    Ok(req.ok(&limit))
}

pub(crate) async fn delete_concurrency(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let deleted = app
        .core
        .delete_concurrency_limit(req.caller()?, &key(&req)?)
        .await?;
    Ok(req.ok(&deleted))
}

pub(crate) async fn list_rate(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let page = app
        .core
        .list_rate_limits(req.caller()?, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn get_rate(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let limit = app.core.get_rate_limit(req.caller()?, &key(&req)?).await?;
    Ok(req.ok(&limit))
}

pub(crate) async fn set_rate(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: SetRateLimit = req.json()?;
    let limit = app
        .core
        .set_rate_limit(req.caller()?, &key(&req)?, body)
        .await?;
    Ok(req.ok(&limit))
}

pub(crate) async fn delete_rate(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let deleted = app
        .core
        .delete_rate_limit(req.caller()?, &key(&req)?)
        .await?;
    Ok(req.ok(&deleted))
}
