//! Workflows, their stages, work items and activations.

use super::{Event, Task, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use uuid::Uuid;

/// Workflow states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum WorkflowState {
    /// Launched; none of its tasks was claimed yet.
    Pending,
    /// Running: its stages and tasks are being worked.
    InProgress,
    /// Paused by an operator: no new work is claimed until resumed.
    Paused,
    /// Finished its work (terminal).
    Completed,
    /// Stopped by a failure (terminal).
    Failed,
    /// Cancelled by an operator (terminal).
    Cancelled,
}

impl WorkflowState {
    /// Every state, in lifecycle order.
    pub const ALL: [WorkflowState; 6] = [
        Self::Pending,
        Self::InProgress,
        Self::Paused,
        Self::Completed,
        Self::Failed,
        Self::Cancelled,
    ];

    /// The wire name (`in_progress`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::InProgress => "in_progress",
            Self::Paused => "paused",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// The state named `text`, or `None` for a name that is not one.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// Completed, failed or cancelled: nothing more happens to the workflow.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
}

/// How much live detail of a run clients show; recorded for them, the server
/// does not act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum LiveVisibilityMode {
    /// The usual detail (the default).
    #[default]
    Standard,
    /// More detail.
    Enhanced,
}

/// What a redrive carries forward from the workflow it runs again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum InheritancePolicy {
    /// Carry forward the prior run's parameters, input packet and settings.
    #[default]
    InheritAll,
    /// Start fresh from the redrive body alone.
    InheritNone,
}

/// Limits recorded on a workflow for its agents to keep to.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// The most tokens the run should use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<f64>,
    /// The most the run should cost, in US dollars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_cap_usd: Option<f64>,
    /// The longest the run should take, in minutes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_duration_minutes: Option<f64>,
}

/// A file given with a workflow's input (kept inline on the workflow).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct InputFile {
    /// The file's name.
    pub file_name: String,
    /// The bytes, standard base64.
    pub content_base64: String,
    /// The file's media type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
}

/// What a workflow starts from.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct InitialInputPacket {
    /// The brief, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Inputs as data (any JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_inputs: Option<Value>,
    /// Files given with the input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<InputFile>>,
}

/// `POST /workflows`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateWorkflow {
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The playbook to launch (a family or revision id); its current revision
    /// is stored on the workflow. An archived playbook is `409`.
    pub playbook_id: Uuid,
    /// The workspace the workflow runs in.
    pub workspace_id: Uuid,
    /// The workflow's name.
    pub name: String,
    /// A note from whoever launched it, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator_note: Option<String>,
    /// The playbook's parameters for this run, name to value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<BTreeMap<String, String>>,
    /// Free-form caller metadata kept on the workflow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// Limits recorded for the run (tokens, cost, duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// How much live detail clients show of the run (default `standard`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_visibility_mode: Option<LiveVisibilityMode>,
    /// What the run starts from: a summary, structured inputs and files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_input_packet: Option<InitialInputPacket>,
    /// Run control §5 (1 to 200 characters): while a workflow of the tenant
    /// with this key is not in a terminal state, the launch answers it (200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedupe_key: Option<String>,
}

/// The workflow record.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Workflow {
    /// The workflow's id, used in `/workflows/:id` routes.
    pub id: Uuid,
    /// The workspace the workflow runs in.
    pub workspace_id: Uuid,
    /// The playbook revision the workflow was launched with.
    pub playbook_id: Uuid,
    /// The workflow's name.
    pub name: String,
    /// Where the workflow stands.
    pub state: WorkflowState,
    /// `planned` or `ongoing`.
    pub lifecycle: String,
    /// A note from whoever launched it, if any.
    pub operator_note: Option<String>,
    /// The playbook's parameters for this run, name to value.
    pub parameters: BTreeMap<String, String>,
    /// The token budget recorded at launch, if any.
    pub token_budget: Option<f64>,
    /// The cost cap recorded at launch, in US dollars, if any.
    pub cost_cap_usd: Option<f64>,
    /// The longest run recorded at launch, in minutes, if any.
    pub max_duration_minutes: Option<f64>,
    /// Free-form metadata (a redrive adds `redrive`: its reason and origin).
    pub metadata: Value,
    /// How much live detail clients show of the run.
    pub live_visibility_mode: LiveVisibilityMode,
    /// What the run started from, if anything was given.
    pub initial_input_packet: Option<InitialInputPacket>,
    /// Shared by a workflow and all its redrives (the first attempt's id).
    pub lineage_id: Uuid,
    /// Which attempt of the lineage this is, from 1.
    pub attempt_number: i64,
    /// `initial` or `redrive`.
    pub attempt_kind: String,
    /// The workflow this one redrives; null for an initial attempt.
    pub redrive_of: Option<Uuid>,
    /// When the workflow reached a terminal state; null before.
    pub completed_at: Option<Timestamp>,
    /// When the workflow was launched.
    pub created_at: Timestamp,
    /// When the workflow last changed.
    pub updated_at: Timestamp,
}

