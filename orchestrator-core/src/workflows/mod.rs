//! Workflows: launch, reads, redrives, pause/resume/cancel, the derived
//! workflow state, stages, work items, activations and the event feed.
//! One file per part: `rows`, [`state`], `launch`,
//! `read`, `actions`, `progress`, `settle`, `context`, `activations`,
//! `work_items`, `feed`, [`operations`].
//!
//! The derived state is computed in the transaction of the task change that
//! causes it (`after_task_change`): `pending → in_progress` when any task is
//! claimed; `completed` (lifecycle `planned` only) when the workflow has at
//! least one task, every task is completed or cancelled and every work item is
//! done; `failed` when a task fails with no retry left and nothing else is
//! open. `ongoing` workflows never complete by themselves.
//!
//! Activations dispatch without a poller: enqueuing one when none is
//! processing starts it in the same transaction (it becomes `processing` and
//! creates its orchestrator task); when that task completes the activation
//! completes and the next queued one starts; when it fails (no retry left)
//! the activation returns to `queued` with the error and is started again,
//! up to [`MAX_ACTIVATION_ATTEMPTS`] times, after which it is `failed`.
//! A work item moves to `done` when its last open task completes.

mod actions;
mod activations;
mod context;
mod feed;
mod launch;
pub mod operations;
mod progress;
mod read;
mod refs;
pub(crate) mod rows;
mod settle;
pub mod state;
mod work_items;

pub(crate) use actions::apply_workflow_op;
pub(crate) use launch::launch_in;
pub(crate) use progress::after_task_change;
pub use state::{WorkflowOp, workflow_transition};

/// How often an activation is retried before it is `failed`.
pub const MAX_ACTIVATION_ATTEMPTS: i32 = 3;
