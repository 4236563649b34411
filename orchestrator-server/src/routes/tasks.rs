//! `/tasks`: create, list, read, claim and the lifecycle operations.

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use crate::routes::events;
use http::StatusCode;
use orchestrator_core::api::{
    ClaimCredentials, ClaimTask, CompleteBatch, CompleteTask, CreateBatch, CreateHandoff,
    CreateTask, EventFilter, FailTask, IssueTaskToken, RescheduleTask, StartTask, TaskAction,
    TaskFilter, TaskHeartbeat,
};
use orchestrator_core::tasks::state::TaskOp;
use std::sync::Arc;

pub(crate) async fn create(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: CreateTask = req.json()?;
    let (task, deduplicated) = app.core.create_task_deduped(req.caller()?, body).await?;
    Ok(req.created_or_found(&task, deduplicated))
}

/// `POST /tasks/:id/heartbeat` (run control §4).
pub(crate) async fn heartbeat(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: TaskHeartbeat = req.json()?;
    let ack = app
        .core
        .heartbeat_task(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.ok(&ack))
}

/// `POST /tasks/:id/reschedule` (run control §3).
pub(crate) async fn reschedule(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: RescheduleTask = req.json()?;
    let task = app
        .core
        .reschedule_task(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.ok(&task))
}

pub(crate) async fn list(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let filter: TaskFilter = req.query()?;
    let page = app
        .core
        .list_tasks(req.caller()?, filter, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn get(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let task = app.core.get_task(req.caller()?, req.uuid("id")?).await?;
    Ok(req.ok(&task))
}

pub(crate) async fn claim(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: ClaimTask = req.json()?;
    match app.core.claim_task(req.caller()?, body).await? {
        Some(task) => Ok(req.ok(&task)),
        None => Ok(Reply::no_content()),
    }
}

/// `POST /tasks/:id/token` (issue 11): a credential limited to this task.
pub(crate) async fn issue_token(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: IssueTaskToken = req.json()?;
    let token = app
        .core
        .issue_task_token(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.created(&token))
}

pub(crate) async fn start(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: StartTask = req.json()?;
    let task = app
        .core
        .start_task(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.ok(&task))
}

pub(crate) async fn complete(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: CompleteTask = req.json()?;
    let task = app
        .core
        .complete_task(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.ok(&task))
}

/// `POST /tasks/create-batch` (beyond the contract): `200` with one answer
/// per item, each created or refused on its own.
pub(crate) async fn create_batch(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: CreateBatch = req.json()?;
    let answers = app.core.create_batch(req.caller()?, body).await?;
    Ok(req.ok(&answers))
}

/// `POST /tasks/complete-batch` (beyond the contract): `200` with one
/// answer per item, each completed or refused on its own.
pub(crate) async fn complete_batch(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: CompleteBatch = req.json()?;
    let answers = app.core.complete_batch(req.caller()?, body).await?;
    Ok(req.ok(&answers))
}

pub(crate) async fn fail(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: FailTask = req.json()?;
    let task = app
        .core
        .fail_task(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.ok(&task))
}

async fn action(app: Arc<App>, req: Req, op: TaskOp) -> Result<Reply, ApiError> {
    let body: TaskAction = req.json()?;
    let task = app
        .core
        .task_action(req.caller()?, req.uuid("id")?, op, body)
        .await?;
    Ok(req.ok(&task))
}

pub(crate) async fn retry(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    action(app, req, TaskOp::Retry).await
}

pub(crate) async fn request_changes(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    action(app, req, TaskOp::RequestChanges).await
}

pub(crate) async fn reassign(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    action(app, req, TaskOp::Reassign).await
}

pub(crate) async fn skip(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    action(app, req, TaskOp::Skip).await
}

pub(crate) async fn escalate(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    action(app, req, TaskOp::Escalate).await
}

pub(crate) async fn resolve_escalation(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    action(app, req, TaskOp::ResolveEscalation).await
}

pub(crate) async fn approve_output(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    action(app, req, TaskOp::ApproveOutput).await
}

pub(crate) async fn cancel(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    action(app, req, TaskOp::Cancel).await
}

pub(crate) async fn context(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let query = req.query()?;
    let packet = app
        .core
        .task_context(req.caller()?, req.uuid("id")?, query)
        .await?;
    Ok(req.ok(&packet))
}

pub(crate) async fn git(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let git = app.core.task_git(req.caller()?, req.uuid("id")?).await?;
    Ok(req.ok(&git))
}

pub(crate) async fn claim_credentials(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: ClaimCredentials = req.json()?;
    let resolved = app
        .core
        .claim_credentials(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.ok(&resolved))
}

pub(crate) async fn create_handoff(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: CreateHandoff = req.json()?;
    let handoff = app
        .core
        .create_handoff(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.created(&handoff))
}

pub(crate) async fn list_handoffs(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let handoffs = app
        .core
        .list_handoffs(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&handoffs))
}

/// `GET /tasks/:id/stream`: `409 {"error": "task_not_streaming"}` unless the
/// task is claimed or in progress; then the task's events as SSE frames
/// (`id:`, `event:`, `data:`): every stored one (or those after
/// `Last-Event-ID` / `after`), then live ones as they are written.
pub(crate) async fn stream(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let id = req.uuid("id")?;
    if !app.core.task_is_streaming(req.caller()?, id).await? {
        return Ok(Reply::plain(
            StatusCode::CONFLICT,
            &serde_json::json!({ "error": "task_not_streaming" }),
        ));
    }
    let query: TaskStreamQuery = req.query()?;
    let filter = EventFilter {
        entity_type: Some("task".into()),
        entity_id: Some(id),
        after: Some(query.after.unwrap_or(0)),
        ..EventFilter::default()
    };
    events::follow(app, &req, filter).await
}

/// The one query parameter of `GET /tasks/:id/stream`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskStreamQuery {
    after: Option<i64>,
}

pub(crate) async fn add_artifact(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: orchestrator_core::api::TaskArtifact = req.json()?;
    let artifact = app
        .core
        .add_task_artifact(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.created(&artifact))
}
