//! Run control of held and delayed tasks (run control §3, §4): the
//! holder's heartbeat, rescheduling a pending task, and the background job
//! that expires pending tasks, releases expired leases and wakes claimers
//! when a delayed task becomes claimable.
//!
//! The job is due-driven: it does what is due at the clock's now and
//! answers the next time it has work (the earliest `run_at`, `expires_at`
//! or lease expiry), so the runner sleeps exactly until then, not a fixed
//! poll. Each piece of work is claimed in the database (the task read for
//! update, and its state and times checked again inside the transaction),
//! so several replicas never do one piece twice, and a task that reached a
//! terminal state first is never touched: a terminal state always wins
//! over a late expiry.

use crate::api::{
    RescheduleTask, Scope, Task, TaskError, TaskHeartbeat, TaskHeartbeatAck, TaskState, Timestamp,
};
use crate::background::Due;
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::idempotency::{Storage, begin_write};
use crate::lifecycle::failure::{Cause, Failure, fail_in, fence, record};
use crate::store::{StoredJson, Tx, on_db};
use crate::tasks::MAX_DELAY_SECONDS;
use crate::tasks::acting::Acting;
use crate::tasks::counters::counters;
use crate::tasks::rows::{TaskRow, find_for_update, record_change, save};
use crate::tasks::state::{TaskOp, transition};
use chrono::{DateTime, Duration, Utc};
use serde_json::json;
use std::sync::atomic::Ordering;
use uuid::Uuid;

/// The largest `progress` a heartbeat may carry.
const MAX_PROGRESS_BYTES: usize = 64 * 1024;

/// How many due tasks one run of the job handles per kind; the rest are
/// due at once, so the job runs again straight away.
const BATCH: i64 = 200;

/// How far back a passed `run_at` still wakes claimers: the runner wakes at
/// the due time, so a task that became claimable since the previous run
/// lies within this window; a wake-up more is harmless.
const WAKE_WINDOW: Duration = Duration::seconds(2);

/// Moves pending task `id`'s `run_at` inside `tx` (a time not after `now`
/// makes it claimable at once) and writes `task.rescheduled` with `reason`.
/// Any other state is `InvalidTransition`, before any write. The single
/// route and bulk actions ([`crate::bulk`]) both go through it.
pub(crate) async fn reschedule_in(
    tx: &mut Tx,
    caller: &Caller,
    id: Uuid,
    run_at: DateTime<Utc>,
    now: DateTime<Utc>,
    reason: &str,
) -> Result<TaskRow> {
    let mut row = find_for_update(tx, caller.tenant_id, id).await?;
    let from = row.state()?;
    if from != TaskState::Pending {
        return Err(Error::InvalidTransition {
            resource: "task",
            current: from.as_str().into(),
            requested: "pending".into(),
        });
    }
    row.run_at = (run_at > now).then_some(run_at);
    row.updated_at = now;
    save(tx, &row).await?;
    record(
        tx,
        caller,
        &row,
        "task.rescheduled",
        json!({
            "task_id": row.id, "run_at": row.run_at.map(Timestamp::from), "reason": reason,
        }),
    )
    .await?;
    Ok(row)
}

/// The system actor of the job's changes.
pub(crate) fn system(tenant_id: Uuid) -> Caller {
    Caller {
        tenant_id,
        scope: Scope::Service,
        key_id: Uuid::nil(),
        owner_type: "system".into(),
        owner_id: None,
    }
}

