//! The run-control rows of the route table: schedules, bulk actions,
//! outbound webhooks and flow limits (all admin). Kept apart so the main table stays
//! readable; [`super::table`] appends them.

use super::{Route, bulk_actions, limits, schedules, webhooks};
use http::Method as M;
use orchestrator_core::api::Scope::Admin;

/// The run-control routes.
pub(super) fn routes() -> Vec<Route> {
    vec![
        // Schedules (issue 29)
        Route::scoped(M::POST, "/api/v1/schedules", Admin, schedules::create),
        Route::scoped(M::GET, "/api/v1/schedules", Admin, schedules::list),
        Route::scoped(
            M::POST,
            "/api/v1/schedules/preview",
            Admin,
            schedules::preview,
        ),
        Route::scoped(M::GET, "/api/v1/schedules/{id}", Admin, schedules::get),
        Route::scoped(M::PATCH, "/api/v1/schedules/{id}", Admin, schedules::patch),
        Route::scoped(
            M::DELETE,
            "/api/v1/schedules/{id}",
            Admin,
            schedules::delete,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/schedules/{id}/pause",
            Admin,
            schedules::pause,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/schedules/{id}/resume",
            Admin,
            schedules::resume,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/schedules/{id}/trigger",
            Admin,
            schedules::trigger,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/schedules/{id}/backfill",
            Admin,
            schedules::backfill,
        ),
        Route::scoped(
            M::GET,
            "/api/v1/schedules/{id}/runs",
            Admin,
            schedules::runs,
        ),
        // Bulk actions (issue 32)
        Route::scoped(M::GET, "/api/v1/bulk-actions", Admin, bulk_actions::list),
        Route::scoped(M::POST, "/api/v1/bulk-actions", Admin, bulk_actions::create),
        Route::scoped(
            M::GET,
            "/api/v1/bulk-actions/{id}",
            Admin,
            bulk_actions::get,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/bulk-actions/{id}/cancel",
            Admin,
            bulk_actions::cancel,
        ),
        // Outbound webhooks (issue 32)
        Route::scoped(M::GET, "/api/v1/webhooks", Admin, webhooks::list),
        Route::scoped(M::POST, "/api/v1/webhooks", Admin, webhooks::create),
        Route::scoped(M::GET, "/api/v1/webhooks/{id}", Admin, webhooks::get),
        Route::scoped(M::PATCH, "/api/v1/webhooks/{id}", Admin, webhooks::update),
        Route::scoped(M::DELETE, "/api/v1/webhooks/{id}", Admin, webhooks::delete),
        Route::scoped(
            M::POST,
            "/api/v1/webhooks/{id}/rotate-secret",
            Admin,
            webhooks::rotate_secret,
        ),
        Route::scoped(M::POST, "/api/v1/webhooks/{id}/test", Admin, webhooks::test),
        Route::scoped(
            M::GET,
            "/api/v1/webhooks/{id}/deliveries",
            Admin,
            webhooks::deliveries,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver",
            Admin,
            webhooks::redeliver,
        ),
        // Flow limits (issue 31)
        Route::scoped(
            M::GET,
            "/api/v1/concurrency-limits",
            Admin,
            limits::list_concurrency,
        ),
        Route::scoped(
            M::GET,
            "/api/v1/concurrency-limits/{key}",
            Admin,
            limits::get_concurrency,
        ),
        Route::scoped(
            M::PUT,
            "/api/v1/concurrency-limits/{key}",
            Admin,
            limits::set_concurrency,
        ),
        Route::scoped(
            M::DELETE,
            "/api/v1/concurrency-limits/{key}",
            Admin,
            limits::delete_concurrency,
        ),
        Route::scoped(M::GET, "/api/v1/rate-limits", Admin, limits::list_rate),
        Route::scoped(M::GET, "/api/v1/rate-limits/{key}", Admin, limits::get_rate),
        Route::scoped(M::PUT, "/api/v1/rate-limits/{key}", Admin, limits::set_rate),
        Route::scoped(
            M::DELETE,
            "/api/v1/rate-limits/{key}",
            Admin,
            limits::delete_rate,
        ),
    ]
}
