//! `/healthz` (the process answers), `/readyz` (and its database does) and
//! `/api/v1/version`.

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use orchestrator_core::api::ServerVersion;
use serde_json::json;
use std::sync::Arc;

pub(crate) async fn live(_app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    Ok(req.ok(&json!({ "status": "ok", "version": SERVER_VERSION })))
}

/// The server's release (the workspace version it was built from).
const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// `GET /api/v1/version` (no credentials): what clients compare against
/// their own version (`orch version`).
pub(crate) async fn version(_app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    Ok(req.ok(&ServerVersion {
        version: SERVER_VERSION.to_owned(),
        api_version: "v1".to_owned(),
    }))
}

pub(crate) async fn ready(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    app.core.ready().await?;
    Ok(req.ok(&json!({ "status": "ready", "database": app.core.store().dialect().as_str() })))
}
