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

/// `POST /remote-mcp-servers/:id/oauth/reconnect`: `{authorization_url}`;
/// the callback is on the address the admin used.
pub(crate) async fn oauth_reconnect(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let redirect_uri = format!(
        "{}/api/v1/remote-mcp-servers/oauth/callback",
        super::a2a::base_url(&req)
    );
    let started = app
        .core
        .reconnect_remote_mcp_oauth(req.caller()?, req.uuid("id")?, &redirect_uri)
        .await?;
    Ok(req.ok(&started))
}

/// `GET /remote-mcp-servers/oauth/callback?code&state` (public: the
/// browser arrives here; the one-time state authenticates it). Answers
/// `{data: server}` as JSON.
pub(crate) async fn oauth_callback(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let server = app
        .core
        .finish_remote_mcp_oauth(
            req.query_value("code").as_deref(),
            req.query_value("state").as_deref(),
            req.query_value("error").as_deref(),
        )
        .await?;
    Ok(req.ok(&server))
}

/// `POST /remote-mcp-servers/:id/oauth/disconnect`.
pub(crate) async fn oauth_disconnect(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let server = app
        .core
        .disconnect_remote_mcp_oauth(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&server))
}
