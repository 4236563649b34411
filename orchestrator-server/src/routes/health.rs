//! `/healthz` (the process answers) and `/readyz` (and its database does).

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use serde_json::json;
use std::sync::Arc;

pub(crate) async fn live(_app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    Ok(req.ok(&json!({ "status": "ok" })))
}

pub(crate) async fn ready(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    app.core.ready().await?;
    Ok(req.ok(&json!({ "status": "ready", "database": app.core.store().dialect().as_str() })))
}
