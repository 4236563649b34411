//! A2A task ingress: the agent card, task submission, the
//! A2A view of a platform task and its status stream.

use super::{TaskState, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// The A2A protocol version the card advertises.
pub const A2A_PROTOCOL_VERSION: &str = "0.1";

/// `POST /a2a/tasks`: `{task: {...}, request_id?}`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SubmitA2aTask {
    pub task: A2aTaskInput,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// The submitted task. `id` is the caller's own id, kept as
/// `metadata.protocol_ingress.external_task_id`; `priority` is free text
/// (values the platform does not know become `normal`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct A2aTaskInput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub task_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// Flow limits (as on `POST /tasks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit_key: Option<String>,
}

/// The A2A-facing status of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum A2aStatus {
    Submitted,
    Working,
    InputRequired,
    Completed,
    Failed,
    Canceled,
}

impl A2aStatus {
    /// pending → submitted; claimed, in_progress, output_pending_assessment
    /// → working; escalated → input-required; the rest by name.
    pub fn of(state: TaskState) -> Self {
        match state {
            TaskState::Pending => Self::Submitted,
            TaskState::Claimed | TaskState::InProgress | TaskState::OutputPendingAssessment => {
                Self::Working
            }
            TaskState::Escalated => Self::InputRequired,
            TaskState::Completed => Self::Completed,
            TaskState::Failed => Self::Failed,
            TaskState::Cancelled => Self::Canceled,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Submitted => "submitted",
            Self::Working => "working",
            Self::InputRequired => "input-required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Canceled => "canceled",
        }
    }

    /// A status after which the stream ends.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Canceled)
    }
}

/// The A2A view of a platform task.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct A2aTask {
    /// The platform task id (never the external id).
    pub id: Uuid,
    pub status: A2aStatus,
    pub title: String,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// The output of a completed task, the error packet of a failed one.
    pub result: Option<Value>,
    /// `protocol_ingress` (with `external_task_id`), `task_id`,
    /// `workflow_id`, `workspace_id`.
    pub metadata: Value,
}

/// One frame of `GET /a2a/tasks/:id/events` (`event: task.state_changed`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct A2aTaskEvent {
    pub task_id: Uuid,
    pub status: A2aStatus,
    pub created_at: Timestamp,
}

/// `GET /.well-known/agent.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AgentCard {
    pub protocol: String,
    pub protocol_version: String,
    pub name: String,
    pub description: String,
    pub authentication: AgentCardAuthentication,
    pub capabilities: AgentCardCapabilities,
    pub endpoints: AgentCardEndpoints,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AgentCardAuthentication {
    #[serde(rename = "type")]
    pub kind: String,
    pub header: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AgentCardCapabilities {
    pub task_submission: bool,
    pub status_query: bool,
    pub streaming_updates: bool,
}

/// URL templates; `{task_id}` stands for the platform task id.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AgentCardEndpoints {
    pub submit_task: String,
    pub get_task: String,
    pub stream_task: String,
}

impl AgentCard {
    /// The card of a server reachable at `base` (`https://host:port`).
    pub fn for_base(base: &str) -> Self {
        let base = base.trim_end_matches('/');
        Self {
            protocol: "a2a".into(),
            protocol_version: A2A_PROTOCOL_VERSION.into(),
            name: "orch".into(),
            description: "orch control plane: submit tasks for its agents and follow their status"
                .into(),
            authentication: AgentCardAuthentication {
                kind: "bearer_api_key".into(),
                header: "Authorization".into(),
            },
            capabilities: AgentCardCapabilities {
                task_submission: true,
                status_query: true,
                streaming_updates: true,
            },
            endpoints: AgentCardEndpoints {
                submit_task: format!("{base}/api/v1/a2a/tasks"),
                get_task: format!("{base}/api/v1/a2a/tasks/{{task_id}}"),
                stream_task: format!("{base}/api/v1/a2a/tasks/{{task_id}}/events"),
            },
        }
    }
}
