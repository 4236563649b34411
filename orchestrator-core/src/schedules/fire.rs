//! Firing one slot: in one transaction, the schedule row is locked, the
//! slot's run row is inserted (unique on `(schedule_id, scheduled_for)`),
//! the overlap policy is applied and the workflow launched or the task
//! created, so two replicas, a trigger racing the timer or a crash between
//! launch and commit can never give a slot two runs. A launch that fails is
//! rolled back and the slot is recorded as a `failed` run in a transaction
//! of its own; the schedule moves on either way.

use crate::api::Timestamp;
use crate::api::schedules::{OverlapPolicy, RunOutcome, ScheduleTarget};
use crate::api::{CreateWorkflow, TaskAction, WorkflowAction};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::schedules::rows::{self, RunRow, ScheduleRow, millis};
use crate::store::Tx;
use crate::tasks::create::NewTask;
use crate::tasks::state::TaskOp;
use crate::workflows::WorkflowOp;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use uuid::Uuid;

/// Which slot of the schedule a fire is for; the fire only goes ahead while
/// the row still points at it (another replica may have fired it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// `next_slot`: the timer.
    Next,
    /// `buffered_slot`: the slot `buffer_one` kept waiting.
    Buffered,
    /// `backfill_next`: the next slot of a backfill.
    Backfill,
    /// A `trigger` (`scheduled_for` = now).
    Trigger,
}

/// What to do with a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// A `skipped` run with this reason.
    Skip(&'static str),
    /// Fire under this overlap policy; `cancelled` when the running
    /// workflows or tasks were cancelled for it (`cancel_previous`).
    Fire {
        overlap: OverlapPolicy,
        cancelled: bool,
    },
}

/// One slot to fire.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot {
    pub at: DateTime<Utc>,
    pub source: Source,
    pub decision: Decision,
}

impl Slot {
    /// Whether `row` still points at this slot.
    fn current(&self, row: &ScheduleRow) -> bool {
        match self.source {
            Source::Next => !row.paused && row.next_slot == Some(self.at),
            Source::Buffered => row.buffered_slot == Some(self.at),
            Source::Backfill => row.backfill_next == Some(self.at),
            Source::Trigger => true,
        }
    }

    /// Moves `row` past this slot.
    fn advance(&self, row: &mut ScheduleRow) -> Result<()> {
        match self.source {
            Source::Next => {
                let spec = row.spec()?;
                row.set_next(spec.next_after(self.at));
            }
            Source::Buffered => row.buffered_slot = None,
            Source::Backfill => {
                let spec = row.spec()?;
                let next = spec
                    .next_after(self.at)
                    .filter(|n| row.backfill_until.is_some_and(|until| *n < until));
                row.backfill_next = next;
                if next.is_none() {
                    row.backfill_until = None;
                }
            }
            Source::Trigger => {}
        }
        Ok(())
    }
}

/// The metadata a launch carries: the target's, plus `schedule_id` and
/// `scheduled_for`.
fn stamped(metadata: Option<&Value>, schedule_id: Uuid, slot: DateTime<Utc>) -> Value {
    let mut metadata = metadata
        .filter(|m| m.is_object())
        .cloned()
        .unwrap_or_else(|| json!({}));
    if let Some(map) = metadata.as_object_mut() {
        map.insert("schedule_id".into(), json!(schedule_id));
        map.insert("scheduled_for".into(), json!(Timestamp::from(slot)));
    }
    metadata
}

