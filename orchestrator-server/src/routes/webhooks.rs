//! `/webhooks` (admin): outbound webhooks, their delivery log, redeliver
//! and test sends.

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use orchestrator_core::api::{CreateWebhook, DeliveryFilter, UpdateWebhook};
use std::sync::Arc;

pub(crate) async fn list(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let page = app
        .core
        .list_webhooks(req.caller()?, req.page_request()?)
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn create(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: CreateWebhook = req.json()?;
    let created = app.core.create_webhook(req.caller()?, body).await?;
    Ok(req.created(&created))
}

pub(crate) async fn get(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let webhook = app.core.get_webhook(req.caller()?, req.uuid("id")?).await?;
    Ok(req.ok(&webhook))
}

pub(crate) async fn update(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: UpdateWebhook = req.json()?;
    let webhook = app
        .core
        .update_webhook(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.ok(&webhook))
}

pub(crate) async fn delete(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let deleted = app
        .core
        .delete_webhook(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&deleted))
}

pub(crate) async fn rotate_secret(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let rotated = app
        .core
        .rotate_webhook_secret(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&rotated))
}

pub(crate) async fn test(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let attempt = app
        .core
        .test_webhook(req.caller()?, req.uuid("id")?)
        .await?;
    Ok(req.ok(&attempt))
}

pub(crate) async fn deliveries(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let filter: DeliveryFilter = req.query()?;
    let page = app
        .core
        .list_webhook_deliveries(req.caller()?, req.uuid("id")?, filter)
        .await?;
    Ok(req.page(&page))
}

pub(crate) async fn redeliver(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let attempt = app
        .core
        .redeliver_webhook_delivery(req.caller()?, req.uuid("id")?, req.uuid("delivery_id")?)
        .await?;
    Ok(req.accepted(&attempt))
}
