//! How a held task fails, whoever fails it (the holder's `/fail`, a lost
//! agent, a timeout, an expired lease), and the fencing every holder call
//! passes first (run control §2 and §4).
//!
//! One function, [`fail_in`], decides in the task's transaction: a holder
//! asked to cancel ends `cancelled`; otherwise the retry rules
//! ([`crate::tasks::retry::decide`]) send the task back to `pending` with
//! `attempt + 1` and `run_at` = the moment of failure + the backoff (a
//! `task.retry_scheduled` event), or to `failed`. So every path counts an
//! attempt the same way and a lost agent or an expired lease is a retry like
//! any other failure.

use crate::api::TaskError;
use crate::caller::Caller;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::store::{StoredJson, Tx};
use crate::tasks::acting::Acting;
use crate::tasks::retry::{self, Verdict};
use crate::tasks::rows::{TaskRow, record_change, save};
use crate::tasks::state::{TaskOp, transition};
use chrono::{DateTime, Duration, Utc};
use serde_json::json;

/// Why a held task failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cause {
    /// `POST /tasks/:id/fail`.
    Fail,
    /// The holding agent went silent past the grace (liveness).
    AgentLost,
    /// Held longer than `timeout_minutes`.
    Timeout,
    /// No claim, start or heartbeat within `heartbeat_timeout_seconds`.
    LeaseExpired,
}

/// One failure of a held task.
pub(crate) struct Failure<'a> {
    pub cause: Cause,
    pub error: &'a TaskError,
    /// The event's reason.
    pub reason: &'a str,
    /// The worker's `retry_after_seconds`.
    pub retry_after: Option<i64>,
    /// The moment of failure: the retry's delay counts from here.
    pub now: DateTime<Utc>,
}

/// Fails held `row` in `tx` (module docs); the row as written.
pub(crate) async fn fail_in(
    tx: &mut Tx,
    caller: &Caller,
    mut row: TaskRow,
    failure: Failure<'_>,
) -> Result<TaskRow> {
    let from = row.state()?;
    let before = row.clone();
    let now = failure.now;
    row.error = Some(StoredJson(serde_json::to_value(failure.error)?));
    row.updated_at = now;
    if failure.cause != Cause::Fail {
        // The system took the task away: the holder's late calls are
        // answered LEASE_LOST, even once it holds the task again.
        row.lease_lost_agent_id = row.assigned_agent_id;
    }
    if row.cancel_requested && from.is_held() {
        // Cooperative cancellation (§4): the holder stopped, or its lease
        // ran out; never retried.
        let to = transition(TaskOp::Cancel, from)?;
        row.state = to.as_str().into();
        row.completed_at = Some(now);
        save(tx, &row).await?;
        record_change(
            tx,
            caller,
            &before,
            TaskOp::Cancel,
            (from, to),
            "cancel requested",
        )
        .await?;
        crate::workflows::after_task_change(tx, caller, &row, from, to).await?;
        return Ok(row);
    }
    let retries_left = row.retry_count < row.max_retries;
    let legacy_retry = match failure.cause {
        Cause::Fail => row.auto_retry && retries_left,
        Cause::AgentLost | Cause::LeaseExpired => retries_left,
        Cause::Timeout => false,
    };
    let verdict = retry::decide(&row, failure.error, legacy_retry, failure.retry_after);
    let retry_left = matches!(verdict, Verdict::Retry { .. });
    let op = match failure.cause {
        Cause::Fail => TaskOp::Fail { retry_left },
        Cause::AgentLost | Cause::LeaseExpired => TaskOp::AgentLost { retry_left },
        Cause::Timeout => TaskOp::Timeout { retry_left },
    };
    let to = transition(op, from)?;
    if let Verdict::Retry { delay_seconds } = verdict {
        row.retry_count += 1;
        row.attempt += 1;
        row.assigned_agent_id = None;
        row.assigned_worker_id = None;
        row.claimed_at = None;
        row.started_at = None;
        row.last_heartbeat_at = None;
        row.cancel_requested = false;
        let delay = Duration::milliseconds((delay_seconds * 1000.0).round() as i64);
        row.run_at = (delay > Duration::zero()).then(|| now + delay);
    } else {
        // A failed task has ended: its duration stops here (a retry clears it).
        row.completed_at = Some(now);
    }
    row.state = to.as_str().into();
    save(tx, &row).await?;
    // The event names the agent that held the task.
    record_change(tx, caller, &before, op, (from, to), failure.reason).await?;
    if failure.cause == Cause::LeaseExpired {
        record(
            tx,
            caller,
            &row,
            "task.lease_expired",
            json!({
                "task_id": row.id, "agent_id": before.assigned_agent_id,
                "attempt": before.attempt, "to_state": to.as_str(),
            }),
        )
        .await?;
    }
    if let Verdict::Retry { delay_seconds } = verdict {
        crate::tasks::counters::counters()
            .retries_scheduled
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        record(
            tx,
            caller,
            &row,
            "task.retry_scheduled",
            json!({
                "task_id": row.id, "attempt": row.attempt, "delay_seconds": delay_seconds,
                "run_at": row.run_at.map(crate::api::Timestamp::from),
                "error_category": failure.error.category,
                // The failure of the attempt that ended, for a retry history.
                "error_message": failure.error.message,
            }),
        )
        .await?;
    }
    crate::workflows::after_task_change(tx, caller, &row, from, to).await?;
    Ok(row)
}

/// Writes a run-control event about `row`.
pub(crate) async fn record(
    tx: &mut Tx,
    caller: &Caller,
    row: &TaskRow,
    kind: &str,
    data: serde_json::Value,
) -> Result<()> {
    let mut event = NewEvent::new(kind, "task", row.id, data);
    event.workflow_id = row.workflow_id;
    event.workspace_id = row.workspace_id;
    events::record(tx, caller, row.tenant_id, event).await
}

/// Fencing (§4): a call that names an `attempt` other than the task's
/// current one, or comes from the agent whose lease the system took away
/// and that does not hold the task now, is `409 LEASE_LOST`.
pub(crate) fn fence(row: &TaskRow, acting: &Acting, attempt: Option<i64>) -> Result<()> {
    if let Some(attempt) = attempt
        && attempt != i64::from(row.attempt)
    {
        return Err(Error::lease_lost(format!(
            "attempt {attempt} is over: the task is on attempt {}",
            row.attempt
        )));
    }
    if acting.agent_id.is_some() && acting.agent_id == row.lease_lost_agent_id && !acting.holds(row)
    {
        return Err(Error::lease_lost(
            "this agent's lease on the task expired and the task was released",
        ));
    }
    Ok(())
}
