//! The batched create (`POST /tasks/create-batch`, beyond the contract):
//! several tasks in one request, each exactly what `POST /tasks` would do
//! with it, and each on its own.
//!
//! Why: a producer that enqueues thousands of tasks pays an HTTP request
//! and a writer turn for each on the one-task route; on SQLite the creates
//! were half the time of a batched lifecycle (`orch bench lifecycle
//! --batch`, bench/HISTORY.md item 38).
//!
//! How: the items that name nothing to look up or record (a plain create:
//! no references, no `request_id`, no run control, no flow-limit key) take
//! the one-task route's shared insert together
//! ([`crate::store::Store::combined_together`] of [`Creates`]): on SQLite one
//! turn of the writer runs their inserts and then each one's event; on
//! PostgreSQL each joins the queue of plain creates waiting for the writer
//! (one `INSERT ... SELECT FROM unnest(...)` for all of them). Every other
//! item, and an item whose body breaks a rule, runs the one-task create in
//! its own write transaction, a savepoint of the group commit: one that
//! fails rolls back only itself and is answered with the error `POST /tasks`
//! would have given. `request_id` and `dedupe_key` work per item as on the
//! one-task route (the same recorded operation, the same unique index).
//!
//! The shared turn fails whole only on a database error; its items are
//! then answered with that error (retryable: nothing of them was written).

use super::create::{created_post, validate_create};
use super::insert::{Creates, Fields};
use crate::api::{CreateBatch, CreateTask, CreatedItem, Task};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};

impl ControlPlane {
    /// `POST /tasks/create-batch`: one answer per item, in the items' order
    /// (module docs). Only a malformed request as a whole (no items, more
    /// than [`crate::api::batch::MAX_BATCH`]) is refused.
    pub async fn create_batch(
        &self,
        caller: &Caller,
        request: CreateBatch,
    ) -> Result<Vec<CreatedItem>> {
        Error::check_batch_items(request.items.len())?;
        let (this, writer_caller) = (self.clone(), caller.clone());
        let answers = self
            .store()
            .on_writer(async move { this.create_batch_here(&writer_caller, request).await })
            .await?;
        for answer in &answers {
            if let Some(task) = &answer.task {
                self.after_create(task, answer.deduplicated == Some(true));
            }
        }
        Ok(answers)
    }

    async fn create_batch_here(
        &self,
        caller: &Caller,
        request: CreateBatch,
    ) -> Result<Vec<CreatedItem>> {
        let items = request.items;
        let now = self.now().as_datetime();
        // `None` is an item still to run.
        let mut answers: Vec<Option<CreatedItem>> = vec![None; items.len()];
        let mut together = Vec::new();
        let mut served = Vec::new();
        for (i, item) in items.iter().enumerate() {
            // A flow-limit key needs its rows made (and a rate key its limit
            // read): the one-task path does both.
            let keyed = item.concurrency_key.is_some() || item.rate_limit_key.is_some();
            if Fields::plain(item) && !keyed && validate_create(item).is_ok() {
                let fields = Fields::of(caller.tenant_id, item, now);
                together.push((fields, created_post(caller)));
                served.push(i);
            }
        }
        if together.len() > 1 {
            let done = self.store().combined_together::<Creates>(together).await;
            for (i, answer) in served.into_iter().zip(done) {
                answers[i] = Some(match answer {
                    Ok(Some(task)) => created(task, false),
                    // An INSERT of a fresh id always adds its row; should
                    // it not, the one-task path below answers the item.
                    Ok(None) => continue,
                    Err(error) => refused(i, &error),
                });
            }
        }
        let rest = items
            .into_iter()
            .enumerate()
            .zip(&answers)
            .filter(|(_, answer)| answer.is_none())
            .map(|((i, item), _)| self.create_item(caller, i, item));
        let mut rest = futures_util::future::join_all(rest).await.into_iter();
        answers
            .into_iter()
            .map(|answer| answer.or_else(|| rest.next()))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| Error::internal("a create-batch item was left without an answer"))
    }

    /// One item on the one-task create's path.
    async fn create_item(&self, caller: &Caller, index: usize, item: CreateTask) -> CreatedItem {
        match self.create_task_here(caller, item).await {
            Ok((task, deduplicated)) => created(task, deduplicated),
            Err(error) => refused(index, &error),
        }
    }
}

/// The answer for an item that was created (or found by its dedupe key).
fn created(task: Task, deduplicated: bool) -> CreatedItem {
    CreatedItem {
        task: Some(task),
        deduplicated: Some(deduplicated),
        error: None,
    }
}

/// The answer for an item that was refused.
fn refused(index: usize, error: &Error) -> CreatedItem {
    CreatedItem {
        task: None,
        deduplicated: None,
        error: Some(error.item_body(&format_args!("index={index}"))),
    }
}
