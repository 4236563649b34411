//! The derived workflow state: what a task's change of state does to its
//! workflow, work item and activation, in the task's own transaction
//! ([`after_task_change`], the one function the task lifecycle calls).

use crate::api::TaskState;
use crate::caller::Caller;
use crate::error::Result;
use crate::events::{self, NewEvent};
use crate::store::{Tx, on_db};
use crate::tasks::TaskRow;
use serde_json::json;

use super::rows::{find, find_for_update, reopen};
use super::settle::settle_row;
use super::{activations, work_items};

/// The workflow consequences of a task going `from → to`, in the task's
/// transaction (see the module docs).
pub(crate) async fn after_task_change(
    tx: &mut Tx,
    caller: &Caller,
    task: &TaskRow,
    from: TaskState,
    to: TaskState,
) -> Result<()> {
    let Some(workflow_id) = task.workflow_id else {
        return Ok(());
    };
    if to == TaskState::Claimed {
        let now = tx.now().as_datetime();
        let changed = on_db!(tx, c => sqlx::query(
            "UPDATE workflows SET state = 'in_progress', updated_at = $1 WHERE id = $2 AND state = 'pending'",
        )
        .bind(now)
        .bind(workflow_id)
        .execute(c).await.map(|r| r.rows_affected()))?;
        if changed == 1 {
            let mut event = NewEvent::new(
                "workflow.state_changed",
                "workflow",
                workflow_id,
                json!({ "workflow_id": workflow_id, "from_state": "pending", "to_state": "in_progress", "reason": "task claimed", "task_id": task.id }),
            );
            event.workflow_id = Some(workflow_id);
            event.workspace_id = task.workspace_id;
            events::record(tx, caller, task.tenant_id, event).await?;
        }
        return Ok(());
    }
    if from == to {
        return Ok(());
    }
    // A task leaving `failed` (retried, skipped, reworked, reassigned) takes
    // back what its failure settled: the workflow is open again and is
    // derived anew below, or by the task's next move (decisions §6).
    if from == TaskState::Failed {
        let wf = find_for_update(tx, task.tenant_id, workflow_id).await?;
        reopen(tx, caller, &wf, "a failed task was taken up again").await?;
    }
    let terminal = matches!(
        to,
        TaskState::Completed | TaskState::Cancelled | TaskState::Failed
    );
    // Serialises the workflow's terminal task changes, so the last two
    // tasks finishing at once cannot both miss each other (PostgreSQL;
    // SQLite's one writer already serialises).
    let mut locked = match terminal {
        true => Some(find_for_update(tx, task.tenant_id, workflow_id).await?),
        false => None,
    };
    if let Some(activation_id) = task.activation_id {
        activations::after_orchestrator_task(tx, caller, task, activation_id, to).await?;
        // It may have changed the workflow: read it again below.
        locked = None;
    }
    if to == TaskState::Completed
        && let Some(work_item_id) = task.work_item_id
    {
        work_items::complete_when_done(tx, caller, task, work_item_id).await?;
    }
    if terminal {
        // The locked row is still current (a work item's completion does
        // not touch the workflow row): no second read.
        let wf = match locked {
            Some(wf) => Some(wf),
            None => find(tx, task.tenant_id, workflow_id).await?,
        };
        settle_row(tx, caller, wf).await?;
    }
    Ok(())
}
