//! The operator dashboard: static assets compiled into the binary and served
//! at `/` and `/ui/...` on the API's own origin, so the session cookies
//! (`SameSite=Strict`) reach the API with no CORS.
//!
//! The assets are plain ES modules and one stylesheet from
//! `orchestrator-server/dashboard/` (no build step, nothing fetched at run
//! time). A path under `/ui/` that names no asset is a client-side route and
//! gets `index.html`; the script reads the location and draws the page.

use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use http::{HeaderValue, StatusCode, header};

/// Scripts, styles and connections only from this origin; no inline code, no
/// framing, no plugins.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; \
     form-action 'self'; frame-ancestors 'none'; object-src 'none'";

/// One embedded file: its path under `/ui/assets/`, media type and bytes.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

macro_rules! asset {
    ($name:literal, $type:expr) => {
        Asset {
            name: $name,
            content_type: $type,
            body: include_bytes!(concat!("../dashboard/", $name)),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";

const ASSETS: &[Asset] = &[
    asset!("style.css", "text/css; charset=utf-8"),
    asset!("favicon.svg", "image/svg+xml"),
    asset!("app.js", JS),
    asset!("api.js", JS),
    asset!("dom.js", JS),
    asset!("shared.js", JS),
    asset!("names.js", JS),
    asset!("pages/signin.js", JS),
    asset!("pages/rail.js", JS),
    asset!("pages/workflow.js", JS),
    asset!("pages/task.js", JS),
    asset!("pages/logs.js", JS),
    asset!("pages/launch.js", JS),
    asset!("pages/catalog.js", JS),
    asset!("pages/fleet.js", JS),
    asset!("pages/schedules.js", JS),
    asset!("pages/tasks.js", JS),
    asset!("pages/bulk.js", JS),
    asset!("pages/webhooks.js", JS),
    asset!("pages/limits.js", JS),
];

const INDEX: &[u8] = include_bytes!("../dashboard/index.html");

/// `GET /` and `GET /ui`: the dashboard's shell.
pub(crate) async fn index(
    _app: std::sync::Arc<crate::app::App>,
    _req: Req,
) -> Result<Reply, ApiError> {
    Ok(page(INDEX, "text/html; charset=utf-8", false))
}

/// `GET /ui/{*path}`: an asset, or the shell for a client-side route.
pub(crate) async fn asset(
    _app: std::sync::Arc<crate::app::App>,
    req: Req,
) -> Result<Reply, ApiError> {
    let path = req.param("path").unwrap_or_default();
    match path.strip_prefix("assets/") {
        Some(name) => match ASSETS.iter().find(|a| a.name == name) {
            Some(found) => Ok(page(found.body, found.content_type, true)),
            None => Err(ApiError::RouteNotFound {
                path: format!("/ui/{path}"),
            }),
        },
        None => Ok(page(INDEX, "text/html; charset=utf-8", false)),
    }
}

fn page(body: &'static [u8], content_type: &'static str, cacheable: bool) -> Reply {
    // Assets change with the binary; a short cache keeps upgrades visible.
    let cache = if cacheable {
        "public, max-age=300"
    } else {
        "no-cache"
    };
    Reply::bytes(StatusCode::OK, body)
        .with_header(header::CONTENT_TYPE, HeaderValue::from_static(content_type))
        .with_header(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY),
        )
        .with_header(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        )
        .with_header(
            header::REFERRER_POLICY,
            HeaderValue::from_static("same-origin"),
        )
        .with_header(header::CACHE_CONTROL, HeaderValue::from_static(cache))
}
