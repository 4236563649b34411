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
    /// The runtime is a local process spoken to over stdin and stdout (the
    /// default).
    #[default]
    Stdio,
    /// The runtime is reached over HTTP.
    Http,
    /// The runtime is reached over a websocket.
    Websocket,
}

impl AcpTransport {
    /// The wire name, as stored and as sent.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stdio => "stdio",
            Self::Http => "http",
            Self::Websocket => "websocket",
        }
    }

    /// The transport named `text`, or `None` for a name that is not one.
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
    /// One session per task (the default).
    #[default]
    Run,
    /// One open session per agent and workflow, reused by the agent's later
    /// tasks.
    Session,
}

impl AcpMode {
    /// The wire name, as stored and as sent.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Run => "run",
            Self::Session => "session",
        }
    }

    /// The mode named `text`, or `None` for a name that is not one.
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
    /// Created, not yet confirmed by a heartbeat.
    Initializing,
    /// The runtime reported work in progress.
    Active,
    /// The runtime reported it is waiting for work.
    Idle,
    /// Closed by `POST /acp/sessions/:id/close`; never reopened.
    Closed,
}

impl AcpSessionStatus {
    /// The wire name, as stored and as sent.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Initializing => "initializing",
            Self::Active => "active",
            Self::Idle => "idle",
            Self::Closed => "closed",
        }
    }

    /// The status named `text`, or `None` for a name that is not one.
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
    /// The agent the session serves; it must be registered with `protocol: acp`
    /// (else `400`).
    pub agent_id: Uuid,
    /// The worker hosting the runtime, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<Uuid>,
    /// The workflow the session works in; `session` mode reuses one open
    /// session per agent and workflow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    /// How the platform reaches the runtime (default `stdio`).
    #[serde(default)]
    pub transport: AcpTransport,
    /// `run` (default) or `session`; see [`AcpMode`].
    #[serde(default)]
    pub mode: AcpMode,
    /// The runtime's working directory; claimed tasks get it as `cwd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_path: Option<String>,
    /// Caller metadata kept on the session (the server adds `protocol` and
    /// `capabilities`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// The session record.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AcpSession {
    /// The session's id, used in `/acp/sessions/:id` routes.
    pub id: Uuid,
    /// The agent the session serves.
    pub agent_id: Uuid,
    /// The worker hosting the runtime, if one was named.
    pub worker_id: Option<Uuid>,
    /// The workflow the session works in, if any.
    pub workflow_id: Option<Uuid>,
    /// The task the session was opened for by `/acp/claim` (beyond the contract).
    pub task_id: Option<Uuid>,
    /// How the platform reaches the runtime.
    pub transport: AcpTransport,
    /// Whether the session serves one task (`run`) or is reused (`session`).
    pub mode: AcpMode,
    /// Where the session is in its life.
    pub status: AcpSessionStatus,
    /// The runtime's working directory, handed to claimed tasks as `cwd`.
    pub workspace_path: Option<String>,
    /// The caller's metadata plus `protocol` and `capabilities` (the
    /// agent's ACP declaration).
    pub metadata: Value,
    /// When the last heartbeat arrived (the creation time until the first one).
    pub last_heartbeat_at: Timestamp,
    /// When the session was created.
    pub created_at: Timestamp,
    /// When the session last changed (heartbeat, close).
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
    /// The runtime is working.
    Active,
    /// The runtime is waiting for work.
    Idle,
}

/// `GET /acp/sessions` filters.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AcpSessionFilter {
    /// Only sessions of this agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Uuid>,
    /// Only sessions in this workflow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    /// Only sessions in this state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<AcpSessionStatus>,
    /// The page to answer, from 1 (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// Sessions per page (default 20, at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_page: Option<u32>,
}

/// The `session` part of `POST /acp/claim`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AcpClaimSession {
    /// How the platform reaches the runtime (default `stdio`).
    #[serde(default)]
    pub transport: AcpTransport,
    /// `run` (default) or `session`; see [`AcpMode`].
    #[serde(default)]
    pub mode: AcpMode,
    /// The runtime's working directory, answered as the task's `cwd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_path: Option<String>,
}

/// `POST /acp/claim`: claim + start + session in one transaction.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AcpClaim {
    /// The ACP agent claiming; it must be registered with `protocol: acp`.
    pub agent_id: Uuid,
    /// The worker hosting the runtime, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<Uuid>,
    /// Default `["acp"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing_tags: Option<Vec<String>>,
    /// Merge `workflow`, `workspace`, `documents` and `attachments` into the
    /// task's `context` (as on `POST /tasks/claim`).
    #[serde(default)]
    pub include_context: bool,
    /// The session to open with the claim; transport `stdio` and mode `run`
    /// when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<AcpClaimSession>,
}

/// A file the runtime may fetch: a workspace file (with its id and
/// `download_url`) or a workflow input file (inline, so both are null).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AcpFileReference {
    /// The workspace file's id; null for a workflow input file.
    pub id: Option<Uuid>,
    /// The file's name.
    pub file_name: String,
    /// The file's media type, when known.
    pub content_type: Option<String>,
    /// The file's size in bytes.
    pub size_bytes: i64,
    /// Where to download a workspace file; null for an inline input file.
    pub download_url: Option<String>,
}

/// The task part of the claim answer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AcpClaimedTask {
    /// The claimed task's id.
    pub id: Uuid,
    /// The task's title.
    pub title: String,
    /// The description, or the title when there is none.
    pub prompt: String,
    /// The session's `workspace_path`.
    pub cwd: Option<String>,
    /// The task's input data.
    pub input: Value,
    /// The task's context (merged with workflow and workspace data when
    /// `include_context` was set).
    pub context: Value,
    /// The files the runtime may fetch for the task.
    pub file_references: Vec<AcpFileReference>,
}

/// The session part of the claim answer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AcpClaimedSession {
    /// The session opened (or reused) for the task.
    pub id: Uuid,
    /// The session's status.
    pub status: AcpSessionStatus,
}

/// `POST /acp/claim` answer (when a task was claimed).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AcpClaimed {
    /// The session opened (or reused) for the task.
    pub session: AcpClaimedSession,
    /// The task claimed and started.
    pub task: AcpClaimedTask,
}
