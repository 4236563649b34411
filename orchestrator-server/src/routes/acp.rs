//! `/acp`: sessions (create or reuse, heartbeat, close, list, read) and the
//! claim that opens a session.

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use orchestrator_core::api::{AcpClaim, AcpHeartbeat, AcpSessionFilter, CreateAcpSession};
use std::sync::Arc;

/// `201` with a new session, `200` with a reused one.
pub(crate) async fn create_session(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: CreateAcpSession = req.json()?;
    let session = app.core.create_acp_session(req.caller()?, body).await?;
    Ok(if session.reused {
        req.ok(&session)
    } else {
        req.created(&session)
    })
}

pub(crate) async fn list_sessions(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let filter: AcpSessionFilter = req.query()?;
    let page = app
        .core
        .list_acp_sessions(req.caller()?, filter, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn get_session(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let session = app
        .core
        .get_acp_session(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&session))
}

pub(crate) async fn heartbeat(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: AcpHeartbeat = req.json()?;
    let session = app
        .core
        .heartbeat_acp_session(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.ok(&session))
}

pub(crate) async fn close(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let session = app
        .core
        .close_acp_session(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&session))
}

/// `204` when nothing is claimable.
pub(crate) async fn claim(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: AcpClaim = req.json()?;
    match app.core.acp_claim(req.caller()?, body).await? {
        Some(claimed) => Ok(req.ok(&claimed)),
        None => Ok(Reply::no_content()),
    }
}
