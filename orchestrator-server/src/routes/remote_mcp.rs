//! `/remote-mcp-servers` (admin): list, create (verified first), get,
//! replace (verified first), delete, reverify.

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use orchestrator_core::api::RemoteMcpServerRequest;
use std::sync::Arc;

pub(crate) async fn list(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let page = app
        .core
        .list_remote_mcp_servers(req.caller()?, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn create(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: RemoteMcpServerRequest = req.json()?;
    let server = app
        .core
        .create_remote_mcp_server(req.caller()?, body)
        .await?;
    Ok(req.created(&server))
}

pub(crate) async fn get(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let server = app
        .core
        .get_remote_mcp_server(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&server))
}

pub(crate) async fn replace(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: RemoteMcpServerRequest = req.json()?;
    let server = app
        .core
        .replace_remote_mcp_server(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.ok(&server))
}

pub(crate) async fn delete(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let server = app
        .core
        .delete_remote_mcp_server(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&server))
}

pub(crate) async fn reverify(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let server = app
        .core
        .reverify_remote_mcp_server(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&server))
}
