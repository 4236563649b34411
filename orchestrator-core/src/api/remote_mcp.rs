//! Remote MCP servers (admin): the contract's "Remote MCP server" fields,
//! camelCase on the wire both ways, plus what verification found.
//!
//! Secret parameter values are write-only: they read back as
//! [`SECRET_MASK`](super::SECRET_MASK), and a replace (`PUT`) that sends the
//! mask for a secret parameter keeps the stored value.

use super::Timestamp;
use super::wire_enum::wire_enum;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The bounds of `callTimeoutSeconds`.
pub const MIN_CALL_TIMEOUT_SECONDS: u32 = 1;
pub const MAX_CALL_TIMEOUT_SECONDS: u32 = 300;
/// `callTimeoutSeconds` when a create leaves it out.
pub const DEFAULT_CALL_TIMEOUT_SECONDS: u32 = 30;

wire_enum!(
    /// Which transport to verify and call over; `auto` tries streamable
    /// HTTP, then the older HTTP+SSE transport.
    #[derive(Default)]
    TransportPreference {
        #[default]
        Auto = "auto",
        StreamableHttp = "streamable_http",
        HttpSseCompat = "http_sse_compat",
    }
);

wire_enum!(
    /// The transport verification succeeded over.
    McpTransport {
        StreamableHttp = "streamable_http",
        HttpSseCompat = "http_sse_compat",
    }
);

wire_enum!(
    /// How auth material reaches the server: none, the parameters (headers
    /// or query), or OAuth.
    #[derive(Default)]
    McpAuthMode {
        #[default]
        None = "none",
        Parameterized = "parameterized",
        Oauth = "oauth",
    }
);

wire_enum!(
    /// Where a parameter goes on every request.
    ParameterPlacement { Header = "header", Query = "query" }
);

wire_enum!(
    /// A secret value is sealed at rest and never read back.
    #[derive(Default)]
    ParameterValueKind {
        #[default]
        Plain = "plain",
        Secret = "secret",
    }
);

wire_enum!(
    /// The outcome of the last verification.
    #[derive(Default)]
    VerificationStatus {
        Verified = "verified",
        Failed = "failed",
        #[default]
        Unverified = "unverified",
    }
);

/// One parameter applied to every request to the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpParameter {
    pub placement: ParameterPlacement,
    pub key: String,
    #[serde(default)]
    pub value_kind: ParameterValueKind,
    /// For a secret: the value on write, the mask on read.
    pub value: String,
}

/// `POST /remote-mcp-servers` and `PUT /remote-mcp-servers/:id` (a
/// replace: every field as for a create).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RemoteMcpServerRequest {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub endpoint_url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport_preference: Option<TransportPreference>,
    /// 1..=300; default 30.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_timeout_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_mode: Option<McpAuthMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled_by_default_for_new_specialists: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Vec<McpParameter>>,
}

/// A tool, resource or prompt the server listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct McpCapability {
    pub name: String,
    pub description: Option<String>,
}

/// What the server offered at its last successful verification.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct McpCapabilities {
    pub tools: Vec<McpCapability>,
    pub resources: Vec<McpCapability>,
    pub prompts: Vec<McpCapability>,
}

/// A remote MCP server record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RemoteMcpServer {
    pub id: Uuid,
    pub name: String,
    pub description: String,
    pub endpoint_url: String,
    pub transport_preference: TransportPreference,
    pub call_timeout_seconds: u32,
    pub auth_mode: McpAuthMode,
    pub enabled_by_default_for_new_specialists: bool,
    /// Secret values read back as the mask.
    pub parameters: Vec<McpParameter>,
    pub verification_status: VerificationStatus,
    /// Why the last verification failed (null once verified).
    pub verification_error: Option<String>,
    /// The step the last failed verification stopped at.
    pub verification_failed_step: Option<String>,
    pub resolved_transport: Option<McpTransport>,
    pub capabilities: McpCapabilities,
    pub verified_at: Option<Timestamp>,
    /// `not_applicable` unless `authMode` is `oauth`.
    pub oauth_status: String,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// `POST /remote-mcp-servers/:id/oauth/reconnect`: where the admin's browser
/// goes to authorize orch (OAuth 2.1 authorization code with PKCE).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OAuthAuthorization {
    pub authorization_url: String,
}
