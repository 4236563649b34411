//! Planner statistics of the hot tables on PostgreSQL (issue 33, defect 9).
//!
//! Why: PostgreSQL plans from statistics that only `ANALYZE` refreshes.
//! Where autovacuum is off (development and CI servers, some operators),
//! nothing refreshes them, and a table analyzed while it was empty keeps
//! being planned as empty once it holds millions of rows: in a soak the
//! lifecycle calls went from 45 ms to 230 ms at p99 in twelve minutes, and an
//! `ANALYZE tasks` brought p50 from 140 ms to 8 ms at once. orch does not
//! leave its own hot tables to the operator's settings: the store analyzes
//! them after its migrations, and the background job here analyzes one
//! again whenever it holds [`GROWTH`] times the rows its statistics say.
//!
//! Dead rows are the other half. Every claim, start and complete leaves a
//! dead version of its `tasks` row, and the partial claim index
//! (`tasks_claimable`) keeps entries for tasks that are no longer pending
//! until a `VACUUM` removes them: without autovacuum a soak's claim index
//! was 385 of 413 pages empty, walked by every claim. Where autovacuum is
//! off for `tasks` (the server setting or the table's own
//! `autovacuum_enabled`), the same job vacuums it once it holds
//! [`VACUUM_DEAD_ROWS`] dead rows.
//!
//! Several replicas may run the job at once: a transaction-scoped advisory
//! lock lets one of them analyze a table at a time (the others skip it; its
//! statistics are fresh once the first is done).

use crate::control_plane::ControlPlane;
use crate::error::Result;
use crate::store::{Conn, Dialect};
use sqlx::Connection;

/// The tables on the request path whose plans depend on their size.
pub const HOT_TABLES: [&str; 3] = ["tasks", "events", "logs"];
/// A hot table is analyzed again once it holds this many times the rows of
/// its statistics.
pub const GROWTH: f64 = 2.0;
/// Tables with fewer live rows than this are left alone (any plan is fast).
pub const MIN_ROWS: i64 = 1000;
/// The advisory lock key of the job (per table: plus its index in
/// [`HOT_TABLES`]).
const LOCK_KEY: i64 = 0x6f72_6368_7374_6100;
/// The table [`ControlPlane::vacuum_without_autovacuum`] vacuums: the one
/// whose rows every claim changes, with the claim index.
pub const CLAIM_TABLE: &str = "tasks";
/// Dead rows of [`CLAIM_TABLE`] at which it is vacuumed when autovacuum is
/// off for it (a minute of a few dozen tasks a second).
pub const VACUUM_DEAD_ROWS: i64 = 1000;
/// The session advisory lock key of the vacuum (one replica at a time).
const VACUUM_LOCK_KEY: i64 = LOCK_KEY + 0x80;

impl ControlPlane {
    /// `ANALYZE`s every hot table that has grown by [`GROWTH`] since its
    /// statistics were taken (and holds at least [`MIN_ROWS`] live rows);
    /// the names of those analyzed. Nothing on SQLite, whose planner needs
    /// no statistics for orch's indexed lookups.
    pub async fn analyze_grown_tables(&self) -> Result<Vec<&'static str>> {
        if self.store().dialect() != Dialect::Postgres {
            return Ok(Vec::new());
        }
        let mut conn = self.store().read().await?;
        let Conn::Postgres(c) = &mut conn else {
            return Ok(Vec::new());
        };
        let mut analyzed = Vec::new();
        for (index, table) in HOT_TABLES.iter().enumerate() {
            // `reltuples`: the rows the statistics saw (-1 never analyzed);
            // the live rows as the statistics system counts them, which it
            // does whether autovacuum runs or not.
            let sizes: Option<(f64, i64)> = sqlx::query_as(
                "SELECT c.reltuples::float8, COALESCE(pg_stat_get_live_tuples(c.oid), 0)::int8 \
                 FROM pg_class c WHERE c.oid = to_regclass($1)",
            )
            .bind(*table)
            .fetch_optional(&mut **c)
            .await?;
            let Some((seen, live)) = sizes else {
                continue;
            };
            if live < MIN_ROWS || (live as f64) < GROWTH * seen.max(0.0) {
                continue;
            }
            let mut tx = c.begin().await?;
            let (locked,): (bool,) = sqlx::query_as("SELECT pg_try_advisory_xact_lock($1)")
                .bind(LOCK_KEY + index as i64)
                .fetch_one(&mut *tx)
                .await?;
            if locked {
                // The table name is one of ours, never input.
                sqlx::raw_sql(sqlx::AssertSqlSafe(format!("ANALYZE {table}")))
                    .execute(&mut *tx)
                    .await?;
                analyzed.push(*table);
            }
            tx.commit().await?;
        }
        Ok(analyzed)
    }
}

impl ControlPlane {
    /// `VACUUM`s [`CLAIM_TABLE`] when autovacuum is off for it (the server's
    /// `autovacuum` setting or the table's `autovacuum_enabled`) and it
    /// holds at least [`VACUUM_DEAD_ROWS`] dead rows, so the claim index
    /// does not fill with entries of tasks that are no longer pending.
    /// Whether it ran; never on SQLite (no such index bloat: a deleted
    /// index entry is gone at once) or where autovacuum does the work.
    pub async fn vacuum_without_autovacuum(&self) -> Result<bool> {
        if self.store().dialect() != Dialect::Postgres {
            return Ok(false);
        }
        let mut conn = self.store().read().await?;
        let Conn::Postgres(c) = &mut conn else {
            return Ok(false);
        };
        let state: Option<(bool, i64)> = sqlx::query_as(
            "SELECT current_setting('autovacuum') = 'off' OR EXISTS (                  SELECT 1 FROM unnest(c.reloptions) o WHERE lower(o) IN                  ('autovacuum_enabled=false', 'autovacuum_enabled=off',                   'autovacuum_enabled=0', 'autovacuum_enabled=no', 'autovacuum_enabled=f')),              COALESCE((SELECT s.n_dead_tup FROM pg_stat_user_tables s WHERE s.relid = c.oid), 0)::int8              FROM pg_class c WHERE c.oid = to_regclass($1)",
        )
        .bind(CLAIM_TABLE)
        .fetch_optional(&mut **c)
        .await?;
        let Some((off, dead)) = state else {
            return Ok(false);
        };
        if !off || dead < VACUUM_DEAD_ROWS {
            return Ok(false);
        }
        // VACUUM cannot run in a transaction: a session lock, released
        // whatever the vacuum did.
        let (locked,): (bool,) = sqlx::query_as("SELECT pg_try_advisory_lock($1)")
            .bind(VACUUM_LOCK_KEY)
            .fetch_one(&mut **c)
            .await?;
        if !locked {
            return Ok(false);
        }
        // The table name is ours, never input.
        let vacuumed = sqlx::raw_sql(sqlx::AssertSqlSafe(format!("VACUUM {CLAIM_TABLE}")))
            .execute(&mut **c)
            .await;
        sqlx::query("SELECT pg_advisory_unlock($1)")
            .bind(VACUUM_LOCK_KEY)
            .execute(&mut **c)
            .await?;
        vacuumed?;
        Ok(true)
    }
}
