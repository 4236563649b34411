//! `/community-catalog/playbooks` (admin): list, detail, import-preview,
//! import; and the tenant's imported `/specialists` and `/skills`.

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use orchestrator_core::api::catalog::{CatalogArtifactType, ImportRequest};
use std::sync::Arc;

fn catalog_id(req: &Req) -> Result<String, ApiError> {
    req.param_decoded("id")
        .ok_or_else(|| orchestrator_core::Error::not_found("catalog playbook").into())
}

pub(crate) async fn list(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let entries = app.core.list_catalog_playbooks(req.caller()?).await?;
    Ok(req.ok(&entries))
}

pub(crate) async fn get(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let detail = app
        .core
        .get_catalog_playbook(req.caller()?, &catalog_id(&req)?)
        .await?;
    Ok(req.ok(&detail))
}

pub(crate) async fn preview(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let preview = app
        .core
        .preview_catalog_import(req.caller()?, &catalog_id(&req)?)
        .await?;
    Ok(req.ok(&preview))
}

pub(crate) async fn import(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    // The body is optional: none means "no decisions".
    let body: ImportRequest = if req.body.iter().all(u8::is_ascii_whitespace) {
        ImportRequest::default()
    } else {
        req.json()?
    };
    let result = app
        .core
        .import_catalog_playbook(req.caller()?, &catalog_id(&req)?, body)
        .await?;
    Ok(req.created(&result))
}

pub(crate) async fn specialists(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let page = app
        .core
        .list_library(
            req.caller()?,
            CatalogArtifactType::Specialist,
            req.page_request()?,
        )
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn skills(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let page = app
        .core
        .list_library(
            req.caller()?,
            CatalogArtifactType::Skill,
            req.page_request()?,
        )
        .await?;
    Ok(req.page(&page))
}
