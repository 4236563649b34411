//! Flow limits (run control §6): concurrency keys, fair claiming across
//! keys, and rate limits per key, all conditions of the one claim statement
//! (`lifecycle::claim`).
//!
//! # Rows
//!
//! - `concurrency_keys`: one row per key of a tenant that has a limit or
//!   ever had a task (created by the task create, `prepare_keys`), with
//!   `held` (its claimed and in-progress tasks) and `last_claimed_at`. A
//!   key without a limit set has limit 1. The row with the empty key is the
//!   group of tasks without a key (keys are 1 to 200 characters).
//! - `rate_limits`: the limit and period of each rate key, and
//!   `rate_limit_claims`: the claims of each rate key within its window
//!   (epoch milliseconds), pruned as claims come.
//!
//! `held`, `last_claimed_at`, the claim log and its count are written by
//! database triggers (migrations 0020 and 0021) in the transaction that moves the task, on
//! every path: a claim takes a slot, and a completion, failure, cancel,
//! retry, lease expiry or release frees it. Nothing is counted in memory,
//! so replicas agree and a crash loses nothing.
//!
//! # Enforcement
//!
//! Every candidate of the claim statement is filtered by `limits_allow!`:
//! a task whose key has `held >= limit`, or whose rate key already has
//! `limit` claims in the last `period_seconds`, is skipped (it stays
//! `pending`) and the walk goes on to the next eligible task. A task with
//! no keys pays two `IS NULL` tests. Concurrent claims on PostgreSQL
//! (READ COMMITTED, `SKIP LOCKED`) can both pass the filter; the trigger
//! then takes the key row's lock, reads its latest count and aborts the
//! second claim's statement when it would go over (`orch: flow limit
//! reached`), which the claim runs again (`is_limit_race`): the limit
//! holds by construction, whatever the number of replicas.
//!
//! # Fairness
//!
//! Among claimable tasks of one priority, the claim takes the group (a
//! concurrency key, or all tasks without one) whose last claim is oldest,
//! then its oldest task. The structure is a per-key `last_claimed_at`
//! column (on the `concurrency_keys` row the claim already updates for the
//! slot count, so it costs no extra write) that the claim walks in order
//! through the index `concurrency_keys_fair`; chosen over a rotating cursor
//! because a cursor is one more hot row every claim of the tenant would
//! write, and the per-key time is exact across replicas.
//!
//! Cost, while the tenant has a pending task with a concurrency key (else,
//! one probe of the partial index `tasks_keyed_claimable` finds none and the
//! claim walks the claim-order index as before, and a task without keys pays
//! two `IS NULL` tests): one claim-order probe for the top priority, then a
//! walk of the groups by last claim that stops at the first with an
//! eligible task of that priority (one probe of `tasks_keyed_claimable` per
//! group visited: usually one, at most the number of keys), then the task.
//! Tasks without a key have an index of their own
//! (`tasks_claimable_keyless`), so that group's probe steps over no keyed
//! task. On PostgreSQL these are separate small statements of the combined
//! claim's function, on cached plans (`lifecycle::claim_sql`, `fair_walk!`),
//! the top priority found once per call; on SQLite they are subqueries of
//! the one claim statement. Every claim also updates its group's row (the
//! empty key for tasks without one): a primary-key probe that finds no row
//! in a tenant that never used keys. Under concurrent claims the pick may
//! find its task taken (`SKIP LOCKED`); the claim then takes the
//! claim-order candidate, so it never comes back empty while a task is
//! eligible, and fairness is exact only for claims that do not race.
//!
//! # Rate windows
//!
//! The window slides: a claim is allowed while fewer than `limit` claims of
//! the key lie in `(now - period, now]`. The count is kept, not counted:
//! `rate_limits.logged` is the number of the key's rows in the claim log
//! (migration 0021), updated by the trigger that writes and prunes the log,
//! so a candidate with the key costs a primary-key probe of its
//! `rate_limits` row plus an index walk over the log entries that have left
//! the window since the key's last claim pruned them (few: every claim of
//! the key prunes). Counting the window instead walked every claim in it,
//! for each candidate: with a key allowing 1,000,000 claims a minute,
//! `orch bench limits` ran at 0.08x of the plain lifecycle on SQLite. A task held back by a window becomes claimable when the
//! window moves; the background job `limits_job` is due at
//! that instant and wakes every claimer (on every replica through the event
//! NOTIFY). A freed concurrency slot always comes with a task event (the
//! completion, failure, cancel or expiry), which wakes claimers already.

