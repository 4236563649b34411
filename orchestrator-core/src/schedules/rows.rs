//! The `schedules` and `schedule_runs` tables: rows, reads and writes.

use crate::api::Timestamp;
use crate::api::schedules::{RunOutcome, Schedule, ScheduleRun, ScheduleTarget};
use crate::error::{Error, Result};
use crate::schedules::spec::{Spec, jitter};
use crate::store::{Access, Tx, is_unique_violation, on_db};
use chrono::{DateTime, Utc};
use sqlx::types::Json;
use uuid::Uuid;

#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct ScheduleRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub name: String,
    pub description: Option<String>,
    pub cron: Option<String>,
    pub every_seconds: Option<i64>,
    pub timezone: String,
    pub overlap: String,
    pub catchup: String,
    pub catchup_window_seconds: i64,
    pub jitter_seconds: i64,
    pub start_at: Option<DateTime<Utc>>,
    pub end_at: Option<DateTime<Utc>>,
    pub paused: bool,
    pub target: Json<ScheduleTarget>,
    pub next_slot: Option<DateTime<Utc>>,
    pub next_fire_at: Option<DateTime<Utc>>,
    pub buffered_slot: Option<DateTime<Utc>>,
    pub backfill_next: Option<DateTime<Utc>>,
    pub backfill_until: Option<DateTime<Utc>>,
    pub last_fired_at: Option<DateTime<Utc>>,
    pub fire_count: i64,
    pub skip_count: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

macro_rules! schedule_columns {
    () => {
        "id, tenant_id, name, description, cron, every_seconds, timezone, overlap, catchup, \
         catchup_window_seconds, jitter_seconds, start_at, end_at, paused, target, next_slot, \
         next_fire_at, buffered_slot, backfill_next, backfill_until, last_fired_at, fire_count, \
         skip_count, created_at, updated_at"
    };
}
pub(crate) use schedule_columns;

impl ScheduleRow {
    /// The spec the row's fields describe (valid: checked when written).
    pub(crate) fn spec(&self) -> Result<Spec> {
        Spec::new(
            self.cron.as_deref(),
            self.every_seconds,
            &self.timezone,
            self.start_at,
        )
    }

    /// When `slot` is due: the slot plus its jitter.
    pub(crate) fn due(&self, slot: DateTime<Utc>) -> DateTime<Utc> {
        slot + jitter(self.id, slot, self.jitter_seconds)
    }

    /// Points `next_slot`/`next_fire_at` at the first slot at or after
    /// `from` (and `start_at`), or at nothing while paused or past `end_at`.
    pub(crate) fn plan_from(&mut self, spec: &Spec, from: DateTime<Utc>) {
        let from = self.start_at.map_or(from, |start| start.max(from));
        let slot = spec
            .at_or_after(from)
            .filter(|_| !self.paused)
            .filter(|s| self.end_at.is_none_or(|end| *s < end));
        self.set_next(slot);
    }

    /// Points the schedule at `slot` (or at nothing).
    pub(crate) fn set_next(&mut self, slot: Option<DateTime<Utc>>) {
        let slot = slot.filter(|s| self.end_at.is_none_or(|end| *s < end));
        self.next_slot = slot;
        self.next_fire_at = slot.map(|s| self.due(s));
    }

    pub(crate) fn to_api(&self) -> Schedule {
        Schedule {
            id: self.id,
            name: self.name.clone(),
            description: self.description.clone(),
            cron: self.cron.clone(),
            every_seconds: self.every_seconds,
            timezone: self.timezone.clone(),
            overlap: self.overlap.parse().unwrap_or_default(),
            catchup: self.catchup.parse().unwrap_or_default(),
            catchup_window_seconds: self.catchup_window_seconds,
            jitter_seconds: self.jitter_seconds,
            start_at: self.start_at.map(Into::into),
            end_at: self.end_at.map(Into::into),
            paused: self.paused,
            target: self.target.0.clone(),
            next_fire_at: self.next_fire_at.map(Into::into),
            last_fired_at: self.last_fired_at.map(Into::into),
            fire_count: self.fire_count,
            skip_count: self.skip_count,
            created_at: self.created_at.into(),
            updated_at: self.updated_at.into(),
        }
    }
}

