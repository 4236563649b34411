//! The batched completion (`POST /tasks/complete-batch`, beyond the
//! contract): several completions in one request, each exactly what
//! `POST /tasks/:id/complete` would do with it, and each on its own.
//!
//! Every item runs the one-task completion ([`ControlPlane::complete_task`]'s
//! body) in its own write transaction, a savepoint of the writer's group
//! commit: an item that fails (not the holder, a wrong state, a replayed
//! `request_id` with another body) rolls back only itself, and the batch
//! answers it with the error the one-task route would have given. The items
//! run together, so they wait for the writer together and share its commit
//! (and, on PostgreSQL, the combined completion statement,
//! [`super::fast_path::Completions`]). `request_id` is recorded per item under
//! the one-task route's operation, so an item replays as that route does.

use crate::api::batch::MAX_BATCH;
use crate::api::{CompleteBatch, CompleteTask, CompletedItem, ErrorBody};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};

impl ControlPlane {
    /// `POST /tasks/complete-batch`: one answer per item, in the items'
    /// order (module docs). Only a malformed request as a whole (no items,
    /// more than [`MAX_BATCH`]) is refused.
    pub async fn complete_batch(
        &self,
        caller: &Caller,
        request: CompleteBatch,
    ) -> Result<Vec<CompletedItem>> {
        if request.items.is_empty() || request.items.len() as i64 > MAX_BATCH {
            return Err(Error::schema_field("items", "must hold 1 to 256 items"));
        }
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
        let completions = request.items.into_iter().map(|item| async move {
            let complete = CompleteTask {
                request_id: item.request_id,
                output: item.output,
                metrics: item.metrics,
                agent_id: item.agent_id,
                ..Default::default()
            };
            match self
                .complete_task_here(caller, item.task_id, complete)
                .await
            {
                Ok(task) => CompletedItem {
                    task_id: item.task_id,
                    state: Some(task.state),
                    error: None,
                },
                Err(error) => CompletedItem {
                    task_id: item.task_id,
                    state: None,
                    error: Some(error_body(item.task_id, &error)),
                },
            }
        });
        Ok(futures_util::future::join_all(completions).await)
    }
}

/// The error envelope's body for one refused item, as the one-task route
/// would render it; an internal fault is logged here, as the server logs a
/// request's.
fn error_body(task_id: uuid::Uuid, error: &Error) -> ErrorBody {
    if matches!(
        error,
        Error::Internal(_) | Error::Unavailable(_) | Error::StorageFull(_)
    ) {
        tracing::error!(%task_id, %error, "a complete-batch item failed");
    }
    ErrorBody {
        code: error.code(),
        message: error.public_message(),
        recovery_hint: error.recovery_hint(),
        details: error.details(),
    }
}