/// Launches the schedule's target for `slot` in `tx` at `now`: the workflow
/// through the `POST /workflows` path, the task through the `POST /tasks`
/// path.
pub(crate) async fn launch(
    tx: &mut Tx,
    caller: &Caller,
    row: &ScheduleRow,
    (slot, now): (DateTime<Utc>, DateTime<Utc>),
) -> Result<(Option<Uuid>, Option<Uuid>)> {
    match &row.target.0 {
        ScheduleTarget::Workflow {
            playbook_id,
            workspace_id,
            name,
            parameters,
            metadata,
        } => {
            let name = name.clone().unwrap_or_else(|| {
                let stamp = Timestamp::from(slot).to_string();
                let room = 200 - stamp.len() - 1;
                let base: String = row.name.chars().take(room).collect();
                format!("{base} {stamp}")
            });
            let request = CreateWorkflow {
                playbook_id: *playbook_id,
                workspace_id: *workspace_id,
                name,
                parameters: parameters.clone(),
                metadata: Some(stamped(metadata.as_ref(), row.id, slot)),
                ..Default::default()
            };
            let (workflow, _) = crate::workflows::launch_in(tx, caller, &request).await?;
            Ok((Some(workflow.id), None))
        }
        ScheduleTarget::Task { task } => {
            let mut request = (**task).clone();
            request.request_id = None;
            request.metadata = Some(stamped(request.metadata.as_ref(), row.id, slot));
            let task = crate::tasks::create::insert(
                tx,
                caller,
                caller.tenant_id,
                NewTask {
                    request,
                    activation_id: None,
                    rate_key_checked: false,
                },
                now,
            )
            .await?;
            Ok((None, Some(task.id)))
        }
    }
}

/// Records a schedule event in `tx`.
pub(crate) async fn record(
    tx: &mut Tx,
    caller: &Caller,
    event_type: &'static str,
    schedule_id: Uuid,
    data: Value,
) -> Result<()> {
    events::record(
        tx,
        caller,
        caller.tenant_id,
        NewEvent::new(event_type, "schedule", schedule_id, data),
    )
    .await
}

/// The event of a run: `schedule.skipped` for a skip, `schedule.fired`
/// otherwise (a failed launch included, with its reason).
async fn record_run(tx: &mut Tx, caller: &Caller, run: &RunRow) -> Result<()> {
    let event_type = if run.outcome == RunOutcome::Skipped.as_str() {
        "schedule.skipped"
    } else {
        "schedule.fired"
    };
    record(
        tx,
        caller,
        event_type,
        run.schedule_id,
        json!({
            "schedule_id": run.schedule_id, "run_id": run.id,
            "scheduled_for": Timestamp::from(run.scheduled_for), "outcome": run.outcome,
            "reason": run.reason, "workflow_id": run.workflow_id, "task_id": run.task_id,
        }),
    )
    .await
}

