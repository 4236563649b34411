//! `/settings/llm` (admin): the tenant's LLM provider; secrets write-only.

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use orchestrator_core::api::PutLlmSettings;
use std::sync::Arc;

pub(crate) async fn get_llm(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let settings = app.core.get_llm_settings(req.caller()?).await?;
    Ok(req.ok(&settings))
}

pub(crate) async fn put_llm(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: PutLlmSettings = req.json()?;
    let settings = app.core.put_llm_settings(req.caller()?, body).await?;
    Ok(req.ok(&settings))
}
