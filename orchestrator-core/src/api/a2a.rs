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
    /// The task to create, in A2A terms.
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
    /// The caller's own id for the task, kept as
    /// `metadata.protocol_ingress.external_task_id` (the platform task gets a
    /// new id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The task's title (required: a body without one is `422`).
    pub title: String,
    /// Free text describing the work, copied to the platform task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The platform task type (`type` on the wire); the platform default when
    /// left out.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub task_type: Option<String>,
    /// Free-text priority; values the platform does not know become `normal`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<String>,
    /// The workflow the new task belongs to, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    /// The workspace the new task belongs to, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<Uuid>,
    /// The role whose agents may claim the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Input data handed to the agent that claims the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// Context handed to the agent alongside `input`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Value>,
    /// Caller metadata, kept on the task next to `protocol_ingress`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// Flow limits (as on `POST /tasks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency_key: Option<String>,
    /// The rate limit key the task's claims count against (as on `POST
    /// /tasks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit_key: Option<String>,
}

/// The A2A-facing status of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum A2aStatus {
    /// Pending: the task waits to be claimed.
    Submitted,
    /// Claimed, in progress or with its output awaiting assessment.
    Working,
    /// Escalated: the task waits for a human.
    InputRequired,
    /// Completed (terminal).
    Completed,
    /// Failed (terminal).
    Failed,
    /// Cancelled (terminal).
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

    /// The wire name (`input-required` for [`A2aStatus::InputRequired`]).
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
    /// The A2A status the task's state maps to (see [`A2aStatus::of`]).
    pub status: A2aStatus,
    /// The task's title.
    pub title: String,
    /// When the task was created.
    pub created_at: Timestamp,
    /// When the task last changed.
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
    /// The platform task id.
    pub task_id: Uuid,
    /// The status the task moved to.
    pub status: A2aStatus,
    /// When the state change happened.
    pub created_at: Timestamp,
}

/// `GET /.well-known/agent.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AgentCard {
    /// The protocol the card describes: always `a2a`.
    pub protocol: String,
    /// The A2A protocol version: [`A2A_PROTOCOL_VERSION`].
    pub protocol_version: String,
    /// The service's name: `orch`.
    pub name: String,
    /// One sentence on what the service offers.
    pub description: String,
    /// How a caller authenticates.
    pub authentication: AgentCardAuthentication,
    /// Which A2A features the server supports.
    pub capabilities: AgentCardCapabilities,
    /// Where to submit, read and follow tasks.
    pub endpoints: AgentCardEndpoints,
}

/// How an A2A caller authenticates: a bearer API key in a header.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AgentCardAuthentication {
    /// The scheme (`type` on the wire): `bearer_api_key`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The header carrying the key: `Authorization`.
    pub header: String,
}

/// The A2A features the server offers (all on).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AgentCardCapabilities {
    /// Tasks may be submitted (`POST /a2a/tasks`).
    pub task_submission: bool,
    /// A task's status may be read (`GET /a2a/tasks/:id`).
    pub status_query: bool,
    /// A task's status changes may be followed as server-sent events.
    pub streaming_updates: bool,
}

/// URL templates; `{task_id}` stands for the platform task id.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AgentCardEndpoints {
    /// The URL to `POST` a task to.
    pub submit_task: String,
    /// The URL template to read a task's A2A view.
    pub get_task: String,
    /// The URL template of a task's status event stream.
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