impl ControlPlane {
    /// Cancels the schedule's running workflows and tasks through the
    /// operator's cancel (events, reason `schedule overlap`); answers
    /// whether any was running.
    pub(crate) async fn cancel_running(&self, caller: &Caller, schedule_id: Uuid) -> Result<bool> {
        let running = {
            let mut conn = self.store().read().await?;
            rows::running(&mut conn, schedule_id).await?
        };
        let reason = Some("schedule overlap".to_owned());
        for (workflow_id, task_id) in &running {
            let cancelled = match (workflow_id, task_id) {
                (Some(id), _) => self
                    .workflow_action(
                        caller,
                        *id,
                        WorkflowOp::Cancel,
                        WorkflowAction {
                            reason: reason.clone(),
                            request_id: None,
                        },
                    )
                    .await
                    .map(drop),
                (None, Some(id)) => self
                    .task_action(
                        caller,
                        *id,
                        TaskOp::Cancel,
                        TaskAction {
                            reason: reason.clone(),
                            ..Default::default()
                        },
                    )
                    .await
                    .map(drop),
                (None, None) => Ok(()),
            };
            // One that ended meanwhile (409) no longer overlaps.
            match cancelled {
                Ok(()) | Err(Error::Conflict { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(!running.is_empty())
    }

    /// Fires `slot` of the schedule in `tx` (its row locked and still
    /// pointing at the slot): moves the row past the slot, then writes the
    /// run and launches. `None` when the slot already had its run or
    /// `buffer_one` keeps it waiting. An `Err` means the launch failed: the caller drops
    /// `tx` and records the failure with [`ControlPlane::record_failed`].
    pub(crate) async fn fire_in(
        &self,
        tx: &mut Tx,
        caller: &Caller,
        row: &mut ScheduleRow,
        slot: Slot,
    ) -> Result<Option<RunRow>> {
        let row_due = row.due(slot.at);
        slot.advance(row)?;
        let now = millis(self.clock().now());
        let mut run = RunRow {
            id: Uuid::now_v7(),
            schedule_id: row.id,
            scheduled_for: slot.at,
            fired_at: now,
            outcome: RunOutcome::Launched.as_str().into(),
            reason: None,
            workflow_id: None,
            task_id: None,
            lag_ms: None,
        };
        let mut decision = slot.decision;
        if let Decision::Fire { overlap, .. } = decision
            && overlap != OverlapPolicy::AllowAll
            && !rows::running(tx, row.id).await?.is_empty()
        {
            decision = match overlap {
                OverlapPolicy::BufferOne
                    if slot.source == Source::Next && row.buffered_slot.is_none() =>
                {
                    row.buffered_slot = Some(slot.at);
                    row.updated_at = now;
                    rows::save(tx, row).await?;
                    return Ok(None);
                }
                OverlapPolicy::CancelPrevious => Decision::Fire {
                    overlap,
                    cancelled: true,
                },
                _ => Decision::Skip("overlap"),
            };
        }
        match decision {
            Decision::Skip(reason) => {
                run.outcome = RunOutcome::Skipped.as_str().into();
                run.reason = Some(reason.into());
                row.skip_count += 1;
            }
            Decision::Fire { cancelled, .. } => {
                if cancelled {
                    run.outcome = RunOutcome::CancelledPrevious.as_str().into();
                }
                if slot.source == Source::Next {
                    run.lag_ms = Some((now - row_due).num_milliseconds().max(0));
                }
                row.fire_count += 1;
                row.last_fired_at = Some(now);
            }
        }
        if !rows::claim_slot(tx, row.tenant_id, &run).await? {
            // The slot has its run already; only the cursor moves.
            rows::save(tx, row).await?;
            return Ok(None);
        }
        if matches!(decision, Decision::Fire { .. }) {
            let (workflow_id, task_id) = launch(tx, caller, row, (slot.at, now)).await?;
            run.workflow_id = workflow_id;
            run.task_id = task_id;
            rows::settle_run(tx, &run).await?;
        }
        row.updated_at = now;
        rows::save(tx, row).await?;
        record_run(tx, caller, &run).await?;
        Ok(Some(run))
    }

    /// Records `slot` as a `failed` run with `error` as its reason, in a
    /// transaction of its own, and moves the schedule past it. `None` when
    /// the schedule no longer points at the slot or the slot has its run.
    pub(crate) async fn record_failed(
        &self,
        caller: &Caller,
        schedule_id: Uuid,
        slot: Slot,
        error: &Error,
    ) -> Result<Option<RunRow>> {
        let mut tx = self.store().begin().await?;
        let mut row = rows::lock(&mut tx, caller.tenant_id, schedule_id).await?;
        if !slot.current(&row) {
            return Ok(None);
        }
        slot.advance(&mut row)?;
        let now = millis(self.clock().now());
        let run = RunRow {
            id: Uuid::now_v7(),
            schedule_id,
            scheduled_for: slot.at,
            fired_at: now,
            outcome: RunOutcome::Failed.as_str().into(),
            reason: Some(error.to_string()),
            workflow_id: None,
            task_id: None,
            lag_ms: None,
        };
        let claimed = rows::claim_slot(&mut tx, row.tenant_id, &run).await?;
        if claimed {
            row.fire_count += 1;
            row.last_fired_at = Some(now);
            record_run(&mut tx, caller, &run).await?;
        }
        row.updated_at = now;
        rows::save(&mut tx, &row).await?;
        tx.commit().await?;
        Ok(claimed.then_some(run))
    }

    /// Fires one slot of the timer, a buffer or a backfill in its own
    /// transaction (see the module docs). `None` when there was nothing to
    /// write a run for.
    pub(crate) async fn fire_slot(
        &self,
        tenant_id: Uuid,
        schedule_id: Uuid,
        slot: Slot,
    ) -> Result<Option<RunRow>> {
        let caller = Caller::system(tenant_id);
        let mut tx = self.store().begin().await?;
        let mut row = rows::lock(&mut tx, tenant_id, schedule_id).await?;
        if !slot.current(&row) {
            return Ok(None);
        }
        match self.fire_in(&mut tx, &caller, &mut row, slot).await {
            Ok(run) => {
                tx.commit().await?;
                Ok(run)
            }
            Err(error) => {
                drop(tx);
                tracing::warn!(schedule_id = %schedule_id, slot = %slot.at, error = %error, "a schedule's launch failed");
                self.record_failed(&caller, schedule_id, slot, &error).await
            }
        }
    }
}
