//! `/agents` and `/workers`: registration, heartbeats, reads, `next`.

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use orchestrator_core::api::{
    AgentFilter, ClaimBatch, RegisterAgent, RegisterWorker, WorkerHeartbeat, WorkerNext,
};
use std::sync::Arc;

pub(crate) async fn register(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: RegisterAgent = req.json()?;
    let agent = app.core.register_agent(req.caller()?, body).await?;
    Ok(req.created(&agent))
}

pub(crate) async fn heartbeat(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let ack = app
        .core
        .agent_heartbeat(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&ack))
}

pub(crate) async fn list(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let filter: AgentFilter = req.query()?;
    let page = app
        .core
        .list_agents_matching(req.caller()?, filter, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn get(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let agent = app.core.get_agent(req.caller()?, req.uuid("id")?).await?;
    Ok(req.ok(&agent))
}

pub(crate) async fn register_worker(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: RegisterWorker = req.json()?;
    let scheme = if req.is_https() { "wss" } else { "ws" };
    let base = req.header("host").map(|host| format!("{scheme}://{host}"));
    let worker = app
        .core
        .register_worker(req.caller()?, body, base.as_deref())
        .await?;
    Ok(req.created(&worker))
}

pub(crate) async fn worker_heartbeat(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: WorkerHeartbeat = req.json()?;
    let ack = app
        .core
        .worker_heartbeat(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.ok(&ack))
}

pub(crate) async fn worker_next(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: WorkerNext = req.json()?;
    match app
        .core
        .worker_next(req.caller()?, req.uuid("id")?, body)
        .await?
    {
        Some(task) => Ok(req.ok(&task)),
        None => Ok(Reply::no_content()),
    }
}

/// `POST /workers/:id/claim-batch` (beyond the contract): `200` with the
/// claimed tasks, an empty list when there were none.
pub(crate) async fn worker_claim_batch(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: ClaimBatch = req.json()?;
    let claimed = app
        .core
        .claim_batch(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.ok(&claimed))
}

pub(crate) async fn list_workers(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let page = app
        .core
        .list_workers(req.caller()?, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn get_worker(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let worker = app.core.get_worker(req.caller()?, req.uuid("id")?).await?;
    Ok(req.ok(&worker))
}

/// `DELETE /workers/:id` (admin, beyond the contract).
pub(crate) async fn delete_worker(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let deleted = app
        .core
        .delete_worker(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&deleted))
}
