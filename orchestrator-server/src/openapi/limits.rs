//! Flow limits (issue 31): each route's input and output types.

use super::describe::*;
use http::Method as M;
use orchestrator_core::api::*;

/// Concurrency limits and rate limits per key.
pub(super) fn docs() -> Vec<Doc> {
    vec![
        op(M::GET, "/api/v1/concurrency-limits", "Every concurrency key with a limit or a task: limit, held, pending", page::<ConcurrencyLimit>()).paged(),
        op(M::GET, "/api/v1/concurrency-limits/{key}", "One concurrency key", ok::<ConcurrencyLimit>()),
        op(M::PUT, "/api/v1/concurrency-limits/{key}", "Set a key's concurrency limit (1 to 100,000; a key without one has limit 1)", ok::<ConcurrencyLimit>()).body::<SetConcurrencyLimit>(),
        op(M::DELETE, "/api/v1/concurrency-limits/{key}", "Remove a key's limit (back to 1)", ok::<DeletedLimit>()),
        op(M::GET, "/api/v1/rate-limits", "Every rate limit: limit, period, claims in the current window, pending", page::<RateLimit>()).paged(),
        op(M::GET, "/api/v1/rate-limits/{key}", "One rate limit", ok::<RateLimit>()),
        op(M::PUT, "/api/v1/rate-limits/{key}", "Set a key's rate limit: at most `limit` claims in any window of `period_seconds`", ok::<RateLimit>()).body::<SetRateLimit>(),
        op(M::DELETE, "/api/v1/rate-limits/{key}", "Remove a rate limit (tasks may no longer name the key)", ok::<DeletedLimit>()),
    ]
}
