//! What a task's holder does with it: start, complete, fail (and the failure
//! the liveness monitor and the timeout sweep apply for it). Each move runs in
//! one transaction that writes the row, its `task.state_changed` event and
//! platform log row, and the workflow's consequences
//! ([`crate::workflows::after_task_change`]).

use crate::api::{
    CompleteTask, FailTask, Scope, StartTask, Task, TaskArtifact, TaskError, TaskState,
};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::idempotency::{IdempotentWrite, Storage, begin_write};
use crate::lifecycle::failure::{Cause, Failure, fail_in, fence};
use crate::lifecycle::fast_path::{Completion, Completions, Start, Starts};
use crate::store::StoredJson;
use crate::store::{Combine, Combined, Post, Tx};
use crate::tasks::acting::Acting;
use crate::tasks::artifacts::store_artifact;
use crate::tasks::rows::{TaskRow, find_for_update, record_change, save};
use crate::tasks::state::{TaskOp, transition};
use futures_util::future::BoxFuture;
use serde_json::Value;
use uuid::Uuid;

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
        if request.attempt.is_some() {
            // Fenced (run control §4): read and check the row first.
            let mut tx = self.store().begin().await?;
            let row = find_for_update(&mut tx, caller.tenant_id, id).await?;
            return self
                .start_row(tx, caller, acting, row, request.attempt)
                .await;
        }
        // Fast path, one statement shared with the other starts waiting for
        // the writer (store::combine): the assignee starts a claimed task.
        let start = Start {
            id,
            tenant_id: caller.tenant_id,
            acting,
        };
        let post: Post<TaskRow, Task> = {
            let caller = caller.clone();
            Box::new(
                move |tx: &mut Tx, row: TaskRow| -> BoxFuture<'_, Result<Task>> {
                    Box::pin(async move {
                        let moved = (TaskState::Claimed, TaskState::InProgress);
                        record_change(tx, &caller, &row, TaskOp::Start, moved, "started").await?;
                        row.to_api()
                    })
                },
            )
        };
        let mut tx = match self.store().combined::<Starts>(start, post).await? {
            Combined::Done(task) => return Ok(task),
            Combined::Missed(tx) => tx,
        };
        // Anything else (a repeat, a wrong state, not the assignee, no such
        // task): read the row and let the rules below answer, under a
        // savepoint (the statement above changed nothing).
        let row = find_for_update(&mut tx, caller.tenant_id, id).await?;
        self.start_row(tx, caller, acting, row, None).await
    }

    /// The ordinary start of `row`, read for update in `tx`.
    async fn start_row(
        &self,
        mut tx: Tx,
        caller: &Caller,
        acting: Acting,
        mut row: TaskRow,
        attempt: Option<i64>,
    ) -> Result<Task> {
        fence(&row, &acting, attempt)?;
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
        let now = self.now().as_datetime();
        row.state = to.as_str().into();
        row.started_at = Some(now);
        row.last_heartbeat_at = Some(now);
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

    pub(super) async fn complete_task_here(
        &self,
        caller: &Caller,
        id: Uuid,
        request: CompleteTask,
    ) -> Result<Task> {
        // Fast path, one statement: the assignee completes a task in progress.
        let (completion, passed) = completion_item(caller, id, &request)?;
        let (acting, from, to) = (completion.acting, TaskState::InProgress, completion.to);
        let no_artifacts = request.artifacts.as_ref().is_none_or(Vec::is_empty);
        let mut write = if request.attempt.is_some() {
            // Fenced (run control §4): the ordinary path reads the row first.
            begin_write!(self, caller, "tasks.complete", request, Storage::Plain)
        } else if no_artifacts && request.request_id.is_none() {
            // Nothing to record under a key and no artifacts: the statement
            // is shared with the other completions waiting for the writer
            // (store::combine).
            let post = self.completion_post(caller, passed, to);
            match self
                .store()
                .combined::<Completions>(completion, post)
                .await?
            {
                Combined::Done(task) => return Ok(task),
                Combined::Missed(tx) => IdempotentWrite::plain(self, tx),
            }
        } else {
            let mut write = begin_write!(self, caller, "tasks.complete", request, Storage::Plain);
            let tx = &mut write.tx;
            let row = Completions::run(tx, std::slice::from_ref(&completion))
                .await?
                .pop();
            if let Some(row) = row {
                let artifacts = request.artifacts.as_deref();
                let task = self
                    .completed(tx, caller, &row, artifacts, passed, (from, to))
                    .await?;
                return write.finish(task).await;
            }
            write
        };
        // Anything else (from claimed, a wrong state, not the assignee, no
        // such task): read the row and let the rules below answer, under a
        // savepoint (the statement above changed nothing).
        let tx = &mut write.tx;
        let mut row = find_for_update(tx, caller.tenant_id, id).await?;
        fence(&row, &acting, request.attempt)?;
        let from = row.state()?;
        let to = transition(TaskOp::Complete { passed }, from)?;
        if !acting.holds(&row) {
            return Err(Error::forbidden(
                "only the assigned agent or its worker may complete this task",
            ));
        }
        let now = self.now().as_datetime();
        if row.cancel_requested {
            // Cooperative cancellation (§4): the holder stopped; its result
            // is kept, the task ends cancelled.
            row.output = Some(StoredJson(request.output.clone().unwrap_or(Value::Null)));
            let error = TaskError {
                category: Some("cancelled".into()),
                message: Some("cancellation was requested".into()),
                recoverable: Some(false),
            };
            let failure = Failure {
                cause: Cause::Fail,
                error: &error,
                reason: "cancel requested",
                retry_after: None,
                now,
            };
            let row = fail_in(tx, caller, row, failure).await?;
            let task = row.to_api()?;
            return write.finish(task).await;
        }
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
        row.output = Some(StoredJson(request.output.clone().unwrap_or(Value::Null)));
        row.metrics = request.metrics.clone().map(StoredJson);
        row.git_info = request.git_info.clone().map(StoredJson);
        row.verification = request.verification.clone().map(StoredJson);
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
        let artifacts = request.artifacts.as_deref();
        let task = self
            .completed(tx, caller, &row, artifacts, passed, (via, to))
            .await?;
        write.finish(task).await
    }

    /// What a completion served by the fast-path statement
    /// ([`Completions`]) does next in the statement's turn: the rest of the
    /// completion ([`Self::completed`]), whose task is the answer.
    pub(super) fn completion_post(
        &self,
        caller: &Caller,
        passed: bool,
        to: TaskState,
    ) -> Post<TaskRow, Task> {
        let (this, caller) = (self.clone(), caller.clone());
        let moved = (TaskState::InProgress, to);
        Box::new(
            move |tx: &mut Tx, row: TaskRow| -> BoxFuture<'_, Result<Task>> {
                Box::pin(
                    async move { this.completed(tx, &caller, &row, None, passed, moved).await },
                )
            },
        )
    }

    /// The rest of a completion once `row` is written: its event and log,
    /// the artifacts, the workflow's consequences; the task to answer.
    async fn completed(
        &self,
        tx: &mut Tx,
        caller: &Caller,
        row: &TaskRow,
        artifacts: Option<&[TaskArtifact]>,
        passed: bool,
        (via, to): (TaskState, TaskState),
    ) -> Result<Task> {
        record_change(
            tx,
            caller,
            row,
            TaskOp::Complete { passed },
            (via, to),
            "completed",
        )
        .await?;
        for artifact in artifacts.into_iter().flatten() {
            store_artifact(tx, caller, row, artifact).await?;
        }
        crate::workflows::after_task_change(tx, caller, row, via, to).await?;
        row.to_api()
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
        fence(&row, &acting, request.attempt)?;
        if !acting.holds(&row) && !caller.scope.satisfies(Scope::Admin) {
            return Err(Error::forbidden(
                "only the assigned agent, its worker or an admin may fail this task",
            ));
        }
        if let Some(seconds) = request.retry_after_seconds
            && !(0..=86_400).contains(&seconds)
        {
            return Err(Error::schema_field(
                "retry_after_seconds",
                "must be 0 to 86400",
            ));
        }
        let error = request.error.clone().unwrap_or_default();
        let failure = Failure {
            cause: Cause::Fail,
            error: &error,
            reason: "failed",
            retry_after: request.retry_after_seconds,
            now: self.now().as_datetime(),
        };
        let row = fail_in(tx, caller, row, failure).await?;
        let task = write.finish(row.to_api()?).await?;
        if let Some(run_at) = row.run_at {
            // The retry is due later: the run-control job wakes claimers then.
            self.wake_background(run_at);
        }
        Ok(task)
    }
}

/// A completion's item for the fast-path statement ([`Completions`]): the
/// assignee completes its task in progress, to `completed`, or to
/// `output_pending_assessment` when `verification.passed` is false (which
/// the second value says).
pub(super) fn completion_item(
    caller: &Caller,
    id: Uuid,
    request: &CompleteTask,
) -> Result<(Completion, bool)> {
    let acting = Acting::resolve(caller, request.agent_id, request.worker_id)?;
    let passed = request
        .verification
        .as_ref()
        .and_then(|v| v.get("passed"))
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let to = transition(TaskOp::Complete { passed }, TaskState::InProgress)?;
    let completion = Completion {
        id,
        tenant_id: caller.tenant_id,
        acting,
        to,
        output: request.output.clone().unwrap_or(Value::Null),
        metrics: request.metrics.clone(),
        git_info: request.git_info.clone(),
        verification: request.verification.clone(),
    };
    Ok((completion, passed))
}
