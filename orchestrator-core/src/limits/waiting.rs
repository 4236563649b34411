//! What flow limits add around the claim: the keys of a new task
//! ([`prepare_keys`]), the claim that raced a limit ([`is_limit_race`]), and
//! the background job that records `task.limit_waiting` and wakes claimers
//! when a rate window moves ([`ControlPlane::limits_job`]).

use super::check_key;
use super::rate::epoch_ms;
use crate::api::CreateTask;
use crate::background::Due;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::lifecycle::failure::record;
use crate::lifecycle::run_control::system;
use crate::store::{Tx, on_db};
use crate::tasks::counters::counters;
use crate::tasks::rows::{TaskRow, task_columns};
use chrono::{DateTime, Duration, Utc};
use serde_json::json;
use std::sync::atomic::Ordering;
use uuid::Uuid;

/// The event recorded once when a claimable task is first held back by a
/// limit: `{task_id, key, limit: "concurrency" | "rate"}`.
pub const LIMIT_WAITING_EVENT: &str = "task.limit_waiting";

/// How many held-back tasks one run of the job marks; the rest are due at once.
const BATCH: i64 = 200;

/// How far back a window that moved still wakes claimers (the runner wakes
/// at the due time; a wake-up more is harmless).
const WAKE_WINDOW_MS: i64 = 2_000;

/// Whether a claim statement failed because a concurrent claim took the
/// last slot (or window room) first: the migration's trigger aborts it, and
/// the claim runs again, now seeing the key full.
pub(crate) fn is_limit_race(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.message().contains("orch: flow limit reached"))
}

/// Checks the keys of a new task and makes the rows its claims update:
/// a key over 200 characters is 422, a rate key with no limit set is 400.
/// Runs in the create's transaction, on every create path.
pub(crate) async fn prepare_keys(
    tx: &mut Tx,
    tenant_id: Uuid,
    request: &CreateTask,
    now: DateTime<Utc>,
) -> Result<()> {
    if let Some(key) = &request.rate_limit_key {
        check_key("rate_limit_key", key)?;
        let found: Option<(i32,)> = on_db!(tx, c => sqlx::query_as(
            "SELECT limit_value FROM rate_limits WHERE tenant_id = $1 AND key = $2",
        )
        .bind(tenant_id)
        .bind(key)
        .fetch_optional(c)
        .await)?;
        if found.is_none() {
            return Err(Error::invalid_field(
                "rate_limit_key",
                "names no rate limit: set one first with PUT /api/v1/rate-limits/:key",
            ));
        }
    }
    if let Some(key) = &request.concurrency_key {
        check_key("concurrency_key", key)?;
        // The key's row and the row of the group without a key, which
        // fair claiming orders by (module docs of crate::limits).
        on_db!(tx, c => sqlx::query(
            "INSERT INTO concurrency_keys (tenant_id, key, created_at, updated_at) \
             VALUES ($1, $2, $3, $3), ($1, '', $3, $3) ON CONFLICT (tenant_id, key) DO NOTHING",
        )
        .bind(tenant_id)
        .bind(key)
        .bind(now)
        .execute(c)
        .await
        .map(|_| ()))?;
    }
    Ok(())
}

/// A pending task held back by a limit and not yet told so.
#[derive(sqlx::FromRow)]
struct Waiting {
    id: Uuid,
    tenant_id: Uuid,
    concurrency_full: bool,
}