impl ControlPlane {
    /// `POST /tasks/:id/heartbeat`: the holder renews its lease and reports
    /// progress; the answer tells it whether cancellation was requested.
    pub async fn heartbeat_task(
        &self,
        caller: &Caller,
        id: Uuid,
        request: TaskHeartbeat,
    ) -> Result<TaskHeartbeatAck> {
        if let Some(progress) = &request.progress {
            if !progress.is_object() {
                return Err(Error::schema_field("progress", "must be a JSON object"));
            }
            if serde_json::to_vec(progress)?.len() > MAX_PROGRESS_BYTES {
                return Err(Error::schema_field("progress", "must be at most 64 KiB"));
            }
        }
        let acting = Acting::resolve(caller, request.agent_id, None)?;
        let (this, caller) = (self.clone(), caller.clone());
        self.store()
            .on_writer(async move {
                let mut tx = this.store().begin().await?;
                let mut row = find_for_update(&mut tx, caller.tenant_id, id).await?;
                fence(&row, &acting, request.attempt)?;
                if !row.state()?.is_held() || !acting.holds(&row) {
                    return Err(Error::conflict(
                        "only the holder of a claimed or in-progress task may heartbeat it",
                    ));
                }
                let now = this.now().as_datetime();
                row.last_heartbeat_at = Some(now);
                if let Some(progress) = request.progress {
                    row.progress = Some(StoredJson(progress));
                    row.progress_at = Some(now);
                }
                save(&mut tx, &row).await?;
                tx.commit().await?;
                if let Some(expiry) = row.lease_expires_at() {
                    this.wake_background(expiry);
                }
                Ok(TaskHeartbeatAck {
                    ack: true,
                    lease_expires_at: row.lease_expires_at().map(Into::into),
                    cancel_requested: row.cancel_requested,
                })
            })
            .await
    }

    /// `POST /tasks/:id/reschedule`: a new `run_at` for a pending task
    /// (409 in any other state).
    pub async fn reschedule_task(
        &self,
        caller: &Caller,
        id: Uuid,
        request: RescheduleTask,
    ) -> Result<Task> {
        let now = self.now().as_datetime();
        let run_at = match (request.run_at, request.delay_seconds) {
            (Some(at), None) => at.as_datetime(),
            (None, Some(seconds)) if (0..=MAX_DELAY_SECONDS).contains(&seconds) => {
                now + Duration::seconds(seconds)
            }
            (None, Some(_)) => {
                return Err(Error::schema_field(
                    "delay_seconds",
                    "must be 0 to 31536000",
                ));
            }
            _ => {
                return Err(Error::schema_field(
                    "run_at",
                    "give exactly one of run_at and delay_seconds",
                ));
            }
        };
        let (this, caller) = (self.clone(), caller.clone());
        let task = self
            .store()
            .on_writer(async move {
                let mut write =
                    begin_write!(this, &caller, "tasks.reschedule", request, Storage::Plain);
                let row =
                    reschedule_in(&mut write.tx, &caller, id, run_at, now, "reschedule").await?;
                write.finish(row.to_api()?).await
            })
            .await?;
        self.after_reschedule(task.run_at.map(|at| at.as_datetime()));
        Ok(task)
    }

    /// Tells whoever waits for a rescheduled task (after the commit): the
    /// runner when it becomes claimable later, the claimers when now.
    pub(crate) fn after_reschedule(&self, run_at: Option<DateTime<Utc>>) {
        match run_at {
            Some(at) => self.wake_background(at),
            None => self.store().wake_claimers(),
        }
    }

