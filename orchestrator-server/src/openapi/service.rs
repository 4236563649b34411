//! Health, version, metrics and this document: each route's input and output types.

use super::describe::*;
use http::Method as M;
use orchestrator_core::api::*;
use serde_json::Value;

/// Health, version, metrics and this document.
pub(super) fn docs() -> Vec<Doc> {
    vec![
        op(M::GET, "/healthz", "Liveness", ok::<Liveness>()),
        op(M::GET, "/readyz", "Readiness (the database answers)", ok::<Readiness>()),
        op(M::GET, "/api/v1/version", "The server's version", ok::<ServerVersion>()),
        op(M::GET, "/metrics", "Prometheus metrics", Success::Text(&["text/plain; version=0.0.4"])),
        op(M::GET, "/api/v1/openapi.json", "This document", plain::<Value>()),
        op(M::GET, "/api/docs", "The API reference page", Success::Text(HTML)),
        op(M::GET, "/api/docs/{asset}", "A file of the reference page", Success::Text(&["text/javascript; charset=utf-8", "text/css; charset=utf-8"])).text_params(&["asset"]),
    ]
}
