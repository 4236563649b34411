//! The operator's actions on a task (admin scope, enforced by the route
//! table): retry, request changes, skip, reassign, escalate, resolve an
//! escalation, approve output, cancel. Each is one transition of
//! [`crate::tasks::state`] and its workflow consequences.

use crate::api::{Task, TaskAction};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::idempotency::{Storage, begin_write};
use crate::lifecycle::failure::record;
use crate::store::{StoredJson, Tx};
use crate::tasks::rows::{TaskRow, find_for_update, record_change, save};
use crate::tasks::state::{TaskOp, transition};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use uuid::Uuid;

impl ControlPlane {
    /// The operator operations: retry, request-changes, reassign, skip,
    /// escalate, resolve-escalation, approve-output, cancel.
    pub async fn task_action(
        &self,
        caller: &Caller,
        id: Uuid,
        op: TaskOp,
        request: TaskAction,
    ) -> Result<Task> {
        let required = |value: &Option<String>, field: &str| -> Result<String> {
            match value.as_deref().map(str::trim) {
                Some(v) if !v.is_empty() => Ok(v.to_owned()),
                _ => Err(Error::invalid_field(field, "is required")),
            }
        };
        let reason = match op {
            TaskOp::Reassign | TaskOp::Escalate => Some(required(&request.reason, "reason")?),
            _ => request.reason.clone(),
        };
        let feedback = match op {
            TaskOp::RequestChanges => Some(required(&request.feedback, "feedback")?),
            _ => None,
        };
        let instructions = match op {
            TaskOp::ResolveEscalation => Some(required(&request.instructions, "instructions")?),
            _ => None,
        };
        let mut write = match op {
            TaskOp::Retry => begin_write!(self, caller, "tasks.retry", request, Storage::Plain),
            TaskOp::RequestChanges => begin_write!(
                self,
                caller,
                "tasks.request_changes",
                request,
                Storage::Plain
            ),
            TaskOp::Reassign => {
                begin_write!(self, caller, "tasks.reassign", request, Storage::Plain)
            }
            TaskOp::Skip => begin_write!(self, caller, "tasks.skip", request, Storage::Plain),
            TaskOp::Escalate => {
                begin_write!(self, caller, "tasks.escalate", request, Storage::Plain)
            }
            TaskOp::ResolveEscalation => begin_write!(
                self,
                caller,
                "tasks.resolve_escalation",
                request,
                Storage::Plain
            ),
            TaskOp::ApproveOutput => begin_write!(
                self,
                caller,
                "tasks.approve_output",
                request,
                Storage::Plain
            ),
            _ => begin_write!(self, caller, "tasks.cancel", request, Storage::Plain),
        };
        let row = apply_task_op(
            &mut write.tx,
            caller,
            id,
            op,
            &request,
            (reason, feedback, instructions),
            self.now().as_datetime(),
        )
        .await?;
        let task = row.to_api()?;
        write.finish(task).await
    }
}

/// `reason`, `feedback` and `instructions` of an operator action, checked.
type ActionTexts = (Option<String>, Option<String>, Option<String>);

/// One operator transition of task `id` inside `tx`: the row, its event
/// (with `reason`, or the operation's name) and the workflow consequences.
/// The single-task routes and bulk actions ([`crate::bulk`]) both go
/// through it. A transition that does not apply fails before any write.
pub(crate) async fn apply_task_op(
    tx: &mut Tx,
    caller: &Caller,
    id: Uuid,
    op: TaskOp,
    request: &TaskAction,
    (reason, feedback, instructions): ActionTexts,
    now: DateTime<Utc>,
) -> Result<TaskRow> {
    let mut row = find_for_update(tx, caller.tenant_id, id).await?;
    let from = row.state()?;
    let to = transition(op, from)?;
    if op == TaskOp::Cancel && from.is_held() && row.heartbeat_timeout_seconds.is_some() {
        // Cooperative cancellation: the holder hears it in its next
        // heartbeat answer and on its worker channel; the task ends
        // `cancelled` when the holder fails or completes it, or at the next
        // lease expiry.
        if !row.cancel_requested {
            row.cancel_requested = true;
            row.updated_at = now;
            save(tx, &row).await?;
            let why = reason.clone().unwrap_or_else(|| "cancel".to_owned());
            record(
                tx,
                caller,
                &row,
                "task.cancel_requested",
                json!({
                    "task_id": row.id, "agent_id": row.assigned_agent_id,
                    "worker_id": row.assigned_worker_id, "attempt": row.attempt, "reason": why,
                }),
            )
            .await?;
        }
        return Ok(row);
    }
    let before = row.clone();
    let release = |row: &mut TaskRow| {
        row.assigned_agent_id = None;
        row.assigned_worker_id = None;
        row.claimed_at = None;
        row.started_at = None;
        row.completed_at = None;
    };
    match op {
        TaskOp::Retry => {
            release(&mut row);
            row.output = None;
            row.error = None;
            row.retry_count += 1;
            row.attempt += 1;
            row.run_at = None;
            row.cancel_requested = false;
        }
        TaskOp::RequestChanges => {
            release(&mut row);
            let input = row.input.0.as_object_mut();
            if let Some(input) = input {
                let list = input.entry("feedback").or_insert_with(|| json!([]));
                if !list.is_array() {
                    *list = json!([list.clone()]);
                }
                if let Some(list) = list.as_array_mut() {
                    list.push(Value::String(feedback.clone().unwrap_or_default()));
                }
            }
        }
        TaskOp::Reassign => {
            release(&mut row);
            row.preferred_agent_id = request.preferred_agent_id;
            row.preferred_worker_id = request.preferred_worker_id;
        }
        TaskOp::Skip => {
            row.output = Some(StoredJson(json!({ "skipped": true, "reason": reason })));
            row.completed_at = Some(now);
        }
        TaskOp::ResolveEscalation => {
            release(&mut row);
            if let Some(input) = row.input.0.as_object_mut() {
                input.insert(
                    "instructions".into(),
                    Value::String(instructions.clone().unwrap_or_default()),
                );
            }
        }
        TaskOp::ApproveOutput => row.completed_at = Some(now),
        TaskOp::Cancel => row.completed_at = Some(now),
        _ => {}
    }
    row.state = to.as_str().into();
    row.updated_at = now;
    save(tx, &row).await?;
    let why = reason.clone().unwrap_or_else(|| op.name().to_owned());
    record_change(tx, caller, &before, op, (from, to), &why).await?;
    crate::workflows::after_task_change(tx, caller, &row, from, to).await?;
    Ok(row)
}
