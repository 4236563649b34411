//! Answers the server builds as plain JSON objects, given a type here so the
//! SDK returns them typed (the server's shape is the contract's).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

/// `GET /healthz`: the process answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Liveness {
    /// Always `ok`.
    pub status: String,
    /// The server's release.
    #[serde(default)]
    pub version: Option<String>,
}

/// `GET /readyz`: the process and its database answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Readiness {
    /// Always `ready` (a database that does not answer is a 503).
    pub status: String,
    /// `sqlite` or `postgres`.
    pub database: String,
}

/// `POST /workers/:id/heartbeat` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkerHeartbeatAck {
    /// Always true.
    pub ack: bool,
    /// The worker's status after the heartbeat (`online`).
    pub status: String,
    /// The worker.
    pub worker_id: Uuid,
}

/// `POST /tasks/:id/claim-credentials` answer: the values of the handles
/// asked for (a kind not asked for is absent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ClaimedCredentials {
    /// The LLM provider's API key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_api_key: Option<String>,
    /// The LLM provider's extra headers, name to value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_extra_headers: Option<Map<String, Value>>,
    /// MCP credential values by handle (empty: remote MCP has none yet).
    #[serde(default)]
    pub mcp_claim_values: Map<String, Value>,
}
