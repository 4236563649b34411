//! Settling a workflow: completes or fails it when its tasks and work items
//! say so. Called after a task's terminal change and after a
//! work item is closed by hand.

use crate::api::WorkflowState;
use crate::caller::Caller;
use crate::error::Result;
use crate::store::{Tx, on_db};
use uuid::Uuid;

use super::rows::{WorkflowRow, find, set_state};

/// Completes or fails the workflow when its tasks say so.
pub(crate) async fn settle(
    tx: &mut Tx,
    caller: &Caller,
    tenant_id: Uuid,
    workflow_id: Uuid,
) -> Result<()> {
    let wf = find(tx, tenant_id, workflow_id).await?;
    settle_row(tx, caller, wf).await
}

/// [`settle`] with the workflow row already read in `tx`.
pub(crate) async fn settle_row(
    tx: &mut Tx,
    caller: &Caller,
    wf: Option<WorkflowRow>,
) -> Result<()> {
    let Some(wf) = wf else {
        return Ok(());
    };
    let workflow_id = wf.id;
    let state = wf.state();
    if state.is_terminal() || state == WorkflowState::Paused {
        return Ok(());
    }
    let (total, done, failed): (i64, Option<i64>, Option<i64>) = on_db!(tx, c => sqlx::query_as(
        "SELECT COUNT(*), SUM(CASE WHEN state IN ('completed', 'cancelled') THEN 1 ELSE 0 END), \
         SUM(CASE WHEN state = 'failed' THEN 1 ELSE 0 END) FROM tasks WHERE workflow_id = $1",
    )
    .bind(workflow_id)
    .fetch_one(c)
    .await)?;
    let (done, failed) = (done.unwrap_or(0), failed.unwrap_or(0));
    if total == 0 || done + failed < total {
        return Ok(());
    }
    // Every task has ended: one that failed (with no retry left) fails the
    // workflow, whichever task's move came last (a retried sibling that
    // completes after another failed one still leaves a failure).
    if failed > 0 {
        set_state(
            tx,
            caller,
            &wf,
            state,
            WorkflowState::Failed,
            "a task failed with no retry left",
        )
        .await?;
        return Ok(());
    }
    if wf.lifecycle != "planned" {
        return Ok(());
    }
    let (open_items, open_activations): (i64, i64) = on_db!(tx, c => sqlx::query_as(
        "SELECT (SELECT COUNT(*) FROM work_items WHERE workflow_id = $1 AND completed_at IS NULL), \
                (SELECT COUNT(*) FROM activations WHERE workflow_id = $1 AND status IN ('queued', 'processing'))",
    )
    .bind(workflow_id)
    .fetch_one(c)
    .await)?;
    if open_items == 0 && open_activations == 0 {
        set_state(
            tx,
            caller,
            &wf,
            state,
            WorkflowState::Completed,
            "every task and work item is done",
        )
        .await?;
    }
    Ok(())
}
