//! The batched completion (`POST /tasks/complete-batch`, beyond the
//! contract): several completions in one request, each exactly what
//! `POST /tasks/:id/complete` would do with it, and each on its own.
//!
//! The items without a `request_id` take the one-task route's fast path
//! together ([`crate::store::Store::combined_together`]): one completion
//! statement for all of them ([`super::fast_path::Completions`]; on
//! PostgreSQL shared with every other completion waiting for the writer),
//! then each one's event, log row and workflow consequences, in one turn
//! of the writer's group commit. An item whose row that statement did not
//! change (not the holder, a wrong state, a repeat), and every item with a
//! `request_id`, then runs the one-task completion
//! ([`ControlPlane::complete_task`]'s body) in its own write transaction, a
//! savepoint of the group commit: one that fails rolls back only itself,
//! and the batch answers it with the error the one-task route would have
//! given. Those items run together too, so they wait for the writer
//! together and share its commit. `request_id` is recorded per item under
//! the one-task route's operation, so an item replays as that route does.
//!
//! The fast path's turn fails whole only on a database error (its
//! follow-ups write rows, they refuse nothing); its items are then answered
//! with that error (retryable: nothing of them was written), as a combined
//! statement's requests are.

use super::fast_path::Completions;
use super::holder::completion_item;
use crate::api::{CompleteBatch, CompleteTask, CompletedItem, Task};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use uuid::Uuid;

impl ControlPlane {
    /// `POST /tasks/complete-batch`: one answer per item, in the items'
    /// order (module docs). Only a malformed request as a whole (no items,
    /// more than [`crate::api::batch::MAX_BATCH`]) is refused.
    pub async fn complete_batch(
        &self,
        caller: &Caller,
        request: CompleteBatch,
    ) -> Result<Vec<CompletedItem>> {
        Error::check_batch_items(request.items.len())?;
        let (this, caller) = (self.clone(), caller.clone());
        self.store()
            .on_writer(async move { this.complete_batch_here(&caller, request).await })
            .await
    }

    async fn complete_batch_here(
        &self,
        caller: &Caller,
        request: CompleteBatch,
    ) -> Result<Vec<CompletedItem>> {
        let requests: Vec<(Uuid, CompleteTask)> = request
            .items
            .into_iter()
            .map(|item| {
                let complete = CompleteTask {
                    request_id: item.request_id,
                    output: item.output,
                    metrics: item.metrics,
                    agent_id: item.agent_id,
                    ..Default::default()
                };
                (item.task_id, complete)
            })
            .collect();
        // The items with nothing to record under a key take the fast path
        // together (module docs); `None` is an item still to run.
        let mut answers: Vec<Option<CompletedItem>> = vec![None; requests.len()];
        let mut together = Vec::new();
        let mut served = Vec::new();
        for (i, (task_id, complete)) in requests.iter().enumerate() {
            if complete.request_id.is_some() {
                continue;
            }
            // An item the fast path cannot take (a wrong `agent_id`) gets
            // its answer from the one-task path below.
            if let Ok((completion, passed)) = completion_item(caller, *task_id, complete) {
                let post = self.completion_post(caller, passed, completion.to);
                together.push((completion, post));
                served.push(i);
            }
        }
        if together.len() > 1 {
            let done = self
                .store()
                .combined_together::<Completions>(together)
                .await;
            for (i, answer) in served.into_iter().zip(done) {
                let task_id = requests[i].0;
                answers[i] = match answer {
                    Ok(Some(task)) => Some(completed(task_id, &task)),
                    // The statement did not change the row: the one-task
                    // path answers (a repeat, a wrong state, not the holder).
                    Ok(None) => None,
                    Err(error) => Some(refused(task_id, &error)),
                };
            }
        }
        let rest = requests
            .into_iter()
            .zip(&answers)
            .filter(|(_, answer)| answer.is_none())
            .map(|((task_id, complete), _)| async move {
                match self.complete_task_here(caller, task_id, complete).await {
                    Ok(task) => completed(task_id, &task),
                    Err(error) => refused(task_id, &error),
                }
            });
        let mut rest = futures_util::future::join_all(rest).await.into_iter();
        answers
            .into_iter()
            .map(|answer| answer.or_else(|| rest.next()))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| Error::internal("a complete-batch item was left without an answer"))
    }
}

/// The answer for an item that completed.
fn completed(task_id: Uuid, task: &Task) -> CompletedItem {
    CompletedItem {
        task_id,
        state: Some(task.state),
        error: None,
    }
}

/// The answer for an item that was refused.
fn refused(task_id: Uuid, error: &Error) -> CompletedItem {
    CompletedItem {
        task_id,
        state: None,
        error: Some(error.item_body(&format_args!("task_id={task_id}"))),
    }
}