/// Work item counts of a workflow list item.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkItemSummary {
    /// Every work item of the workflow.
    pub total_work_items: i64,
    /// Work items not `done`.
    pub open_work_item_count: i64,
    /// Work items in the `blocked` column.
    pub blocked_work_item_count: i64,
    /// Work items in the `done` column.
    pub completed_work_item_count: i64,
    /// Stages with status `active`.
    pub active_stage_count: i64,
    /// Work items waiting at a gate (always 0: there are no gates yet).
    pub awaiting_gate_count: i64,
    /// The names of the active stages, by position.
    pub active_stage_names: Vec<String>,
}

/// A workflow list item: the record plus names and counts.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkflowListItem {
    /// The workflow record.
    #[serde(flatten)]
    pub workflow: Workflow,
    /// The workspace's name; null if it is gone.
    pub workspace_name: Option<String>,
    /// The playbook's name; null if it is gone.
    pub playbook_name: Option<String>,
    /// Every task state, with 0 where there is none.
    pub task_counts: BTreeMap<String, i64>,
    /// Work item counts and the active stages.
    pub work_item_summary: WorkItemSummary,
}

/// `GET /workflows` filters.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct WorkflowFilter {
    /// Only workflows of this workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<Uuid>,
    /// Only workflows of this playbook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub playbook_id: Option<Uuid>,
    /// Only workflows in this state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<WorkflowState>,
    /// Only workflows of this lifecycle (`planned` or `ongoing`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<String>,
    /// Only workflows whose id starts with these 4 to 32 hex digits (no
    /// dashes): one request finds what a typed id prefix names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_prefix: Option<String>,
    /// Only workflows whose id ends with these 4 to 32 hex digits: the short
    /// id listings show is the last 8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_suffix: Option<String>,
    /// Only workflows with this name, compared case-insensitively: what a
    /// workflow typed by name resolves to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The page to answer, from 1 (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// Workflows per page (default 20, at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_page: Option<u32>,
}

/// A stage projection.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkflowStage {
    /// The stage's name, from the playbook definition.
    pub name: String,
    /// The stage's place in the definition, from 0.
    pub position: i64,
    /// What the stage is done for, if the definition says.
    pub goal: Option<String>,
    /// `pending`, `active` or `completed`.
    pub status: String,
    /// Work items in the stage.
    pub work_item_count: i64,
    /// Work items in the stage not `done`.
    pub open_work_item_count: i64,
    /// When the stage became active; null while pending.
    pub started_at: Option<Timestamp>,
    /// When the stage completed; null before.
    pub completed_at: Option<Timestamp>,
}

/// A unit of work on a workflow's board.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkItem {
    /// The work item's id.
    pub id: Uuid,
    /// The workflow the item belongs to.
    pub workflow_id: Uuid,
    /// The item's title.
    pub title: String,
    /// What the item is done for, if given.
    pub goal: Option<String>,
    /// The stage the item belongs to; null when none.
    pub stage_name: Option<String>,
    /// `inbox`, `active`, `blocked` or `done`.
    pub column_id: String,
    /// `critical`, `high`, `normal` or `low`.
    pub priority: String,
    /// Free-form caller metadata.
    pub metadata: Value,
    /// When the item moved to `done`; null before.
    pub completed_at: Option<Timestamp>,
    /// When the item was created.
    pub created_at: Timestamp,
    /// When the item last changed.
    pub updated_at: Timestamp,
}

/// `POST /workflows/:id/work-items`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateWorkItem {
    /// The item's title.
    pub title: String,
    /// What the item is done for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// The stage the item belongs to; without it, the workflow's current
    /// stage (its first active one), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage_name: Option<String>,
    /// The board column: `inbox` (default), `active`, `blocked` or `done`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column_id: Option<String>,
    /// The item's priority (default `normal`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<super::Priority>,
    /// Free-form caller metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// `PATCH /workflows/:id/work-items/:work_item_id`: at least one field.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct UpdateWorkItem {
    /// A new title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A new goal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// Move the item to this stage (a pending stage becomes active).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage_name: Option<String>,
    /// Move the item to this column: `inbox`, `active`, `blocked` or `done`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column_id: Option<String>,
    /// A new priority.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<super::Priority>,
    /// New metadata, replacing the old.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// An activation: a wake-up of the workflow's orchestration logic.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Activation {
    /// The activation's id.
    pub id: Uuid,
    /// The workflow woken.
    pub workflow_id: Uuid,
    /// `queued`, `processing`, `completed` or `failed`.
    pub status: String,
    /// Why the workflow was woken, as enqueued.
    pub reason: String,
    /// The event that woke it, as enqueued.
    pub event_type: String,
    /// Data for the orchestrator task, as enqueued.
    pub payload: Value,
    /// The orchestrator task processing it.
    pub task_id: Option<Uuid>,
    /// How many times processing was started (at most 3).
    pub attempts: i64,
    /// The last failure of its orchestrator task, if any.
    pub error: Option<Value>,
    /// When processing last started; null while queued.
    pub started_at: Option<Timestamp>,
    /// When it completed or failed; null before.
    pub completed_at: Option<Timestamp>,
    /// When it was enqueued.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

