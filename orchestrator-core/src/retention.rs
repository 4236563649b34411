//! History retention: finished runs and the events and log rows older than
//! [`crate::CoreConfig::history_retention`] are deleted by the background
//! runner, so a server that finishes a thousand tasks a second does not grow
//! without bound.
//!
//! What goes, once older than the retention:
//! - workflows that ended (`completed`, `failed`, `cancelled`), with their
//!   stages, work items, activations and tasks (the foreign keys cascade);
//! - tasks outside any workflow that ended;
//! - events and log rows, whatever they describe (a workflow still running
//!   after the retention keeps its row but loses its oldest history).
//!
//! Artifacts and workspace files stay: they belong to their workspace, not
//! to the run that wrote them.
//!
//! Every delete is a chunk of at most a few thousand rows in its own
//! transaction, so the writer (SQLite has one) is never held for long and
//! requests interleave with a large purge. A sweep stops after a time budget
//! and reports that more is due; the runner comes back after as long as the
//! sweep worked (the background runner paces it), so a backlog gets half
//! the writer at most. Each table is walked from its oldest row with a cursor
//! carried between chunks, so a chunk does not step again over the rows the
//! previous chunks deleted (PostgreSQL keeps them in its indexes until
//! vacuum).

use crate::control_plane::ControlPlane;
use crate::error::Result;
use crate::store::on_db;
use chrono::{DateTime, Utc};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// Workflows deleted per transaction (each takes its tasks and the rest
/// with it, so the chunk is small). Every chunk is a transaction the
/// requests of its write batch wait for: about 20 ms on SQLite, measured
/// with the bench's `--retention`.
const WORKFLOW_CHUNK: i64 = 50;
/// Tasks outside workflows deleted per transaction.
const TASK_CHUNK: i64 = 500;
/// Events or log rows deleted per transaction.
const ROW_CHUNK: i64 = 2_000;

/// What one history sweep deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HistoryPurged {
    /// Ended workflows (their tasks are not counted in `tasks`).
    pub workflows: u64,
    /// Ended tasks outside any workflow.
    pub tasks: u64,
    /// Events.
    pub events: u64,
    /// Log rows.
    pub logs: u64,
    /// Whether the sweep reached the end of what was due; `false` when the
    /// budget ran out first and more is waiting.
    pub finished: bool,
}

/// Runs are deleted tenant by tenant, oldest first, on the tenant's
/// creation-time index.
const WORKFLOWS: &str = "DELETE FROM workflows WHERE id IN (\
     SELECT id FROM workflows WHERE tenant_id = $1 AND created_at >= $2 AND created_at < $3 \
     AND state IN ('completed', 'failed', 'cancelled') AND updated_at < $3 \
     ORDER BY created_at LIMIT $4) RETURNING created_at";
const TASKS: &str = "DELETE FROM tasks WHERE id IN (\
     SELECT id FROM tasks WHERE tenant_id = $1 AND created_at >= $2 AND created_at < $3 \
     AND workflow_id IS NULL AND state IN ('completed', 'failed', 'cancelled') \
     AND updated_at < $3 ORDER BY created_at LIMIT $4) RETURNING created_at";
/// Events and log rows are append-only with increasing ids: the oldest
/// chunk by id goes when it is past the retention. A chunk that deletes
/// fewer rows than it read has reached rows still kept (or the end).
const EVENTS: &str = "DELETE FROM events WHERE id IN (\
     SELECT id FROM events WHERE id > $1 ORDER BY id LIMIT $2) AND created_at < $3 RETURNING id";
const LOGS: &str = "DELETE FROM logs WHERE id IN (\
     SELECT id FROM logs WHERE id > $1 ORDER BY id LIMIT $2) AND created_at < $3 RETURNING id";

impl ControlPlane {
    /// Deletes the history that ended before `before` (see the module
    /// documentation for what that is), chunk by chunk, until nothing older
    /// is left or `budget` has passed.
    pub async fn purge_history(
        &self,
        before: DateTime<Utc>,
        budget: Duration,
    ) -> Result<HistoryPurged> {
        let deadline = Instant::now() + budget;
        let mut purged = HistoryPurged::default();
        let tenants: Vec<Uuid> = {
            let mut conn = self.store().read().await?;
            on_db!(&mut conn, c => sqlx::query_scalar("SELECT id FROM tenants ORDER BY id")
                .fetch_all(c)
                .await)?
        };
        for tenant in &tenants {
            let (workflows, done) = self
                .delete_oldest_first(
                    WORKFLOWS,
                    Some(*tenant),
                    before,
                    WORKFLOW_CHUNK,
                    Some(deadline),
                )
                .await?;
            purged.workflows += workflows;
            if !done {
                return Ok(purged);
            }
            let (tasks, done) = self
                .delete_oldest_first(TASKS, Some(*tenant), before, TASK_CHUNK, Some(deadline))
                .await?;
            purged.tasks += tasks;
            if !done {
                return Ok(purged);
            }
        }
        let (events, done) = self.purge_rows(EVENTS, before, deadline).await?;
        purged.events = events;
        if !done {
            return Ok(purged);
        }
        let (logs, done) = self.purge_rows(LOGS, before, deadline).await?;
        purged.logs = logs;
        if !done {
            return Ok(purged);
        }
        purged.finished = true;
        Ok(purged)
    }

    /// Runs `sql`, a delete of the oldest rows by creation time, chunk by
    /// chunk until a chunk is not full: how many went, and `false` when
    /// `deadline` (if any) passed with more left. `sql` takes the tenant (when
    /// `tenant` is given), then the instant to start from, `before` and the
    /// chunk size, and returns the deleted rows' `created_at`.
    pub(crate) async fn delete_oldest_first(
        &self,
        sql: &'static str,
        tenant: Option<Uuid>,
        before: DateTime<Utc>,
        chunk: i64,
        deadline: Option<Instant>,
    ) -> Result<(u64, bool)> {
        let mut count = 0u64;
        let mut from = DateTime::<Utc>::UNIX_EPOCH;
        loop {
            let mut tx = self.store().begin().await?;
            let created: Vec<DateTime<Utc>> = on_db!(&mut tx, c => {
                let mut query = sqlx::query_scalar(sql);
                if let Some(tenant) = tenant {
                    query = query.bind(tenant);
                }
                query.bind(from).bind(before).bind(chunk).fetch_all(c).await
            })?;
            tx.commit().await?;
            count += created.len() as u64;
            if (created.len() as i64) < chunk {
                return Ok((count, true));
            }
            // Rows created at the same instant as the newest deleted one
            // may remain: the next chunk starts at that instant, not after.
            from = created.into_iter().max().unwrap_or(from);
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok((count, false));
            }
        }
    }

    /// Events or log rows past the retention, oldest id first: how many
    /// went, and `false` when the deadline passed with more left.
    async fn purge_rows(
        &self,
        sql: &'static str,
        before: DateTime<Utc>,
        deadline: Instant,
    ) -> Result<(u64, bool)> {
        let mut count = 0u64;
        let mut after = 0i64;
        loop {
            let mut tx = self.store().begin().await?;
            let ids: Vec<i64> = on_db!(&mut tx, c => sqlx::query_scalar(sql)
                .bind(after)
                .bind(ROW_CHUNK)
                .bind(before)
                .fetch_all(c)
                .await)?;
            tx.commit().await?;
            count += ids.len() as u64;
            if (ids.len() as i64) < ROW_CHUNK {
                return Ok((count, true));
            }
            after = ids.into_iter().max().unwrap_or(after);
            if Instant::now() >= deadline {
                return Ok((count, false));
            }
        }
    }
}
