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
    Pending,
    InProgress,
    Paused,
    Completed,
    Failed,
    Cancelled,
}

impl WorkflowState {
    pub const ALL: [WorkflowState; 6] = [
        Self::Pending,
        Self::InProgress,
        Self::Paused,
        Self::Completed,
        Self::Failed,
        Self::Cancelled,
    ];

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

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }

    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum LiveVisibilityMode {
    #[default]
    Standard,
    Enhanced,
}

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

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Budget {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_cap_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_duration_minutes: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct InputFile {
    pub file_name: String,
    pub content_base64: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct InitialInputPacket {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_inputs: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<InputFile>>,
}

/// `POST /workflows`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateWorkflow {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    pub playbook_id: Uuid,
    pub workspace_id: Uuid,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator_note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_visibility_mode: Option<LiveVisibilityMode>,
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
    pub id: Uuid,
    pub workspace_id: Uuid,
    pub playbook_id: Uuid,
    pub name: String,
    pub state: WorkflowState,
    /// `planned` or `ongoing`.
    pub lifecycle: String,
    pub operator_note: Option<String>,
    pub parameters: BTreeMap<String, String>,
    pub token_budget: Option<f64>,
    pub cost_cap_usd: Option<f64>,
    pub max_duration_minutes: Option<f64>,
    pub metadata: Value,
    pub live_visibility_mode: LiveVisibilityMode,
    pub initial_input_packet: Option<InitialInputPacket>,
    pub lineage_id: Uuid,
    pub attempt_number: i64,
    /// `initial` or `redrive`.
    pub attempt_kind: String,
    pub redrive_of: Option<Uuid>,
    pub completed_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkItemSummary {
    pub total_work_items: i64,
    pub open_work_item_count: i64,
    pub blocked_work_item_count: i64,
    pub completed_work_item_count: i64,
    pub active_stage_count: i64,
    pub awaiting_gate_count: i64,
    pub active_stage_names: Vec<String>,
}

/// A workflow list item: the record plus names and counts.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkflowListItem {
    #[serde(flatten)]
    pub workflow: Workflow,
    pub workspace_name: Option<String>,
    pub playbook_name: Option<String>,
    /// Every task state, with 0 where there is none.
    pub task_counts: BTreeMap<String, i64>,
    pub work_item_summary: WorkItemSummary,
}

/// `GET /workflows` filters.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct WorkflowFilter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub playbook_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<WorkflowState>,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_page: Option<u32>,
}

/// A stage projection.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkflowStage {
    pub name: String,
    pub position: i64,
    pub goal: Option<String>,
    /// `pending`, `active` or `completed`.
    pub status: String,
    pub work_item_count: i64,
    pub open_work_item_count: i64,
    pub started_at: Option<Timestamp>,
    pub completed_at: Option<Timestamp>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkItem {
    pub id: Uuid,
    pub workflow_id: Uuid,
    pub title: String,
    pub goal: Option<String>,
    pub stage_name: Option<String>,
    /// `inbox`, `active`, `blocked` or `done`.
    pub column_id: String,
    pub priority: String,
    pub metadata: Value,
    pub completed_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// `POST /workflows/:id/work-items`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateWorkItem {
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// The stage the item belongs to; without it, the workflow's current
    /// stage (its first active one), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<super::Priority>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// `PATCH /workflows/:id/work-items/:work_item_id`: at least one field.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct UpdateWorkItem {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<super::Priority>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// An activation: a wake-up of the workflow's orchestration logic.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Activation {
    pub id: Uuid,
    pub workflow_id: Uuid,
    /// `queued`, `processing`, `completed` or `failed`.
    pub status: String,
    pub reason: String,
    pub event_type: String,
    pub payload: Value,
    /// The orchestrator task processing it.
    pub task_id: Option<Uuid>,
    pub attempts: i64,
    pub error: Option<Value>,
    pub started_at: Option<Timestamp>,
    pub completed_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// `POST /workflows/:id/activations`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct EnqueueActivation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
}

/// `{id, applied}`: `applied` is false when a `request_id` replay found the
/// write already done.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Applied {
    pub id: Uuid,
    pub applied: bool,
}

/// `POST /workflows/:id/redrives`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RedriveWorkflow {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steering_instruction: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redrive_input_packet_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inheritance_policy: Option<InheritancePolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_inputs: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<InputFile>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_visibility_mode: Option<LiveVisibilityMode>,
}

/// The workflow detail.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkflowDetail {
    #[serde(flatten)]
    pub workflow: Workflow,
    pub tasks: Vec<Task>,
    pub work_items: Vec<WorkItem>,
    pub activations: Vec<Activation>,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_item_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_id: Option<String>,
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
    pub events: Vec<Event>,
    pub next_after: Option<String>,
    pub has_more: bool,
}

/// `POST /workspaces/:id/planning-workflow`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PlanningWorkflow {
    pub brief: String,
    pub name: String,
    /// The playbook to launch; the workspace's newest active playbook
    /// (most recently created active one in the tenant) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub playbook_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}
