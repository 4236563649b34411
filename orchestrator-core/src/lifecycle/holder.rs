//! What a task's holder does with it: start, complete, fail (and the failure
//! the liveness monitor and the timeout sweep apply for it). Each move runs in
//! one transaction that writes the row, its `task.state_changed` event and
//! platform log row, and the workflow's consequences
//! ([`crate::workflows::after_task_change`]).

use crate::api::{CompleteTask, FailTask, Scope, StartTask, Task, TaskError, TaskState, Timestamp};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::idempotency::{Storage, begin_write};
use crate::store::{Tx, on_db};
use crate::tasks::acting::Acting;
use crate::tasks::artifacts::store_artifact;
use crate::tasks::rows::{TaskRow, find_for_update, record_change, save, task_columns};
use crate::tasks::state::{TaskOp, transition};
use serde_json::Value;
use sqlx::types::Json;
use uuid::Uuid;

/// Fails a held task in `tx` (by its holder, the liveness monitor or the
/// timeout sweep): back to pending when `auto_retry` and retries are left.
pub(crate) async fn fail_in(
    tx: &mut Tx,
    caller: &Caller,
    mut row: TaskRow,
    error: &TaskError,
    reason: &str,
) -> Result<TaskRow> {
    let from = row.state()?;
    let retry_left = row.auto_retry && row.retry_count < row.max_retries;
    let to = transition(TaskOp::Fail { retry_left }, from)?;
    let now = Timestamp::now().as_datetime();
    let before = row.clone();
    row.error = Some(Json(serde_json::to_value(error)?));
    if to == TaskState::Pending {
        row.retry_count += 1;
        row.assigned_agent_id = None;
        row.assigned_worker_id = None;
        row.claimed_at = None;
        row.started_at = None;
    }
    row.state = to.as_str().into();
    row.updated_at = now;
    save(tx, &row).await?;
    // The event names the agent that held the task.
    record_change(
        tx,
        caller,
        &before,
        TaskOp::Fail { retry_left },
        (from, to),
        reason,
    )
    .await?;
    crate::workflows::after_task_change(tx, caller, &row, from, to).await?;
    Ok(row)
}

impl ControlPlane {
    /// `POST /tasks/:id/start`: claimed → in_progress by the assignee; a repeat is a no-op.
    pub async fn start_task(&self, caller: &Caller, id: Uuid, request: StartTask) -> Result<Task> {
        let (this, caller) = (self.clone(), caller.clone());
        self.store()
            .on_writer(async move { this.start_task_here(&caller, id, request).await })
            .await
    }

    async fn start_task_here(&self, caller: &Caller, id: Uuid, request: StartTask) -> Result<Task> {
        let acting = Acting::resolve(caller, request.agent_id, request.worker_id)?;
        // The fast path is one statement: no savepoint until it misses.
        let mut tx = self.store().begin_unguarded().await?;
        // Fast path, one statement: the assignee starts a claimed task.
        let (from, to) = (
            TaskState::Claimed,
            transition(TaskOp::Start, TaskState::Claimed)?,
        );
        let now = Timestamp::now().as_datetime();
        let started: Option<TaskRow> = on_db!(&mut tx, c => sqlx::query_as(concat!(
            "UPDATE tasks SET state = $1, started_at = $2, updated_at = $2 \
             WHERE id = $3 AND tenant_id = $4 AND state = $5 \
             AND (assigned_agent_id = $6 OR assigned_worker_id = $7) RETURNING ",
            task_columns!()
        ))
        .bind(to.as_str())
        .bind(now)
        .bind(id)
        .bind(caller.tenant_id)
        .bind(from.as_str())
        .bind(acting.agent_id)
        .bind(acting.worker_id)
        .fetch_optional(c)
        .await)?;
        if let Some(row) = started {
            record_change(&mut tx, caller, &row, TaskOp::Start, (from, to), "started").await?;
            tx.commit().await?;
            return row.to_api();
        }
        // Anything else (a repeat, a wrong state, not the assignee, no such
        // task): read the row and let the rules below answer. The statement
        // above changed nothing, so the savepoint opened now covers it all.
        tx.guard().await?;
        let mut row = find_for_update(&mut tx, caller.tenant_id, id).await?;
        let from = row.state()?;
        let to = transition(TaskOp::Start, from)?;
        if !acting.holds(&row) {
            return Err(Error::forbidden(
                "only the assigned agent or its worker may start this task",
            ));
        }
        if to == from {
            return row.to_api();
        }
        let now = Timestamp::now().as_datetime();
        row.state = to.as_str().into();
        row.started_at = Some(now);
        row.updated_at = now;
        save(&mut tx, &row).await?;
        record_change(&mut tx, caller, &row, TaskOp::Start, (from, to), "started").await?;
        tx.commit().await?;
        row.to_api()
    }

    /// `POST /tasks/:id/complete`. From claimed it passes through
    /// in_progress (both events). `verification.passed == false` gives
    /// `output_pending_assessment`. Replays with the same `request_id`
    /// return the same task.
    pub async fn complete_task(
        &self,
        caller: &Caller,
        id: Uuid,
        request: CompleteTask,
    ) -> Result<Task> {
        let (this, caller) = (self.clone(), caller.clone());
        self.store()
            .on_writer(async move { this.complete_task_here(&caller, id, request).await })
            .await
    }

