//! The dashboard: each route's input and output types.

use super::describe::*;
use http::Method as M;

/// The dashboard.
pub(super) fn docs() -> Vec<Doc> {
    vec![
        op(M::GET, "/", "The operator dashboard", Success::Text(HTML)),
        op(M::GET, "/ui", "The operator dashboard", Success::Text(HTML)),
        op(M::GET, "/ui/{*path}", "A dashboard asset, or the dashboard for a client-side route", Success::Text(&["text/html; charset=utf-8", "text/javascript; charset=utf-8", "text/css; charset=utf-8", "image/svg+xml"])).text_params(&["path"]),
    ]
}
