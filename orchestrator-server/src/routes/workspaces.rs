//! `/workspaces`: create, list, get, patch, memory, spec, timeline,
//! verify-git-access, files and artifacts.

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use orchestrator_core::api::workspaces::{
    ArtifactFilter, BatchUpload, CreateWorkspace, FileUpload, PatchWorkspace, PutWorkspaceSpec,
    SetMemory, UploadArtifact, VerifyGitAccess, WorkspaceFilter,
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

pub(crate) async fn get_spec(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let version = match req.query_value("version") {
        None => None,
        Some(raw) => Some(
            raw.trim()
                .parse::<i32>()
                .ok()
                .filter(|v| *v >= 0)
                .ok_or_else(|| {
                    orchestrator_core::Error::invalid_field(
                        "version",
                        "must be a non-negative integer",
                    )
                })?,
        ),
    };
    let spec = app
        .core
        .get_workspace_spec(req.caller()?, req.uuid("id")?, version)
        .await?;
    Ok(req.ok(&spec))
}

pub(crate) async fn put_spec(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: PutWorkspaceSpec = req.json()?;
    let spec = app
        .core
        .put_workspace_spec(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.ok(&spec))
}

pub(crate) async fn timeline(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let page = app
        .core
        .workspace_timeline(req.caller()?, req.uuid("id")?, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn verify_git(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: VerifyGitAccess = req.json()?;
    let packet = app
        .core
        .verify_git_access(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.ok(&packet))
}

pub(crate) async fn list_files(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let page = app
        .core
        .list_workspace_files(req.caller()?, req.uuid("id")?, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn upload_file(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: FileUpload = req.json()?;
    let file = app
        .core
        .upload_workspace_file(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.created(&file))
}

pub(crate) async fn upload_batch(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: BatchUpload = req.json()?;
    let files = app
        .core
        .upload_workspace_files(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.created(&files))
}

pub(crate) async fn delete_file(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let file = app
        .core
        .delete_workspace_file(req.caller()?, req.uuid("id")?, req.uuid("file_id")?)
        .await?;
    Ok(req.ok(&file))
}

pub(crate) async fn file_content(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let download = app
        .core
        .open_workspace_file(req.caller()?, req.uuid("id")?, req.uuid("file_id")?)
        .await?;
    Ok(crate::download::reply(&req, download))
}

pub(crate) async fn list_artifacts(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let filter: ArtifactFilter = req.query()?;
    let page = app
        .core
        .list_artifacts(req.caller()?, req.uuid("id")?, filter, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn upload_artifact(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: UploadArtifact = req.json()?;
    let artifact = app
        .core
        .upload_artifact(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.created(&artifact))
}

pub(crate) async fn artifact_content(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let download = app
        .core
        .open_artifact(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(crate::download::reply(&req, download))
}
