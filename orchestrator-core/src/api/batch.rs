//! The batched worker protocol (beyond the contract): create several tasks
//! in one request, claim several tasks for a worker's idle agents in one
//! request, and complete several tasks in one request. The contract's
//! one-task routes stay as they are; these cut the HTTP requests (and, on
//! the server, the statements and writer turns) a task costs when one
//! process produces or runs many of them.

use super::error::ErrorBody;
use super::tasks::{CreateTask, Task, TaskState};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// The most tasks one `claim-batch` may ask for, and the most items one
/// `create-batch` or `complete-batch` may carry: a bound on the work one
/// request holds the writer for.
pub const MAX_BATCH: i64 = 256;

/// `POST /workers/:id/claim-batch`: up to `limit` tasks, each for a
/// different agent of the worker that holds no task.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ClaimBatch {
    /// 1 to 256: the most tasks to claim (one per idle agent of the worker).
    pub limit: i64,
    /// Move the claimed tasks straight to `in_progress` (both state events
    /// are written, as a claim and then a start would), saving the start
    /// request of each.
    #[serde(default)]
    pub start: bool,
    /// Only tasks of this workflow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    /// Merge the context packet into each task's `context` (as on
    /// `POST /tasks/claim`).
    #[serde(default)]
    pub include_context: bool,
    /// Only tasks of this execution environment (as on `POST /tasks/claim`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_environment_id: Option<Uuid>,
    /// 0 to 30 (default 0): wait until at least one task is claimable, as
    /// the long poll of `POST /tasks/claim`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_seconds: Option<i64>,
}

/// One task of a `claim-batch` answer and the agent it was claimed for.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ClaimedTask {
    /// The agent of the worker that now holds the task.
    pub agent_id: Uuid,
    /// The task, `claimed` (or `in_progress` with `start: true`).
    pub task: Task,
}

/// `POST /tasks/complete-batch`: each item is completed (or refused) on its
/// own, as `POST /tasks/:id/complete` would.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CompleteBatch {
    /// 1 to 256 completions.
    pub items: Vec<CompleteBatchItem>,
}

/// One completion of a `complete-batch`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CompleteBatchItem {
    /// The task to complete.
    pub task_id: Uuid,
    /// The holding agent (an agent key or a worker key may leave it out, as
    /// on the one-task route).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
    /// The task's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// Arbitrary metrics kept with the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Value>,
    /// Makes this item safe to send again: a replay answers what the first
    /// completion answered (per item, shared with `POST /tasks/:id/complete`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// What one item of a `complete-batch` came to: `state` when it completed,
/// else `error` (what the one-task route would have answered).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CompletedItem {
    /// The item's task.
    pub task_id: Uuid,
    /// The task's state after the completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<TaskState>,
    /// Why the item was refused; nothing of it was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
}

/// `POST /tasks/create-batch`: each item is created (or refused) on its own,
/// as `POST /tasks` would create it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateBatch {
    /// 1 to 256 tasks, each the body `POST /tasks` takes.
    pub items: Vec<CreateTask>,
}

/// What one item of a `create-batch` came to: the `task` when it was
/// created (or, with a `dedupe_key`, found live), else `error` (what
/// `POST /tasks` would have answered).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CreatedItem {
    /// The new task, or the live task with the item's `dedupe_key`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<Task>,
    /// With `task`: `true` when it is an existing live task with the item's
    /// `dedupe_key` (nothing was written), as `meta.deduplicated` on
    /// `POST /tasks`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deduplicated: Option<bool>,
    /// Why the item was refused; nothing of it was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
}
