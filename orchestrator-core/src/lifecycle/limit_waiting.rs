//! The flow-limits job of the background runner: records
//! `task.limit_waiting` once for each claimable task a limit holds back, and
//! wakes claimers when a rate window moves (run control §6). It lives with
//! the lifecycle because it records task events the way transitions do; the
//! limits themselves (keys, windows, the claim filter) are [`crate::limits`].

use super::failure::record;
use super::run_control::system;
use crate::background::Due;
use crate::control_plane::ControlPlane;
use crate::error::Result;
use crate::limits::{LIMIT_WAITING_EVENT, concurrency_full, epoch_millis, rate_full};
use crate::store::on_db;
use crate::tasks::counters::counters;
use crate::tasks::rows::{TaskRow, task_columns};
use chrono::{DateTime, Utc};
use serde_json::json;
use std::sync::atomic::Ordering;
use uuid::Uuid;

/// How many held-back tasks one run of the job marks; the rest are due at once.
const BATCH: i64 = 200;

/// How far back a window that moved still wakes claimers (the runner wakes
/// at the due time; a wake-up more is harmless).
const WAKE_WINDOW_MS: i64 = 2_000;

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
        let now_ms = epoch_millis(now);
        let mut conn = self.store().read().await?;
        // The same tests as the claim's filter (`limits_allow!`), so a task
        // is marked exactly when the claim skips it; the rate test reads the
        // kept count, not the window (counting the window for each pending
        // task cost 370 ms a run with 4,000 tasks pending, `orch bench
        // limits` on PostgreSQL).
        let waiting: Vec<Waiting> = on_db!(&mut conn, c => sqlx::query_as(concat!(
            "SELECT t.id, t.tenant_id, ",
            concurrency_full!(),
            " AS concurrency_full \
             FROM tasks t WHERE t.state = 'pending' AND t.limit_waiting_at IS NULL \
             AND (t.concurrency_key IS NOT NULL OR t.rate_limit_key IS NOT NULL) \
             AND (t.run_at IS NULL OR t.run_at <= $1) AND (",
            concurrency_full!(),
            " OR ",
            rate_full!("$2"),
            ") ORDER BY t.created_at LIMIT $3",
        ))
        .bind(now)
        .bind(now_ms)
        .bind(BATCH)
        .fetch_all(c)
        .await)?;
        // For each rate key with pending tasks, the first time its window
        // moves after `now - WAKE_WINDOW_MS` (one that moved since then
        // wakes claimers) and after `now` (when to look again): each the
        // oldest claim past a bound plus the period, one seek of the claim
        // log's index. Listing every claim in the windows instead cost
        // 525 ms a run with 3,000 claims in a minute's window on SQLite
        // (`orch bench limits`), and held back the WAL checkpoint, and so
        // the writer, as long.
        let moves: Vec<(Option<i64>, Option<i64>)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT 1000 * r.period_seconds + (SELECT min(c.claimed_ms) FROM rate_limit_claims c \
               WHERE c.tenant_id = r.tenant_id AND c.key = r.key \
               AND c.claimed_ms > $1 - 1000 * r.period_seconds), \
             1000 * r.period_seconds + (SELECT min(c.claimed_ms) FROM rate_limit_claims c \
               WHERE c.tenant_id = r.tenant_id AND c.key = r.key \
               AND c.claimed_ms > $2 - 1000 * r.period_seconds) \
             FROM rate_limits r WHERE EXISTS (SELECT 1 FROM tasks t \
               WHERE t.tenant_id = r.tenant_id AND t.rate_limit_key = r.key AND t.state = 'pending')",
        )
        .bind(now_ms - WAKE_WINDOW_MS)
        .bind(now_ms)
        .fetch_all(c)
        .await)?;
        drop(conn);
        if moves
            .iter()
            .any(|(moved, _)| moved.is_some_and(|at| at <= now_ms))
        {
            self.store().wake_claimers();
        }
        let mut due: Due = moves
            .iter()
            .filter_map(|(_, next)| *next)
            .min()
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
