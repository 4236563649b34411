//! The operations on schedules: create, list, get, patch, delete, pause,
//! resume and preview. Every write records a `schedule.*` event in its
//! transaction and, when it moves the next fire earlier, wakes the
//! background runner after its commit.

use crate::api::schedules::{
    CreateSchedule, DEFAULT_CATCHUP_WINDOW_SECONDS, DeletedSchedule, PatchSchedule,
    PreviewSchedule, Schedule, ScheduleFilter, SchedulePreview,
};
use crate::api::{Page, PageRequest, Timestamp};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::idempotency::{Begun, Storage, begin_write};
use crate::schedules::fields;
use crate::schedules::fire::record;
use crate::schedules::rows::{self, ScheduleRow, millis, schedule_columns};
use crate::schedules::spec::Spec;
use crate::store::{contains_pattern, on_db};
use serde_json::json;
use sqlx::types::Json;
use uuid::Uuid;

impl ControlPlane {
    /// Wakes the runner for the row's next fire (after a commit).
    fn wake_for(&self, row: &ScheduleRow) {
        if let Some(at) = row.next_fire_at {
            self.wake_background(at);
        }
    }

    /// `POST /api/v1/schedules`: `201`; a name in use is 409, a dangling
    /// target reference 400.
    pub async fn create_schedule(
        &self,
        caller: &Caller,
        request: CreateSchedule,
    ) -> Result<Schedule> {
        let timezone = request.timezone.clone().unwrap_or_else(|| "UTC".into());
        let start_at = request.start_at.map(|t| t.as_datetime());
        let end_at = request.end_at.map(|t| t.as_datetime());
        let spec = Spec::new(
            request.cron.as_deref(),
            request.every_seconds,
            &timezone,
            start_at,
        )?;
        let now = millis(self.clock().now());
        spec.check_matches(now)?;
        fields::window(start_at, end_at)?;
        fields::target_shape(&request.target)?;
        let mut row = ScheduleRow {
            id: Uuid::now_v7(),
            tenant_id: caller.tenant_id,
            name: fields::name(&request.name)?,
            description: request.description.clone(),
            cron: request.cron.as_deref().map(|c| c.trim().to_owned()),
            every_seconds: request.every_seconds,
            timezone,
            overlap: request.overlap.unwrap_or_default().as_str().into(),
            catchup: request.catchup.unwrap_or_default().as_str().into(),
            catchup_window_seconds: fields::catchup_window(
                request
                    .catchup_window_seconds
                    .unwrap_or(DEFAULT_CATCHUP_WINDOW_SECONDS),
            )?,
            jitter_seconds: fields::jitter(request.jitter_seconds.unwrap_or(0))?,
            start_at,
            end_at,
            paused: request.paused.unwrap_or(false),
            target: Json(request.target.clone()),
            next_slot: None,
            next_fire_at: None,
            buffered_slot: None,
            backfill_next: None,
            backfill_until: None,
            last_fired_at: None,
            fire_count: 0,
            skip_count: 0,
            created_at: now,
            updated_at: now,
        };
        row.plan_from(&spec, now);
        self.check_target(caller, &row).await?;
        let mut write = begin_write!(self, caller, "schedules.create", request, Storage::Plain);
        rows::insert(&mut write.tx, &row).await?;
        record(
            &mut write.tx,
            caller,
            "schedule.created",
            row.id,
            json!({ "schedule_id": row.id, "name": row.name, "next_fire_at": row.next_fire_at.map(Timestamp::from) }),
        )
        .await?;
        let schedule = write.finish(row.to_api()).await?;
        self.wake_for(&row);
        Ok(schedule)
    }

