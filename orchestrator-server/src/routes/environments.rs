//! `/execution-environments`: create (by hand or from the catalog), list,
//! get, patch, delete, verify, support posture, and the catalog listing.

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use orchestrator_core::Error;
use orchestrator_core::api::environments::{
    CompatibilityStatus, CreateExecutionEnvironment, CreateFromCatalog, EnvironmentFilter,
    PatchExecutionEnvironment, SetSupportStatus,
};
use std::sync::Arc;

pub(crate) async fn create(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: CreateExecutionEnvironment = req.json()?;
    let environment = app.core.create_environment(req.caller()?, body).await?;
    Ok(req.created(&environment))
}

pub(crate) async fn from_catalog(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: CreateFromCatalog = req.json()?;
    let environment = app
        .core
        .create_environment_from_catalog(req.caller()?, body)
        .await?;
    Ok(req.created(&environment))
}

pub(crate) async fn catalog(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    req.caller()?;
    Ok(req.ok(&app.core.environment_catalog()?))
}

pub(crate) async fn list(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let compatibility_status = match req.query_value("compatibility_status").as_deref() {
        None | Some("") => None,
        Some(text) => Some(CompatibilityStatus::parse(text).ok_or_else(|| {
            Error::invalid_field(
                "compatibility_status",
                "must be unknown, compatible or incompatible",
            )
        })?),
    };
    let filter = EnvironmentFilter {
        compatibility_status,
        support_status: req.query_value("support_status").filter(|s| !s.is_empty()),
        q: req.query_value("q"),
    };
    let page = app
        .core
        .list_environments(req.caller()?, filter, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn get(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let environment = app
        .core
        .get_environment(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&environment))
}

pub(crate) async fn patch(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: PatchExecutionEnvironment = req.json()?;
    let environment = app
        .core
        .patch_environment(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.ok(&environment))
}

pub(crate) async fn delete(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let environment = app
        .core
        .delete_environment(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&environment))
}

pub(crate) async fn verify(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let verification = app
        .core
        .verify_environment(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&verification))
}

pub(crate) async fn support(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: SetSupportStatus = req.json()?;
    let environment = app
        .core
        .set_environment_support(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.ok(&environment))
}