/// A schedule of `tenant_id` by id.
pub(crate) async fn find(
    access: &mut impl Access,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<Option<ScheduleRow>> {
    Ok(on_db!(access, c => sqlx::query_as(concat!(
        "SELECT ", schedule_columns!(), " FROM schedules WHERE tenant_id = $1 AND id = $2"
    ))
    .bind(tenant_id)
    .bind(id)
    .fetch_optional(c)
    .await)?)
}

/// Reads a schedule for a write, locking its row on PostgreSQL (SQLite's one
/// writer already serializes): concurrent fires and triggers of one schedule
/// take turns, so an overlap check sees the launch before it.
pub(crate) async fn lock(tx: &mut Tx, tenant_id: Uuid, id: Uuid) -> Result<ScheduleRow> {
    let row: Option<ScheduleRow> = on_db!(tx, c =>
        sqlite: sqlx::query_as(concat!(
            "SELECT ", schedule_columns!(), " FROM schedules WHERE tenant_id = $1 AND id = $2"
        )).bind(tenant_id).bind(id).fetch_optional(c).await,
        postgres: sqlx::query_as(concat!(
            "SELECT ", schedule_columns!(), " FROM schedules WHERE tenant_id = $1 AND id = $2 FOR UPDATE"
        )).bind(tenant_id).bind(id).fetch_optional(c).await,
    )?;
    row.ok_or(Error::not_found("schedule"))
}

fn name_conflict(name: &str) -> Error {
    Error::Conflict {
        message: format!("a schedule named `{name}` already exists"),
        hint: Some("choose another name".into()),
    }
}

/// Inserts a new row (every column from `row`).
pub(crate) async fn insert(tx: &mut Tx, row: &ScheduleRow) -> Result<()> {
    let inserted = on_db!(tx, c => sqlx::query(concat!(
        "INSERT INTO schedules (", schedule_columns!(), ") VALUES \
         ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, \
          $21, $22, $23, $24, $25)"
    ))
    .bind(row.id)
    .bind(row.tenant_id)
    .bind(&row.name)
    .bind(&row.description)
    .bind(&row.cron)
    .bind(row.every_seconds)
    .bind(&row.timezone)
    .bind(&row.overlap)
    .bind(&row.catchup)
    .bind(row.catchup_window_seconds)
    .bind(row.jitter_seconds)
    .bind(row.start_at)
    .bind(row.end_at)
    .bind(row.paused)
    .bind(Json(&row.target.0))
    .bind(row.next_slot)
    .bind(row.next_fire_at)
    .bind(row.buffered_slot)
    .bind(row.backfill_next)
    .bind(row.backfill_until)
    .bind(row.last_fired_at)
    .bind(row.fire_count)
    .bind(row.skip_count)
    .bind(row.created_at)
    .bind(row.updated_at)
    .execute(c)
    .await
    .map(|r| r.rows_affected()));
    match inserted {
        Ok(_) => Ok(()),
        Err(e) if is_unique_violation(&e) => Err(name_conflict(&row.name)),
        Err(e) => Err(e.into()),
    }
}

/// Writes every mutable column of `row` back (the row was read with
/// [`lock`] in `tx`).
pub(crate) async fn save(tx: &mut Tx, row: &ScheduleRow) -> Result<()> {
    let saved = on_db!(tx, c => sqlx::query(
        "UPDATE schedules SET name = $1, description = $2, cron = $3, every_seconds = $4, timezone = $5, \
         overlap = $6, catchup = $7, catchup_window_seconds = $8, jitter_seconds = $9, start_at = $10, \
         end_at = $11, paused = $12, target = $13, next_slot = $14, next_fire_at = $15, buffered_slot = $16, \
         backfill_next = $17, backfill_until = $18, last_fired_at = $19, fire_count = $20, skip_count = $21, \
         updated_at = $22 WHERE tenant_id = $23 AND id = $24",
    )
    .bind(&row.name)
    .bind(&row.description)
    .bind(&row.cron)
    .bind(row.every_seconds)
    .bind(&row.timezone)
    .bind(&row.overlap)
    .bind(&row.catchup)
    .bind(row.catchup_window_seconds)
    .bind(row.jitter_seconds)
    .bind(row.start_at)
    .bind(row.end_at)
    .bind(row.paused)
    .bind(Json(&row.target.0))
    .bind(row.next_slot)
    .bind(row.next_fire_at)
    .bind(row.buffered_slot)
    .bind(row.backfill_next)
    .bind(row.backfill_until)
    .bind(row.last_fired_at)
    .bind(row.fire_count)
    .bind(row.skip_count)
    .bind(row.updated_at)
    .bind(row.tenant_id)
    .bind(row.id)
    .execute(c)
    .await
    .map(|r| r.rows_affected()));
    match saved {
        Ok(_) => Ok(()),
        Err(e) if is_unique_violation(&e) => Err(name_conflict(&row.name)),
        Err(e) => Err(e.into()),
    }
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct RunRow {
    pub id: Uuid,
    pub schedule_id: Uuid,
    pub scheduled_for: DateTime<Utc>,
    pub fired_at: DateTime<Utc>,
    pub outcome: String,
    pub reason: Option<String>,
    pub workflow_id: Option<Uuid>,
    pub task_id: Option<Uuid>,
    /// How late a timer's fire ran after its due time (none for skips,
    /// triggers, buffers and backfills).
    pub lag_ms: Option<i64>,
}

pub(crate) const RUN_COLUMNS: &str =
    "id, schedule_id, scheduled_for, fired_at, outcome, reason, workflow_id, task_id, lag_ms";

impl RunRow {
    pub(crate) fn to_api(&self) -> ScheduleRun {
        ScheduleRun {
            id: self.id,
            schedule_id: self.schedule_id,
            scheduled_for: self.scheduled_for.into(),
            fired_at: self.fired_at.into(),
            outcome: self.outcome.parse().unwrap_or(RunOutcome::Failed),
            reason: self.reason.clone(),
            workflow_id: self.workflow_id,
            task_id: self.task_id,
        }
    }
}

/// Claims a slot: inserts its run row, or answers `false` when the slot
/// already has one (another replica, a trigger at the same instant). The
/// caller launches in the same transaction, so the launch commits only
/// with the row that the unique key admits once.
pub(crate) async fn claim_slot(tx: &mut Tx, tenant_id: Uuid, run: &RunRow) -> Result<bool> {
    let inserted = on_db!(tx, c => sqlx::query(
        "INSERT INTO schedule_runs (id, tenant_id, schedule_id, scheduled_for, fired_at, outcome, reason, \
         workflow_id, task_id, lag_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
         ON CONFLICT (schedule_id, scheduled_for) DO NOTHING",
    )
    .bind(run.id)
    .bind(tenant_id)
    .bind(run.schedule_id)
    .bind(run.scheduled_for)
    .bind(run.fired_at)
    .bind(&run.outcome)
    .bind(&run.reason)
    .bind(run.workflow_id)
    .bind(run.task_id)
    .bind(run.lag_ms)
    .execute(c)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(inserted == 1)
}

/// Writes what a claimed slot became (its outcome and what it launched).
pub(crate) async fn settle_run(tx: &mut Tx, run: &RunRow) -> Result<()> {
    on_db!(tx, c => sqlx::query(
        "UPDATE schedule_runs SET outcome = $1, reason = $2, workflow_id = $3, task_id = $4 WHERE id = $5",
    )
    .bind(&run.outcome)
    .bind(&run.reason)
    .bind(run.workflow_id)
    .bind(run.task_id)
    .bind(run.id)
    .execute(c)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// The workflows and tasks launched by the schedule's runs that have not
/// ended (the newest 100: what overlap policies look at).
pub(crate) async fn running(
    access: &mut impl Access,
    schedule_id: Uuid,
) -> Result<Vec<(Option<Uuid>, Option<Uuid>)>> {
    Ok(on_db!(access, c => sqlx::query_as(
        "SELECT r.workflow_id, r.task_id FROM schedule_runs r \
         LEFT JOIN workflows w ON w.id = r.workflow_id \
         LEFT JOIN tasks t ON t.id = r.task_id \
         WHERE r.schedule_id = $1 AND r.outcome IN ('launched', 'cancelled_previous') \
         AND ((r.workflow_id IS NOT NULL AND w.state NOT IN ('completed', 'failed', 'cancelled')) \
           OR (r.task_id IS NOT NULL AND t.state NOT IN ('completed', 'failed', 'cancelled'))) \
         ORDER BY r.scheduled_for DESC LIMIT 100",
    )
    .bind(schedule_id)
    .fetch_all(c)
    .await)?)
}

/// Now, as the store keeps it (whole milliseconds).
pub(crate) fn millis(t: DateTime<Utc>) -> DateTime<Utc> {
    Timestamp::from(t).as_datetime()
}