/// `POST /workflows/:id/activations`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct EnqueueActivation {
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Why the workflow is woken; handed to the orchestrator task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The event that wakes it; handed to the orchestrator task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_type: Option<String>,
    /// Data for the orchestrator task's input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
}

/// `{id, applied}`: `applied` is false when a `request_id` replay found the
/// write already done.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Applied {
    /// The id of the activation or workflow written.
    pub id: Uuid,
    /// False when a `request_id` replay found the write already done.
    pub applied: bool,
}

/// `POST /workflows/:id/redrives`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RedriveWorkflow {
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The new attempt's name; the prior one's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Why the workflow is run again; kept in the new attempt's
    /// `metadata.redrive`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A new input summary; the prior one's when absent (with `inherit_all`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Guidance for the new attempt; kept in `metadata.redrive`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steering_instruction: Option<String>,
    /// The input packet the new attempt should use; kept in `metadata.redrive`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redrive_input_packet_id: Option<Uuid>,
    /// `inherit_all` (default) carries parameters, metadata, budget and the
    /// input packet forward; `inherit_none` starts fresh.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inheritance_policy: Option<InheritancePolicy>,
    /// Parameters to set, over the inherited ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<BTreeMap<String, String>>,
    /// New structured inputs; the prior ones when absent (with `inherit_all`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_inputs: Option<Value>,
    /// New input files; the prior ones when absent (with `inherit_all`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<InputFile>>,
    /// How much live detail clients show; inherited when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_visibility_mode: Option<LiveVisibilityMode>,
}

/// The workflow detail.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkflowDetail {
    /// The workflow record.
    #[serde(flatten)]
    pub workflow: Workflow,
    /// The workflow's tasks.
    pub tasks: Vec<Task>,
    /// The workflow's work items.
    pub work_items: Vec<WorkItem>,
    /// The workflow's activations.
    pub activations: Vec<Activation>,
    /// The workflow's stages, by position.
    pub workflow_stages: Vec<WorkflowStage>,
}

/// One board column.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BoardColumn {
    /// The column's key: `inbox`, `active`, `blocked` or `done`.
    pub id: String,
    /// Its display title.
    pub title: String,
    /// The work items in it, oldest first.
    pub work_items: Vec<WorkItem>,
}

/// `GET /workflows/:id/board` (also the workspace packet's `board`): the
/// default columns `inbox`, `active`, `blocked`, `done` with their work
/// items (oldest first).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Board {
    /// The workflow the board belongs to.
    pub workflow_id: Uuid,
    /// The columns, in board order.
    pub columns: Vec<BoardColumn>,
    /// The workflow's stages, by position.
    pub stages: Vec<WorkflowStage>,
}

/// `POST /workflows/:id/pause|resume|cancel`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct WorkflowAction {
    /// Why, for people; recorded with the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// `GET /workflows/:id/events` query.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct WorkflowEventQuery {
    /// Comma-separated event types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub types: Option<String>,
    /// Only events of this one type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_type: Option<String>,
    /// Only events about this kind of entity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity_type: Option<String>,
    /// Only events about this entity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity_id: Option<Uuid>,
    /// Only events whose data names this work item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_item_id: Option<Uuid>,
    /// Only events whose data names this stage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage_name: Option<String>,
    /// Only events whose data names this activation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_id: Option<Uuid>,
    /// Only events whose data names this gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_id: Option<String>,
    /// Only events after this id (the last one seen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<i64>,
    /// Default 50, at most 500.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
}

/// A page of the event feed: `next_after` is always set, the last id on the
/// page as a string (the `after` given, `"0"` when none, on an empty page);
/// `has_more` whether more events follow.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EventFeed {
    /// The events, oldest first.
    pub events: Vec<Event>,
    /// The last id on the page as a string (the `after` given, `"0"` when none,
    /// on an empty page); pass it as `after`.
    pub next_after: Option<String>,
    /// Whether more events follow.
    pub has_more: bool,
}

/// `POST /workspaces/:id/planning-workflow`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PlanningWorkflow {
    /// What the planning workflow should plan; becomes
    /// `initial_input_packet.summary`.
    pub brief: String,
    /// The workflow's name.
    pub name: String,
    /// The playbook to launch; the workspace's newest active playbook
    /// (most recently created active one in the tenant) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub playbook_id: Option<Uuid>,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}
