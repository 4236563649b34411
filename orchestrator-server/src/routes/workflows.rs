//! `/workflows`, work items, activations, the event feed, the operations
//! packets and `POST /workspaces/:id/planning-workflow`.

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use orchestrator_core::api::{
    CreateWorkItem, CreateWorkflow, EnqueueActivation, PlanningWorkflow, RedriveWorkflow,
    UpdateWorkItem, WorkflowAction, WorkflowEventQuery, WorkflowFilter,
};
use orchestrator_core::workflows::WorkflowOp;
use orchestrator_core::workflows::operations::{RailQuery, WorkspacePacketQuery};
use serde::Serialize;
use std::sync::Arc;

pub(crate) async fn create(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: CreateWorkflow = req.json()?;
    let (workflow, deduplicated) = app
        .core
        .create_workflow_deduped(req.caller()?, body)
        .await?;
    Ok(req.created_or_found(&workflow, deduplicated))
}

pub(crate) async fn list(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let filter: WorkflowFilter = req.query()?;
    let page = app
        .core
        .list_workflows(req.caller()?, filter, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn get(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let detail = app
        .core
        .get_workflow(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&detail))
}

pub(crate) async fn redrive(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: RedriveWorkflow = req.json()?;
    let applied = app
        .core
        .redrive_workflow(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.created(&applied))
}

#[derive(Serialize)]
struct FeedMeta {
    next_after: Option<String>,
    has_more: bool,
}

/// `{data: event[], meta: {next_after, has_more, request_id, timestamp}}`.
pub(crate) async fn events(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let query: WorkflowEventQuery = req.query()?;
    let feed = app
        .core
        .workflow_events(req.caller()?, req.uuid("id")?, query)
        .await?;
    Ok(req.ok_with_meta(
        &feed.events,
        &FeedMeta {
            next_after: feed.next_after,
            has_more: feed.has_more,
        },
    ))
}

pub(crate) async fn enqueue_activation(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: EnqueueActivation = req.json()?;
    let applied = app
        .core
        .enqueue_activation(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.created(&applied))
}

pub(crate) async fn list_activations(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let list = app
        .core
        .list_activations(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&list))
}

pub(crate) async fn board(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let board = app
        .core
        .workflow_board(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&board))
}

pub(crate) async fn stages(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let stages = app
        .core
        .workflow_stages(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&stages))
}

async fn action(app: Arc<App>, req: Req, op: WorkflowOp) -> Result<Reply, ApiError> {
    let body: WorkflowAction = req.json()?;
    let workflow = app
        .core
        .workflow_action(req.caller()?, req.uuid("id")?, op, body)
        .await?;
    Ok(req.ok(&workflow))
}

pub(crate) async fn pause(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    action(app, req, WorkflowOp::Pause).await
}

pub(crate) async fn resume(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    action(app, req, WorkflowOp::Resume).await
}

pub(crate) async fn cancel(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    action(app, req, WorkflowOp::Cancel).await
}

pub(crate) async fn create_work_item(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: CreateWorkItem = req.json()?;
    let item = app
        .core
        .create_work_item(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.created(&item))
}

pub(crate) async fn list_work_items(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let items = app
        .core
        .list_work_items(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&items))
}

pub(crate) async fn get_work_item(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let item = app
        .core
        .get_work_item(req.caller()?, req.uuid("id")?, req.uuid("work_item_id")?)
        .await?;
    Ok(req.ok(&item))
}

pub(crate) async fn update_work_item(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: UpdateWorkItem = req.json()?;
    let item = app
        .core
        .update_work_item(
            req.caller()?,
            req.uuid("id")?,
            req.uuid("work_item_id")?,
            body,
        )
        .await?;
    Ok(req.ok(&item))
}

pub(crate) async fn rail(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let query: RailQuery = req.query()?;
    let page = app
        .core
        .operations_rail(req.caller()?, query, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn operations_workspace(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let query: WorkspacePacketQuery = req.query()?;
    let packet = app
        .core
        .operations_workspace(req.caller()?, req.uuid("id")?, query)
        .await?;
    Ok(req.ok(&packet))
}

pub(crate) async fn planning_workflow(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: PlanningWorkflow = req.json()?;
    let workflow = app
        .core
        .planning_workflow(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.created(&workflow))
}
