//! What run control did in this process, for `/metrics`: plain counters,
//! bumped where the thing happens (a retry scheduled by any failure path, a
//! lease released, a create answered by its dedupe key, a task expired, a
//! claim refused by a flow limit).

use std::sync::atomic::AtomicU64;

/// Counters of what run control did in this process (`/metrics`).
#[derive(Debug, Default)]
pub struct RunControlCounters {
    /// Failures (of any path: reported, lease lost, timed out) that
    /// scheduled another attempt by the task's retry policy.
    pub retries_scheduled: AtomicU64,
    /// Held tasks taken back because their holder's lease ran out.
    pub leases_expired: AtomicU64,
    /// Task creates answered with the existing task of the same dedupe key
    /// instead of a new one.
    pub dedupe_hits: AtomicU64,
    /// Tasks cancelled for passing their `expires_at` before anyone
    /// claimed them.
    pub tasks_expired: AtomicU64,
    /// Claim statements a flow limit refused because a concurrent claim took
    /// the last slot or window room first (the claim ran again).
    pub limit_races: AtomicU64,
    /// Tasks first held back by a flow limit (`task.limit_waiting`).
    pub limit_waiting: AtomicU64,
}

/// The process-wide counters (every replica in the process adds to them).
pub fn counters() -> &'static RunControlCounters {
    static COUNTERS: std::sync::OnceLock<RunControlCounters> = std::sync::OnceLock::new();
    COUNTERS.get_or_init(RunControlCounters::default)
}