    /// `GET /api/v1/schedules`: newest first, filtered by `paused` and
    /// `search` (name or description, case-insensitive).
    pub async fn list_schedules(
        &self,
        caller: &Caller,
        filter: ScheduleFilter,
        page: PageRequest,
    ) -> Result<Page<Schedule>> {
        let pattern =
            contains_pattern("search", filter.search.as_deref())?.map(|p| p.to_lowercase());
        macro_rules! where_clause {
            () => {
                " WHERE tenant_id = $1 AND ($2 IS NULL OR paused = $2) \
                 AND ($3 IS NULL OR LOWER(name) LIKE $3 ESCAPE '\\' \
                 OR LOWER(COALESCE(description, '')) LIKE $3 ESCAPE '\\')"
            };
        }
        let mut conn = self.store().read().await?;
        let (total,): (i64,) = on_db!(&mut conn, c => sqlx::query_as(concat!(
            "SELECT COUNT(*) FROM schedules", where_clause!()
        ))
        .bind(caller.tenant_id)
        .bind(filter.paused)
        .bind(&pattern)
        .fetch_one(c)
        .await)?;
        let rows: Vec<ScheduleRow> = on_db!(&mut conn, c => sqlx::query_as(concat!(
            "SELECT ", schedule_columns!(), " FROM schedules", where_clause!(),
            " ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5"
        ))
        .bind(caller.tenant_id)
        .bind(filter.paused)
        .bind(&pattern)
        .bind(i64::from(page.per_page))
        .bind(page.offset() as i64)
        .fetch_all(c)
        .await)?;
        Ok(Page::new(
            rows.iter().map(ScheduleRow::to_api).collect(),
            total as u64,
            page,
        ))
    }

    /// `GET /api/v1/schedules/:id`.
    pub async fn get_schedule(&self, caller: &Caller, id: Uuid) -> Result<Schedule> {
        let mut conn = self.store().read().await?;
        rows::find(&mut conn, caller.tenant_id, id)
            .await?
            .map(|row| row.to_api())
            .ok_or(Error::not_found("schedule"))
    }

