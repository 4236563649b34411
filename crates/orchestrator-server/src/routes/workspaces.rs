//! `/workspaces`: create, list, get, patch, memory.

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use orchestrator_core::api::workspaces::{
    CreateWorkspace, PatchWorkspace, SetMemory, WorkspaceFilter,
};
use std::sync::Arc;

pub(crate) async fn create(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: CreateWorkspace = req.json()?;
    let workspace = app.core.create_workspace(req.caller()?, body).await?;
    Ok(req.created(&workspace))
}

pub(crate) async fn list(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let filter = WorkspaceFilter {
        q: req.query_value("q"),
        is_active: match req.query_value("is_active").as_deref() {
            None | Some("") => None,
            Some("true") => Some(true),
            Some("false") => Some(false),
            Some(_) => {
                return Err(orchestrator_core::Error::invalid_field(
                    "is_active",
                    "must be true or false",
                )
                .into());
            }
        },
    };
    let page = app
        .core
        .list_workspaces(req.caller()?, filter, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn get(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let workspace = app
        .core
        .get_workspace(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&workspace))
}

pub(crate) async fn patch(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: PatchWorkspace = req.json()?;
    let workspace = app
        .core
        .patch_workspace(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.ok(&workspace))
}

pub(crate) async fn set_memory(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: SetMemory = req.json()?;
    let workspace = app
        .core
        .set_workspace_memory(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.ok(&workspace))
}

pub(crate) async fn delete_memory(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let key = req
        .param_decoded("key")
        .ok_or_else(|| orchestrator_core::Error::not_found("memory key"))?;
    let workspace = app
        .core
        .delete_workspace_memory(req.caller()?, req.uuid("id")?, &key)
        .await?;
    Ok(req.ok(&workspace))
}