    async fn complete_task_here(
        &self,
        caller: &Caller,
        id: Uuid,
        request: CompleteTask,
    ) -> Result<Task> {
        let acting = Acting::resolve(caller, request.agent_id, request.worker_id)?;
        // Without artifacts the fast path is one statement: no savepoint
        // until it misses (store::begin_unguarded).
        let guarded = request.artifacts.as_ref().is_some_and(|a| !a.is_empty());
        let mut write = begin_write!(
            self, caller, "tasks.complete", request, Storage::Plain, guarded: guarded
        );
        let tx = &mut write.tx;
        let passed = request
            .verification
            .as_ref()
            .and_then(|v| v.get("passed"))
            .and_then(Value::as_bool)
            .unwrap_or(true);
        // Fast path, one statement: the assignee completes a task in progress.
        let from = TaskState::InProgress;
        let to = transition(TaskOp::Complete { passed }, from)?;
        let now = Timestamp::now().as_datetime();
        let completed: Option<TaskRow> = on_db!(tx, c => sqlx::query_as(concat!(
            "UPDATE tasks SET state = $1, output = $2, metrics = $3, git_info = $4, \
             verification = $5, error = NULL, completed_at = COALESCE($6, completed_at), \
             updated_at = $7 WHERE id = $8 AND tenant_id = $9 AND state = $10 \
             AND (assigned_agent_id = $11 OR assigned_worker_id = $12) RETURNING ",
            task_columns!()
        ))
        .bind(to.as_str())
        .bind(Json(request.output.clone().unwrap_or(Value::Null)))
        .bind(request.metrics.clone().map(Json))
        .bind(request.git_info.clone().map(Json))
        .bind(request.verification.clone().map(Json))
        .bind((to == TaskState::Completed).then_some(now))
        .bind(now)
        .bind(id)
        .bind(caller.tenant_id)
        .bind(from.as_str())
        .bind(acting.agent_id)
        .bind(acting.worker_id)
        .fetch_optional(c)
        .await)?;
        if let Some(row) = completed {
            return self
                .completed(write, caller, row, request, passed, (from, to))
                .await;
        }
        // Anything else (from claimed, a wrong state, not the assignee, no
        // such task): read the row and let the rules below answer, under a
        // savepoint (the statement above changed nothing).
        tx.guard().await?;
        let mut row = find_for_update(tx, caller.tenant_id, id).await?;
        let from = row.state()?;
        let to = transition(TaskOp::Complete { passed }, from)?;
        if !acting.holds(&row) {
            return Err(Error::forbidden(
                "only the assigned agent or its worker may complete this task",
            ));
        }
        let now = Timestamp::now().as_datetime();
        if from == TaskState::Claimed {
            row.state = TaskState::InProgress.as_str().into();
            row.started_at = Some(now);
            record_change(
                tx,
                caller,
                &row,
                TaskOp::Start,
                (from, TaskState::InProgress),
                "started",
            )
            .await?;
        }
        row.state = to.as_str().into();
        row.output = Some(Json(request.output.clone().unwrap_or(Value::Null)));
        row.metrics = request.metrics.clone().map(Json);
        row.git_info = request.git_info.clone().map(Json);
        row.verification = request.verification.clone().map(Json);
        row.error = None;
        if to == TaskState::Completed {
            row.completed_at = Some(now);
        }
        row.updated_at = now;
        save(tx, &row).await?;
        let via = if from == TaskState::Claimed {
            TaskState::InProgress
        } else {
            from
        };
        self.completed(write, caller, row, request, passed, (via, to))
            .await
    }

    /// The rest of a completion once `row` is written: its event and log,
    /// the artifacts, the workflow's consequences, the commit.
    async fn completed(
        &self,
        mut write: crate::idempotency::IdempotentWrite,
        caller: &Caller,
        row: TaskRow,
        request: CompleteTask,
        passed: bool,
        (via, to): (TaskState, TaskState),
    ) -> Result<Task> {
        let tx = &mut write.tx;
        record_change(
            tx,
            caller,
            &row,
            TaskOp::Complete { passed },
            (via, to),
            "completed",
        )
        .await?;
        for artifact in request.artifacts.iter().flatten() {
            store_artifact(tx, caller, &row, artifact).await?;
        }
        crate::workflows::after_task_change(tx, caller, &row, via, to).await?;
        let task = row.to_api()?;
        write.finish(task).await
    }

    /// `POST /tasks/:id/fail`: by the assignee (or an admin). Goes back to
    /// pending with `retry_count + 1` when `auto_retry` and retries are left.
    pub async fn fail_task(&self, caller: &Caller, id: Uuid, request: FailTask) -> Result<Task> {
        let (this, caller) = (self.clone(), caller.clone());
        self.store()
            .on_writer(async move { this.fail_task_here(&caller, id, request).await })
            .await
    }

    async fn fail_task_here(&self, caller: &Caller, id: Uuid, request: FailTask) -> Result<Task> {
        let acting = Acting::resolve(caller, request.agent_id, request.worker_id)?;
        let mut write = begin_write!(self, caller, "tasks.fail", request, Storage::Plain);
        let tx = &mut write.tx;
        let row = find_for_update(tx, caller.tenant_id, id).await?;
        if !acting.holds(&row) && !caller.scope.satisfies(Scope::Admin) {
            return Err(Error::forbidden(
                "only the assigned agent, its worker or an admin may fail this task",
            ));
        }
        let error = request.error.clone().unwrap_or_default();
        let row = fail_in(tx, caller, row, &error, "failed").await?;
        let task = row.to_api()?;
        write.finish(task).await
    }
}
