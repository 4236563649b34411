//! A schedule's runs: `trigger` (one fire now), `backfill` (the slots of a
//! past range, fired by the background job) and the run history.

use crate::api::schedules::{
    Backfill, BackfillSchedule, MAX_BACKFILL_SLOTS, OverlapPolicy, ScheduleRun, TriggerSchedule,
};
use crate::api::{Page, PageRequest};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::idempotency::{Begun, Storage};
use crate::schedules::fire::{Decision, Slot, Source};
use crate::schedules::rows::{self, RUN_COLUMNS, RunRow, millis};
use crate::store::on_db;
use uuid::Uuid;

impl ControlPlane {
    /// `POST /api/v1/schedules/:id/trigger`: fires once now (`scheduled_for`
    /// = now) under the overlap policy, or `allow_all` with
    /// `ignore_overlap`. Under `skip` and `buffer_one` a trigger while a run
    /// is running is a `skipped` run (a trigger is never buffered). A second
    /// trigger in the same millisecond is 409 (the slot has its run).
    pub async fn trigger_schedule(
        &self,
        caller: &Caller,
        id: Uuid,
        request: TriggerSchedule,
    ) -> Result<ScheduleRun> {
        let row = {
            let mut conn = self.store().read().await?;
            rows::find(&mut conn, caller.tenant_id, id)
                .await?
                .ok_or(Error::not_found("schedule"))?
        };
        let overlap = if request.ignore_overlap == Some(true) {
            OverlapPolicy::AllowAll
        } else {
            row.overlap.parse().unwrap_or_default()
        };
        let cancelled =
            overlap == OverlapPolicy::CancelPrevious && self.cancel_running(caller, id).await?;
        let mut write = match self
            .begin_idempotent(
                caller,
                "schedules.trigger",
                request.request_id.as_deref(),
                &(id, &request),
                Storage::Plain,
            )
            .await?
        {
            Begun::Replayed(recorded) => return Ok(recorded),
            Begun::Fresh(write) => write,
        };
        let mut row = rows::lock(&mut write.tx, caller.tenant_id, id).await?;
        let slot = Slot {
            at: millis(self.clock().now()),
            source: Source::Trigger,
            decision: Decision::Fire { overlap, cancelled },
        };
        match self.fire_in(&mut write.tx, caller, &mut row, slot).await {
            Ok(Some(run)) => write.finish(run.to_api()).await,
            Ok(None) => Err(Error::conflict(
                "the schedule already has a run for this instant; trigger again",
            )),
            Err(error) => {
                drop(write);
                self.record_failed(caller, id, slot, &error)
                    .await?
                    .map(|run| run.to_api())
                    .ok_or_else(|| {
                        Error::conflict("the schedule already has a run for this instant")
                    })
            }
        }
    }

    /// `POST /api/v1/schedules/:id/backfill`: every slot of the spec in
    /// `[from, to)`, oldest first, each fired as if on time under
    /// `allow_all`, by the background job (so a restart resumes it). At most
    /// 1,000 slots (else 400); one backfill at a time per schedule (409).
    /// Slots that already have a run keep it.
    pub async fn backfill_schedule(
        &self,
        caller: &Caller,
        id: Uuid,
        request: BackfillSchedule,
    ) -> Result<Backfill> {
        let (from, to) = (request.from.as_datetime(), request.to.as_datetime());
        if to <= from {
            return Err(Error::invalid_field("to", "must be after from"));
        }
        let mut write = match self
            .begin_idempotent(
                caller,
                "schedules.backfill",
                request.request_id.as_deref(),
                &(id, &request),
                Storage::Plain,
            )
            .await?
        {
            Begun::Replayed(recorded) => return Ok(recorded),
            Begun::Fresh(write) => write,
        };
        let mut row = rows::lock(&mut write.tx, caller.tenant_id, id).await?;
        let slots = row
            .spec()?
            .slots_between(from, to, MAX_BACKFILL_SLOTS)
            .ok_or_else(|| Error::invalid_field("to", "the range holds more than 1,000 slots"))?;
        if row.backfill_next.is_some() {
            return Err(Error::conflict(
                "a backfill of this schedule is still running; wait for it to end",
            ));
        }
        row.backfill_next = slots.first().copied();
        row.backfill_until = row.backfill_next.map(|_| to);
        row.updated_at = millis(self.clock().now());
        rows::save(&mut write.tx, &row).await?;
        let answer = write
            .finish(Backfill {
                schedule_id: id,
                slots: slots.len() as u64,
            })
            .await?;
        if row.backfill_next.is_some() {
            self.wake_background(self.clock().now());
        }
        Ok(answer)
    }

    /// `GET /api/v1/schedules/:id/runs`: newest first.
    pub async fn list_schedule_runs(
        &self,
        caller: &Caller,
        id: Uuid,
        page: PageRequest,
    ) -> Result<Page<ScheduleRun>> {
        let mut conn = self.store().read().await?;
        rows::find(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("schedule"))?;
        let (total,): (i64,) = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT COUNT(*) FROM schedule_runs WHERE schedule_id = $1",
        )
        .bind(id)
        .fetch_one(c)
        .await)?;
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM schedule_runs WHERE schedule_id = $1 \
             ORDER BY scheduled_for DESC, id DESC LIMIT $2 OFFSET $3"
        );
        let runs: Vec<RunRow> = on_db!(&mut conn, c => sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
            .bind(id)
            .bind(i64::from(page.per_page))
            .bind(page.offset() as i64)
            .fetch_all(c)
            .await)?;
        Ok(Page::new(
            runs.iter().map(RunRow::to_api).collect(),
            total as u64,
            page,
        ))
    }
}
