//! Flow limits (run control §6): concurrency limits and rate limits per key.

use serde::{Deserialize, Serialize};

/// `PUT /api/v1/concurrency-limits/:key`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SetConcurrencyLimit {
    /// 1 to 100,000 tasks with the key held at once.
    pub limit: i64,
}

/// One concurrency key: its limit (1 when none is set) and its tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ConcurrencyLimit {
    /// The concurrency key, as tasks name it in `concurrency_key`.
    pub key: String,
    /// How many tasks with the key may be held at once (1 when none is set).
    pub limit: i64,
    /// Tasks with the key that are claimed or in progress.
    pub held: i64,
    /// Tasks with the key that are pending.
    pub pending: i64,
}

/// `PUT /api/v1/rate-limits/:key`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SetRateLimit {
    /// 1 to 1,000,000 claims per window.
    pub limit: i64,
    /// 1 to 86,400: the window's length.
    pub period_seconds: i64,
}

/// One rate key: its limit and how much of the current window is used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RateLimit {
    /// The rate limit key, as tasks name it in `rate_limit_key`.
    pub key: String,
    /// How many claims of tasks with the key one window allows.
    pub limit: i64,
    /// The window's length in seconds.
    pub period_seconds: i64,
    /// Claims of tasks with the key within the last `period_seconds`.
    pub claimed_in_window: i64,
    /// Tasks with the key that are pending.
    pub pending: i64,
}

/// `DELETE /api/v1/concurrency-limits/:key` and `/rate-limits/:key`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeletedLimit {
    /// The key whose limit was removed.
    pub key: String,
    /// Always true: the limit is gone.
    pub deleted: bool,
}