impl ControlPlane {
    /// The limits job of the background runner: records `task.limit_waiting`
    /// for claimable tasks a limit holds back, wakes claimers when a rate
    /// window moved, and is next due when the next window moves.
    pub(crate) async fn limits_job(&self) -> Result<Due> {
        let now = self.now().as_datetime();
        let now_ms = epoch_ms(now);
        let mut conn = self.store().read().await?;
        let waiting: Vec<Waiting> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT t.id, t.tenant_id, EXISTS (SELECT 1 FROM concurrency_keys k \
               WHERE k.tenant_id = t.tenant_id AND k.key = t.concurrency_key \
               AND k.held >= k.limit_value) AS concurrency_full \
             FROM tasks t WHERE t.state = 'pending' AND t.limit_waiting_at IS NULL \
             AND (t.concurrency_key IS NOT NULL OR t.rate_limit_key IS NOT NULL) \
             AND (t.run_at IS NULL OR t.run_at <= $1) \
             AND (EXISTS (SELECT 1 FROM concurrency_keys k WHERE k.tenant_id = t.tenant_id \
                  AND k.key = t.concurrency_key AND k.held >= k.limit_value) \
               OR EXISTS (SELECT 1 FROM rate_limits r WHERE r.tenant_id = t.tenant_id \
                  AND r.key = t.rate_limit_key AND r.limit_value <= (SELECT count(*) \
                  FROM rate_limit_claims c WHERE c.tenant_id = r.tenant_id AND c.key = r.key \
                  AND c.claimed_ms > $2 - 1000 * r.period_seconds))) \
             ORDER BY t.created_at LIMIT $3",
        )
        .bind(now)
        .bind(now_ms)
        .bind(BATCH)
        .fetch_all(c)
        .await)?;
        // When each window with waiting tasks next moves, and whether one
        // moved just now.
        let moves: Vec<(i64,)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT c.claimed_ms + 1000 * r.period_seconds FROM rate_limits r \
             JOIN rate_limit_claims c ON c.tenant_id = r.tenant_id AND c.key = r.key \
             WHERE c.claimed_ms + 1000 * r.period_seconds > $1 \
             AND EXISTS (SELECT 1 FROM tasks t WHERE t.tenant_id = r.tenant_id \
                  AND t.rate_limit_key = r.key AND t.state = 'pending') \
             ORDER BY 1 LIMIT 64",
        )
        .bind(now_ms - WAKE_WINDOW_MS)
        .fetch_all(c)
        .await)?;
        drop(conn);
        if moves.iter().any(|(at,)| *at <= now_ms) {
            self.store().wake_claimers();
        }
        let mut due: Due = moves
            .iter()
            .map(|(at,)| *at)
            .find(|at| *at > now_ms)
            .and_then(DateTime::<Utc>::from_timestamp_millis);
        if waiting.len() as i64 == BATCH {
            due = Some(now);
        }
        for task in waiting {
            self.mark_limit_waiting(task, now).await?;
        }
        Ok(due)
    }

    /// Records `task.limit_waiting` for `task` once (the conditional update
    /// decides, so replicas never record it twice).
    async fn mark_limit_waiting(&self, task: Waiting, now: DateTime<Utc>) -> Result<()> {
        let mut tx = self.store().begin().await?;
        let rows: Vec<TaskRow> = on_db!(&mut tx, c => sqlx::query_as(concat!(
            "UPDATE tasks SET limit_waiting_at = $3 WHERE id = $1 AND tenant_id = $2 \
             AND state = 'pending' AND limit_waiting_at IS NULL RETURNING ",
            task_columns!()
        ))
        .bind(task.id)
        .bind(task.tenant_id)
        .bind(now)
        .fetch_all(c)
        .await)?;
        let Some(row) = rows.into_iter().next() else {
            return Ok(());
        };
        let (key, limit) = match (&row.concurrency_key, &row.rate_limit_key) {
            (Some(key), _) if task.concurrency_full => (key.clone(), "concurrency"),
            (_, Some(key)) => (key.clone(), "rate"),
            (key, _) => (key.clone().unwrap_or_default(), "concurrency"),
        };
        record(
            &mut tx,
            &system(task.tenant_id),
            &row,
            LIMIT_WAITING_EVENT,
            json!({ "task_id": row.id, "key": key, "limit": limit }),
        )
        .await?;
        tx.commit().await?;
        counters().limit_waiting.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// When the limits job should look again after a claim or create of a
/// keyed task: soon, but not on every claim of a busy key.
pub(crate) fn recheck_after(now: DateTime<Utc>) -> DateTime<Utc> {
    now + Duration::milliseconds(500)
}
