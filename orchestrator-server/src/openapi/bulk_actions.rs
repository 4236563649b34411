//! Bulk actions: each route's input and output types.

use super::describe::*;
use http::Method as M;
use orchestrator_core::api::*;

/// Bulk actions.
pub(super) fn docs() -> Vec<Doc> {
    vec![
        op(M::POST, "/api/v1/bulk-actions", "Start a bulk action over tasks or workflows (ids or a filter; dry_run only counts)", accepted::<BulkAction>()).body::<CreateBulkAction>(),
        op(M::GET, "/api/v1/bulk-actions", "List bulk actions, newest first", page::<BulkAction>()).paged(),
        op(M::GET, "/api/v1/bulk-actions/{id}", "Get a bulk action and its counts", ok::<BulkAction>()),
        op(M::POST, "/api/v1/bulk-actions/{id}/cancel", "Stop a running bulk action (what was applied stays)", ok::<BulkAction>()),
    ]
}
