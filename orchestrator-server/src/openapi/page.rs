//! The API reference page at `/api/docs`.

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use http::{HeaderValue, StatusCode, header};
use std::sync::Arc;

/// The reference page's files, compiled in (`orchestrator-server/docs-assets/`:
/// our own small page, no third-party code, nothing fetched at run time).
const DOCS_INDEX: &[u8] = include_bytes!("../../docs-assets/index.html");
const DOCS_ASSETS: &[(&str, &str, &[u8])] = &[
    (
        "docs.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../docs-assets/docs.js"),
    ),
    (
        "docs.css",
        "text/css; charset=utf-8",
        include_bytes!("../../docs-assets/docs.css"),
    ),
];

/// Scripts, styles and the document only from this origin.
const DOCS_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'; object-src 'none'";

fn docs_reply(body: &'static [u8], content_type: &'static str) -> Reply {
    Reply::bytes(StatusCode::OK, body)
        .with_header(header::CONTENT_TYPE, HeaderValue::from_static(content_type))
        .with_header(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(DOCS_CSP),
        )
        .with_header(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        )
        .with_header(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"))
}

/// `GET /api/docs`: the reference page.
pub(crate) async fn docs_page(_app: Arc<App>, _req: Req) -> Result<Reply, ApiError> {
    Ok(docs_reply(DOCS_INDEX, "text/html; charset=utf-8"))
}

/// `GET /api/docs/{asset}`: the page's script and stylesheet.
pub(crate) async fn docs_asset(_app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let name = req.param("asset").unwrap_or_default();
    match DOCS_ASSETS.iter().find(|(n, _, _)| *n == name) {
        Some((_, content_type, body)) => Ok(docs_reply(body, content_type)),
        None => Err(ApiError::RouteNotFound {
            path: format!("/api/docs/{name}"),
        }),
    }
}
