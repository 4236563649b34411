//! Bulk actions (admin): one operator action over many tasks or workflows,
//! chosen by ids or by the list filters of the target, run in the
//! background in chunks.

use super::Timestamp;
use super::wire_enum::wire_enum;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Most `ids` one bulk action takes.
pub const MAX_BULK_IDS: usize = 10_000;

wire_enum!(
    /// What a bulk action acts on.
    BulkTarget {
        /// Tasks, chosen by id or by the filters of `GET /tasks`.
        Tasks = "tasks",
        /// Workflows, chosen by id or by the filters of `GET /workflows`.
        Workflows = "workflows",
    }
);

wire_enum!(
    /// The action: tasks `cancel`, `retry`, `reschedule`; workflows
    /// `cancel`, `pause`, `resume`.
    BulkActionKind {
        /// Cancel each task or workflow (a workflow's open tasks with it).
        Cancel = "cancel",
        /// Retry each task, as `POST /tasks/:id/retry` does (tasks only).
        Retry = "retry",
        /// Give each pending task a new `run_at` (tasks only; needs `run_at`).
        Reschedule = "reschedule",
        /// Pause each active workflow (workflows only).
        Pause = "pause",
        /// Resume each paused workflow (workflows only).
        Resume = "resume",
    }
);

wire_enum!(
    /// Where a bulk action stands.
    BulkStatus {
        /// Chunks are still being worked through.
        Running = "running",
        /// Every matched item was handled.
        Completed = "completed",
        /// Stopped before every item was handled.
        Cancelled = "cancelled",
    }
);

/// The list filters of the target; the times are resolved when the action
/// is created.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct BulkFilter {
    /// A task state (`failed`) or a workflow state (`active`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// Only tasks of this workflow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    /// Only tasks or workflows of this workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<Uuid>,
    /// Tasks: the task type; workflows: the playbook's slug or name.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub entity_type: Option<String>,
    /// A substring of the title (tasks) or the name (workflows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<String>,
    /// Only what was created at or after this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_after: Option<Timestamp>,
    /// Only what was created before this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_before: Option<Timestamp>,
}

impl BulkFilter {
    /// Whether no field is set.
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

/// `POST /bulk-actions`: exactly one of `ids` and `filter`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateBulkAction {
    /// Whether the action acts on tasks or on workflows.
    pub target: BulkTarget,
    /// What to do to each one; the action must suit the target (`400`
    /// otherwise).
    pub action: BulkActionKind,
    /// The tasks or workflows to act on, at most [`MAX_BULK_IDS`]; exclusive
    /// with `filter`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ids: Option<Vec<Uuid>>,
    /// Act on what the target's list filters match, fixed when the action is
    /// created; exclusive with `ids`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<BulkFilter>,
    /// Only count what would be matched; change nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    /// `reschedule` only, and required there (`400` when missing, or given
    /// with another action): when the tasks become claimable; a time
    /// already passed makes them claimable at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_at: Option<Timestamp>,
    /// Why, for people; kept on the record (each change itself carries
    /// the reason `bulk action <id>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A bulk action's counts. `matched` counts the whole fixed set; the others
/// only grow while it runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BulkCounts {
    /// How many tasks or workflows the action covers.
    pub matched: u64,
    /// How many it changed.
    pub succeeded: u64,
    /// How many it left alone because the action does not apply to them (a
    /// cancelled task to cancel, a paused workflow to pause).
    pub skipped: u64,
    /// How many it could not change (deleted since the action was created).
    pub failed: u64,
}

/// A bulk action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BulkAction {
    /// The bulk action's id, used in `/bulk-actions/:id` routes.
    pub id: Uuid,
    /// Whether it acts on tasks or on workflows.
    pub target: BulkTarget,
    /// What it does to each one.
    pub action: BulkActionKind,
    /// `running` until every chunk is done, then `completed`; `cancelled` when
    /// stopped.
    pub status: BulkStatus,
    /// True when it only counted what it would match.
    pub dry_run: bool,
    /// How far it got.
    pub counts: BulkCounts,
    /// `reschedule`: the tasks' new `run_at` (absent for other actions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_at: Option<Timestamp>,
    /// Why, as given at creation.
    pub reason: Option<String>,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it stopped (completed or cancelled); null while running.
    pub finished_at: Option<Timestamp>,
}
