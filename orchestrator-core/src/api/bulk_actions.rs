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
        Tasks = "tasks",
        Workflows = "workflows",
    }
);

wire_enum!(
    /// The action: tasks `cancel`, `retry`, `reschedule`; workflows
    /// `cancel`, `pause`, `resume`.
    BulkActionKind {
        Cancel = "cancel",
        Retry = "retry",
        Reschedule = "reschedule",
        Pause = "pause",
        Resume = "resume",
    }
);

wire_enum!(
    /// Where a bulk action stands.
    BulkStatus {
        Running = "running",
        Completed = "completed",
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<Uuid>,
    /// Tasks: the task type; workflows: the playbook's slug or name.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub entity_type: Option<String>,
    /// A substring of the title (tasks) or the name (workflows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_after: Option<Timestamp>,
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
    pub target: BulkTarget,
    pub action: BulkActionKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ids: Option<Vec<Uuid>>,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A bulk action's counts. `matched` counts the whole fixed set; the others
/// only grow while it runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BulkCounts {
    pub matched: u64,
    pub succeeded: u64,
    pub skipped: u64,
    pub failed: u64,
}

/// A bulk action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BulkAction {
    pub id: Uuid,
    pub target: BulkTarget,
    pub action: BulkActionKind,
    pub status: BulkStatus,
    pub dry_run: bool,
    pub counts: BulkCounts,
    /// `reschedule`: the tasks' new `run_at` (absent for other actions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_at: Option<Timestamp>,
    pub reason: Option<String>,
    pub created_at: Timestamp,
    pub finished_at: Option<Timestamp>,
}
