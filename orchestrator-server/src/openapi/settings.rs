//! Tenant settings: each route's input and output types.

use super::describe::*;
use http::Method as M;
use orchestrator_core::api::settings::{LlmSettings, PutLlmSettings};

/// Tenant settings.
pub(super) fn docs() -> Vec<Doc> {
    vec![
        op(M::GET, "/api/v1/settings/llm", "The tenant's LLM settings", ok::<LlmSettings>()),
        op(M::PUT, "/api/v1/settings/llm", "Replace the tenant's LLM settings", ok::<LlmSettings>()).body::<PutLlmSettings>(),
    ]
}
