//! ACP sessions: a session ties an ACP-registered agent to a
//! transport and, in `session` mode, is reused across tasks.

use super::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// How the platform reaches the ACP runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum AcpTransport {
    #[default]
    Stdio,
    Http,
    Websocket,
}

impl AcpTransport {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stdio => "stdio",
            Self::Http => "http",
            Self::Websocket => "websocket",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Self::Stdio, Self::Http, Self::Websocket]
            .into_iter()
            .find(|t| t.as_str() == text)
    }
}

/// `run`: one session per task; `session`: reused by the agent's later
/// tasks in the same workflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum AcpMode {
    #[default]
    Run,
    Session,
}

impl AcpMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Run => "run",
            Self::Session => "session",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Self::Run, Self::Session]
            .into_iter()
            .find(|m| m.as_str() == text)
    }
}

/// The states of a session: `initializing` on creation, `active` / `idle`
/// by heartbeat, `closed` at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum AcpSessionStatus {
    Initializing,
    Active,
    Idle,
    Closed,
}

impl AcpSessionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Initializing => "initializing",
            Self::Active => "active",
            Self::Idle => "idle",
            Self::Closed => "closed",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Self::Initializing, Self::Active, Self::Idle, Self::Closed]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

/// `POST /acp/sessions`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateAcpSession {
    pub agent_id: Uuid,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    #[serde(default)]
    pub transport: AcpTransport,
    #[serde(default)]
    pub mode: AcpMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// The session record.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AcpSession {
    pub id: Uuid,
    pub agent_id: Uuid,
    pub worker_id: Option<Uuid>,
    pub workflow_id: Option<Uuid>,
    /// The task the session was opened for by `/acp/claim` (beyond the contract).
    pub task_id: Option<Uuid>,
    pub transport: AcpTransport,
    pub mode: AcpMode,
    pub status: AcpSessionStatus,
    pub workspace_path: Option<String>,
    /// The caller's metadata plus `protocol` and `capabilities` (the
    /// agent's ACP declaration).
    pub metadata: Value,
    pub last_heartbeat_at: Timestamp,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// Whether an open session was reused rather than created.
    pub reused: bool,
}

/// `POST /acp/sessions/:id/heartbeat` (beyond the contract).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AcpHeartbeat {
    /// `active` (default) or `idle`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<AcpLiveStatus>,
}

/// What a heartbeat may report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum AcpLiveStatus {
    Active,
    Idle,
}

/// `GET /acp/sessions` filters.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AcpSessionFilter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<AcpSessionStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_page: Option<u32>,
}

/// The `session` part of `POST /acp/claim`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AcpClaimSession {
    #[serde(default)]
    pub transport: AcpTransport,
    #[serde(default)]
    pub mode: AcpMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_path: Option<String>,
}

/// `POST /acp/claim`: claim + start + session in one transaction.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AcpClaim {
    pub agent_id: Uuid,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<Uuid>,
    /// Default `["acp"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing_tags: Option<Vec<String>>,
    #[serde(default)]
    pub include_context: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<AcpClaimSession>,
}

/// A file the runtime may fetch: a workspace file (with its id and
/// `download_url`) or a workflow input file (inline, so both are null).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AcpFileReference {
    pub id: Option<Uuid>,
    pub file_name: String,
    pub content_type: Option<String>,
    pub size_bytes: i64,
    pub download_url: Option<String>,
}

/// The task part of the claim answer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AcpClaimedTask {
    pub id: Uuid,
    pub title: String,
    /// The description, or the title when there is none.
    pub prompt: String,
    /// The session's `workspace_path`.
    pub cwd: Option<String>,
    pub input: Value,
    pub context: Value,
    pub file_references: Vec<AcpFileReference>,
}

/// The session part of the claim answer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AcpClaimedSession {
    pub id: Uuid,
    pub status: AcpSessionStatus,
}

/// `POST /acp/claim` answer (when a task was claimed).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AcpClaimed {
    pub session: AcpClaimedSession,
    pub task: AcpClaimedTask,
}