    /// `PATCH /api/v1/schedules/:id`: any field but `id`; a change of the
    /// spec, zone or window recomputes `next_fire_at` from now (missed slots
    /// of the old spec are not caught up).
    pub async fn patch_schedule(
        &self,
        caller: &Caller,
        id: Uuid,
        request: PatchSchedule,
    ) -> Result<Schedule> {
        if let Some(target) = &request.target {
            // Checked before the write begins: the check runs the launch in
            // a transaction of its own (SQLite has one writer).
            let mut current = {
                let mut conn = self.store().read().await?;
                rows::find(&mut conn, caller.tenant_id, id)
                    .await?
                    .ok_or(Error::not_found("schedule"))?
            };
            current.target = Json(target.clone());
            self.check_target(caller, &current).await?;
        }
        let mut write = match self
            .begin_idempotent(
                caller,
                "schedules.patch",
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
        let replans = request.cron.is_some()
            || request.every_seconds.is_some()
            || request.timezone.is_some()
            || request.start_at.is_some()
            || request.end_at.is_some()
            || request.paused.is_some();
        if let Some(name) = &request.name {
            row.name = fields::name(name)?;
        }
        if let Some(description) = &request.description {
            row.description = description.clone();
        }
        if request.cron.is_some() || request.every_seconds.is_some() {
            row.cron = request.cron.as_deref().map(|c| c.trim().to_owned());
            row.every_seconds = request.every_seconds;
        }
        if let Some(timezone) = &request.timezone {
            row.timezone = timezone.clone();
        }
        if let Some(overlap) = request.overlap {
            row.overlap = overlap.as_str().into();
        }
        if let Some(catchup) = request.catchup {
            row.catchup = catchup.as_str().into();
        }
        if let Some(seconds) = request.catchup_window_seconds {
            row.catchup_window_seconds = fields::catchup_window(seconds)?;
        }
        if let Some(seconds) = request.jitter_seconds {
            row.jitter_seconds = fields::jitter(seconds)?;
        }
        if let Some(start_at) = request.start_at {
            row.start_at = start_at.map(|t| t.as_datetime());
        }
        if let Some(end_at) = request.end_at {
            row.end_at = end_at.map(|t| t.as_datetime());
        }
        if let Some(paused) = request.paused {
            row.paused = paused;
        }
        fields::window(row.start_at, row.end_at)?;
        let spec = row.spec()?;
        let now = millis(self.clock().now());
        spec.check_matches(now)?;
        if replans || request.jitter_seconds.is_some() {
            if row.paused {
                row.buffered_slot = None;
            }
            row.plan_from(&spec, now);
        }
        if let Some(target) = &request.target {
            row.target = Json(target.clone());
        }
        row.updated_at = now;
        rows::save(&mut write.tx, &row).await?;
        record(
            &mut write.tx,
            caller,
            "schedule.updated",
            id,
            json!({ "schedule_id": id, "next_fire_at": row.next_fire_at.map(Timestamp::from) }),
        )
        .await?;
        let schedule = write.finish(row.to_api()).await?;
        self.wake_for(&row);
        Ok(schedule)
    }

    /// `DELETE /api/v1/schedules/:id`: the schedule and its runs (the
    /// workflows and tasks it launched stay).
    pub async fn delete_schedule(&self, caller: &Caller, id: Uuid) -> Result<DeletedSchedule> {
        let mut tx = self.store().begin().await?;
        let row = rows::lock(&mut tx, caller.tenant_id, id).await?;
        on_db!(&mut tx, c => sqlx::query("DELETE FROM schedules WHERE tenant_id = $1 AND id = $2")
            .bind(caller.tenant_id)
            .bind(id)
            .execute(c)
            .await
            .map(|r| r.rows_affected()))?;
        record(
            &mut tx,
            caller,
            "schedule.deleted",
            id,
            json!({ "schedule_id": id, "name": row.name }),
        )
        .await?;
        tx.commit().await?;
        Ok(DeletedSchedule { id, deleted: true })
    }

    /// `POST /api/v1/schedules/:id/pause` and `/resume`. Pausing clears the
    /// next fire and any buffered slot; resuming plans from now, so paused
    /// time is never caught up. Pausing a paused schedule (or resuming a
    /// running one) answers the record and records nothing.
    pub async fn set_schedule_paused(
        &self,
        caller: &Caller,
        id: Uuid,
        paused: bool,
    ) -> Result<Schedule> {
        let mut tx = self.store().begin().await?;
        let mut row = rows::lock(&mut tx, caller.tenant_id, id).await?;
        if row.paused == paused {
            return Ok(row.to_api());
        }
        let now = millis(self.clock().now());
        row.paused = paused;
        row.buffered_slot = None;
        row.plan_from(&row.spec()?, now);
        row.updated_at = now;
        rows::save(&mut tx, &row).await?;
        let event = if paused {
            "schedule.paused"
        } else {
            "schedule.resumed"
        };
        record(
            &mut tx,
            caller,
            event,
            id,
            json!({ "schedule_id": id, "next_fire_at": row.next_fire_at.map(Timestamp::from) }),
        )
        .await?;
        tx.commit().await?;
        self.wake_for(&row);
        Ok(row.to_api())
    }

    /// `POST /api/v1/schedules/preview`: the next fire times of a spec from
    /// now (or `start_at`), before `end_at`, as UTC instants and local times
    /// of its zone. Jitter is not included (it depends on the schedule id).
    pub fn preview_schedule(&self, request: &PreviewSchedule) -> Result<SchedulePreview> {
        let timezone = request.timezone.clone().unwrap_or_else(|| "UTC".into());
        let start_at = request.start_at.map(|t| t.as_datetime());
        let spec = Spec::new(
            request.cron.as_deref(),
            request.every_seconds,
            &timezone,
            start_at,
        )?;
        spec.check_matches(self.clock().now())?;
        let count = request.count.unwrap_or(5);
        if !(1..=50).contains(&count) {
            return Err(Error::invalid_field("count", "must be 1 to 50"));
        }
        let now = self.clock().now();
        let mut next = spec.at_or_after(start_at.map_or(now, |s| s.max(now)));
        let mut fire_times = Vec::new();
        while let Some(slot) = next {
            if fire_times.len() == count as usize
                || request.end_at.is_some_and(|end| slot >= end.as_datetime())
            {
                break;
            }
            fire_times.push(slot);
            next = spec.next_after(slot);
        }
        Ok(SchedulePreview {
            local_times: fire_times
                .iter()
                .map(|t| {
                    t.with_timezone(&spec.zone)
                        .format("%Y-%m-%dT%H:%M:%S%:z")
                        .to_string()
                })
                .collect(),
            fire_times: fire_times.into_iter().map(Timestamp::from).collect(),
            timezone,
        })
    }
}