mod concurrency;
mod rate;
mod stats;
mod waiting;

pub(crate) use rate::epoch_ms as epoch_millis;
pub use stats::{KeyGauge, LimitStats};
pub use waiting::LIMIT_WAITING_EVENT;
pub(crate) use waiting::{check_rate_key, is_limit_race, prepare_keys, recheck_after};

use crate::error::{Error, Result};

/// The longest concurrency or rate key, in characters.
pub const MAX_KEY_CHARS: usize = 200;

/// The candidate filter of the claim statement (module docs): `t` is the
/// task, `$now` the claim's instant.
macro_rules! limits_allow {
    ($dialect:tt, $now:literal) => {
        concat!(
            " AND (t.concurrency_key IS NULL OR NOT ",
            $crate::limits::concurrency_full!(),
            ") AND (t.rate_limit_key IS NULL OR NOT ",
            $crate::limits::rate_full!($crate::limits::epoch_ms!($dialect, $now)),
            ")"
        )
    };
}
pub(crate) use limits_allow;

/// Whether the concurrency key of task `t` has every slot held.
macro_rules! concurrency_full {
    () => {
        "EXISTS (SELECT 1 FROM concurrency_keys k \
         WHERE k.tenant_id = t.tenant_id AND k.key = t.concurrency_key \
         AND k.held >= k.limit_value)"
    };
}
pub(crate) use concurrency_full;

/// Whether the rate window of task `t`'s rate key is full at `$now_ms`
/// (an SQL expression in epoch milliseconds). The window's claims are the
/// key's log (`logged`, kept by the claim trigger) less its entries that
/// have left the window since the key's last claim pruned it (migration
/// 0021): a primary-key probe and a walk over those few entries, never
/// the whole window.
macro_rules! rate_full {
    ($now_ms:expr) => {
        concat!(
            "EXISTS (SELECT 1 FROM rate_limits r \
             WHERE r.tenant_id = t.tenant_id AND r.key = t.rate_limit_key \
             AND r.limit_value <= r.logged - (SELECT count(*) FROM rate_limit_claims c \
             WHERE c.tenant_id = r.tenant_id AND c.key = r.key AND c.claimed_ms <= ",
            $now_ms,
            " - 1000 * r.period_seconds))"
        )
    };
}
pub(crate) use rate_full;

/// `$at` (a bound time) as epoch milliseconds, as the claim log stores it.
macro_rules! epoch_ms {
    (sqlite, $at:literal) => {
        concat!(
            "CAST(round((julianday(",
            $at,
            ") - 2440587.5) * 86400000) AS INTEGER)"
        )
    };
    (postgres, $at:literal) => {
        concat!(
            "(extract(epoch FROM ",
            $at,
            "::timestamptz) * 1000)::bigint"
        )
    };
}
pub(crate) use epoch_ms;

/// Checks a concurrency or rate key (1 to 200 characters): 422 on `field`.
pub(crate) fn check_key(field: &str, key: &str) -> Result<()> {
    if key.is_empty() || key.chars().count() > MAX_KEY_CHARS {
        return Err(Error::schema_field(field, "must be 1 to 200 characters"));
    }
    Ok(())
}

/// Checks a limit value against its range: 400 on `field` (a well-formed
/// body that breaks a rule).
fn check_range(field: &str, value: i64, high: i64) -> Result<()> {
    if !(1..=high).contains(&value) {
        return Err(Error::invalid_field(field, format!("must be 1 to {high}")));
    }
    Ok(())
}