    /// The run-control job of the background runner (module docs): expiry,
    /// lease release, wake-ups for delayed tasks; the next time it has work.
    pub(crate) async fn run_control_job(&self) -> Result<Due> {
        let now = self.now().as_datetime();
        let mut conn = self.store().read().await?;
        let expiring: Vec<(Uuid, Uuid)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT id, tenant_id FROM tasks WHERE state = 'pending' AND expires_at IS NOT NULL \
             AND expires_at <= $1 ORDER BY expires_at LIMIT $2",
        ).bind(now).bind(BATCH).fetch_all(c).await)?;
        let leased: Vec<(Uuid, Uuid, Option<DateTime<Utc>>, i32)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT id, tenant_id, last_heartbeat_at, heartbeat_timeout_seconds FROM tasks \
             WHERE state IN ('claimed', 'in_progress') AND heartbeat_timeout_seconds IS NOT NULL",
        ).fetch_all(c).await)?;
        let became_claimable: Vec<(Uuid,)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT id FROM tasks WHERE state = 'pending' AND run_at IS NOT NULL \
             AND run_at > $1 AND run_at <= $2 LIMIT 1",
        ).bind(now - WAKE_WINDOW).bind(now).fetch_all(c).await)?;
        let next: Vec<(Due, Due)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT (SELECT MIN(run_at) FROM tasks WHERE state = 'pending' AND run_at IS NOT NULL \
             AND run_at > $1), \
             (SELECT MIN(expires_at) FROM tasks WHERE state = 'pending' AND expires_at IS NOT NULL \
             AND expires_at > $1)",
        ).bind(now).fetch_all(c).await)?;
        drop(conn);

        if !became_claimable.is_empty() {
            self.store().wake_claimers();
        }
        let mut due: Vec<DateTime<Utc>> = next
            .into_iter()
            .flat_map(|(run_at, expires_at)| [run_at, expires_at])
            .flatten()
            .collect();
        if expiring.len() as i64 == BATCH {
            due.push(now);
        }
        for (id, tenant_id) in expiring {
            self.expire(tenant_id, id, now).await?;
        }
        for (id, tenant_id, last, timeout) in leased {
            let expiry = last.map(|at| at + Duration::seconds(i64::from(timeout)));
            match expiry {
                Some(expiry) if expiry > now => due.push(expiry),
                _ => {
                    if let Some(run_at) = self.release_lease(tenant_id, id, now).await? {
                        due.push(run_at);
                    }
                }
            }
        }
        Ok(due.into_iter().min())
    }

    /// Cancels pending task `id` whose `expires_at` passed (reason
    /// `expired`, a `task.expired` event); nothing when it moved meanwhile.
    async fn expire(&self, tenant_id: Uuid, id: Uuid, now: DateTime<Utc>) -> Result<()> {
        let caller = system(tenant_id);
        let mut tx = self.store().begin().await?;
        let mut row = find_for_update(&mut tx, tenant_id, id).await?;
        let from = row.state()?;
        if from != TaskState::Pending || row.expires_at.is_none_or(|at| at > now) {
            return Ok(());
        }
        let before = row.clone();
        let to = transition(TaskOp::Cancel, from)?;
        row.state = to.as_str().into();
        row.completed_at = Some(now);
        row.updated_at = now;
        save(&mut tx, &row).await?;
        record_change(
            &mut tx,
            &caller,
            &before,
            TaskOp::Cancel,
            (from, to),
            "expired",
        )
        .await?;
        record(
            &mut tx,
            &caller,
            &row,
            "task.expired",
            json!({
                "task_id": row.id, "expires_at": row.expires_at.map(Timestamp::from),
            }),
        )
        .await?;
        crate::workflows::after_task_change(&mut tx, &caller, &row, from, to).await?;
        tx.commit().await?;
        counters().tasks_expired.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Releases held task `id` whose lease expired (category
    /// `lease_expired`): retried by its policy, cancelled when cancellation
    /// was requested, else failed. The retry's `run_at`, if any.
    async fn release_lease(
        &self,
        tenant_id: Uuid,
        id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<Option<DateTime<Utc>>> {
        let caller = system(tenant_id);
        let mut tx = self.store().begin().await?;
        let row: TaskRow = find_for_update(&mut tx, tenant_id, id).await?;
        // Checked again under the lock: a heartbeat or a completion that
        // came first wins.
        if row.lease_expires_at().is_none_or(|at| at > now) {
            return Ok(None);
        }
        let error = TaskError {
            category: Some("lease_expired".into()),
            message: Some(format!(
                "no heartbeat within {} seconds",
                row.heartbeat_timeout_seconds.unwrap_or_default()
            )),
            recoverable: Some(true),
        };
        let failure = Failure {
            cause: Cause::LeaseExpired,
            error: &error,
            reason: "lease_expired",
            retry_after: None,
            now,
        };
        let row = fail_in(&mut tx, &caller, row, failure).await?;
        tx.commit().await?;
        counters().leases_expired.fetch_add(1, Ordering::Relaxed);
        if row.state()? == TaskState::Pending && row.run_at.is_none() {
            self.store().wake_claimers();
        }
        Ok(row.run_at)
    }
}
