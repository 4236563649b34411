//! The operations packets the dashboard reads: the workflow rail
//! (`GET /operations/workflows/rail`) and one workflow's workspace packet
//! (`GET /operations/workflows/:id/workspace`, which carries the board).
//! Every field is documented here, as it appears on the wire.

use super::{Activation, Board, Event, Task, WorkItem, WorkflowDetail, WorkflowListItem};
use crate::api::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// `GET /operations/workflows/rail` query. Every filter applies before
/// paging, so `meta.total` and `meta.pages` count exactly the rail shown.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RailQuery {
    /// `live` (pending, in progress, paused; the default), `recent` (ended
    /// in the last 24 hours) or `history` (ended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Only workflows with a task escalated, failed or awaiting assessment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_action_only: Option<bool>,
    /// `all` (the default), `planned` or `ongoing`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<String>,
    /// Case-insensitive substring of the workflow's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<String>,
    /// Only this workflow (a rail of at most one item).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    /// Page number, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// Items per page (default 20, at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_page: Option<u32>,
}

/// One rail entry: a workflow list item plus what the rail adds.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RailItem {
    /// The workflow record with `workspace_name`, `playbook_name`,
    /// `task_counts` (every task state, 0 where none) and
    /// `work_item_summary`, flattened into the entry.
    #[serde(flatten)]
    pub item: WorkflowListItem,
    /// Whether any of its tasks is escalated, failed or awaiting assessment.
    pub needs_action: bool,
    /// The rail mode that listed it: `live`, `recent` or `history`.
    pub mode: String,
}

/// `GET /operations/workflows/:id/workspace` query.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct WorkspacePacketQuery {
    /// Selects a work item (`selected.work_item`) and narrows the live
    /// console to its events; 404 when it is not in the workflow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_item_id: Option<Uuid>,
    /// Selects a task (`selected.task`); 404 when it is not in the workflow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<Uuid>,
    /// Only this section: `live_console`, `briefs`, `history` or
    /// `deliverables` (the other three are then null).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab_scope: Option<String>,
    /// Event id: the live console starts after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_console_after: Option<i64>,
    /// Most events in the live console (default 50, at most 500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_console_limit: Option<i64>,
    /// Handoffs already seen (a previous `briefs.next_after`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub briefs_after: Option<i64>,
    /// Activations already seen (a previous `history.next_after`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_after: Option<i64>,
    /// Deliverables already seen (a previous `deliverables.next_after`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deliverables_after: Option<i64>,
}

/// `GET /operations/workflows/:id/workspace`: one workflow, all a page
/// about it needs, in one read.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkspacePacket {
    /// The workflow detail: the record with its tasks, work items,
    /// activations and stages.
    pub workflow: WorkflowDetail,
    /// The board: columns (`inbox`, `active`, `blocked`, `done`) with their
    /// work items, and the stages.
    pub board: Board,
    /// The work item and task chosen by `work_item_id` / `task_id`.
    pub selected: Selected,
    /// The workflow's events after `live_console_after`; null when
    /// `tab_scope` names another section.
    pub live_console: Option<LiveConsole>,
    /// Handoffs of its tasks after `briefs_after`; null when `tab_scope`
    /// names another section.
    pub briefs: Option<Briefs>,
    /// Its activations after `history_after`; null when `tab_scope` names
    /// another section.
    pub history: Option<History>,
    /// Its completed tasks' outputs after `deliverables_after`; null when
    /// `tab_scope` names another section.
    pub deliverables: Option<Deliverables>,
}

/// The workspace packet's selection.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Selected {
    /// The work item named by `work_item_id`, or null.
    pub work_item: Option<WorkItem>,
    /// The task named by `task_id`, or null.
    pub task: Option<Task>,
}

/// The live console section: a page of the workflow's event feed.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LiveConsole {
    /// Events oldest first (narrowed to `work_item_id` when given).
    pub events: Vec<Event>,
    /// The last event id on the page (the `live_console_after` given, or
    /// `"0"`, on an empty page): pass it back as `live_console_after`.
    pub next_after: Option<String>,
    /// Whether more events follow this page.
    pub has_more: bool,
}

/// The briefs section: handoffs of the workflow's tasks, oldest first.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Briefs {
    /// The handoffs after position `briefs_after`.
    pub handoffs: Vec<Brief>,
    /// How many handoffs there are in all: pass it back as `briefs_after`
    /// to receive only newer ones.
    pub next_after: i64,
    /// How many handoffs the workflow's tasks have.
    pub total: i64,
}

/// One handoff in the briefs section.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Brief {
    /// The task that wrote it.
    pub task_id: Uuid,
    /// Its number among that task's handoffs, from 1.
    pub sequence: i32,
    /// The handoff as the agent submitted it (`summary`, `changes`,
    /// `decisions`, `remaining_items`, `blockers`, `artifacts`, ...).
    pub handoff: Value,
}

/// The history section: the workflow's activations, oldest first.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct History {
    /// The activations after position `history_after`.
    pub activations: Vec<Activation>,
    /// How many activations there are in all: pass it back as
    /// `history_after`.
    pub next_after: i64,
    /// How many activations the workflow has.
    pub total: i64,
}

/// The deliverables section: completed tasks with their outputs, by
/// completion time.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Deliverables {
    /// The deliverables after position `deliverables_after`.
    pub tasks: Vec<Deliverable>,
    /// How many deliverables there are in all: pass it back as
    /// `deliverables_after`.
    pub next_after: i64,
    /// How many of the workflow's tasks are completed.
    pub total: i64,
}

/// One completed task's output.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Deliverable {
    /// The task.
    pub task_id: Uuid,
    /// Its title.
    pub title: String,
    /// The stage it ran in, if any.
    pub stage_name: Option<String>,
    /// The work item it served, if any.
    pub work_item_id: Option<Uuid>,
    /// What it produced.
    pub output: Option<Value>,
    /// When it completed.
    pub completed_at: Option<Timestamp>,
}
