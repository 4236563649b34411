//! `/playbooks`: revisioned playbooks (create, list, get, PATCH/PUT revise,
//! archive, revisions, delete-impact, delete, permanent delete).

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use orchestrator_core::api::playbooks::{ArchivePlaybook, CreatePlaybook, PatchPlaybook};
use std::sync::Arc;

pub(crate) async fn create(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: CreatePlaybook = req.json()?;
    let playbook = app.core.create_playbook(req.caller()?, body).await?;
    Ok(req.created(&playbook))
}

pub(crate) async fn list(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let page = app
        .core
        .list_playbooks(req.caller()?, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn get(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let playbook = app
        .core
        .get_playbook(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&playbook))
}

pub(crate) async fn revisions(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let page = app
        .core
        .list_playbook_revisions(req.caller()?, req.uuid("id")?, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn patch(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: PatchPlaybook = req.json()?;
    let playbook = app
        .core
        .patch_playbook(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.ok(&playbook))
}

pub(crate) async fn replace(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: CreatePlaybook = req.json()?;
    let playbook = app
        .core
        .replace_playbook(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.ok(&playbook))
}

pub(crate) async fn archive(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: ArchivePlaybook = req.json()?;
    let playbook = app
        .core
        .archive_playbook(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.ok(&playbook))
}

pub(crate) async fn delete_impact(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let impact = app
        .core
        .playbook_delete_impact(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&impact))
}

pub(crate) async fn delete(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let deleted = app
        .core
        .delete_playbook(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&deleted))
}

pub(crate) async fn delete_permanent(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let deleted = app
        .core
        .delete_playbook_permanently(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&deleted))
}
