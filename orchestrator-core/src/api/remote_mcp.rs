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
/// The largest `callTimeoutSeconds`.
pub const MAX_CALL_TIMEOUT_SECONDS: u32 = 300;
/// `callTimeoutSeconds` when a create leaves it out.
pub const DEFAULT_CALL_TIMEOUT_SECONDS: u32 = 30;

wire_enum!(
    /// Which transport to verify and call over; `auto` tries streamable
    /// HTTP, then the older HTTP+SSE transport.
    #[derive(Default)]
    TransportPreference {
        /// Streamable HTTP first, then HTTP+SSE (the default).
        #[default]
        Auto = "auto",
        /// Streamable HTTP only.
        StreamableHttp = "streamable_http",
        /// The older HTTP+SSE transport only.
        HttpSseCompat = "http_sse_compat",
    }
);

wire_enum!(
    /// The transport verification succeeded over.
    McpTransport {
        /// Streamable HTTP.
        StreamableHttp = "streamable_http",
        /// The older HTTP+SSE transport.
        HttpSseCompat = "http_sse_compat",
    }
);

wire_enum!(
    /// How auth material reaches the server: none, the parameters (headers
    /// or query), or OAuth.
    #[derive(Default)]
    McpAuthMode {
        /// No auth material (the default).
        #[default]
        None = "none",
        /// The server's `parameters` carry it (headers or query).
        Parameterized = "parameterized",
        /// OAuth 2.1: an admin authorizes orch in the browser.
        Oauth = "oauth",
    }
);

wire_enum!(
    /// Where a parameter goes on every request.
    ParameterPlacement {
        /// An HTTP header.
        Header = "header",
        /// A query parameter of the endpoint URL.
        Query = "query",
    }
);

wire_enum!(
    /// A secret value is sealed at rest and never read back.
    #[derive(Default)]
    ParameterValueKind {
        /// Stored and read back as is (the default).
        #[default]
        Plain = "plain",
        /// Sealed at rest and read back as the mask.
        Secret = "secret",
    }
);

wire_enum!(
    /// The outcome of the last verification.
    #[derive(Default)]
    VerificationStatus {
        /// The last verification passed.
        Verified = "verified",
        /// The last verification failed (see `verificationError`).
        Failed = "failed",
        /// Not verified yet (the default).
        #[default]
        Unverified = "unverified",
    }
);

/// One parameter applied to every request to the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpParameter {
    /// Whether the parameter is sent as a header or a query parameter.
    pub placement: ParameterPlacement,
    /// The header name or query parameter name.
    pub key: String,
    /// `plain` (default) or `secret` (sealed at rest, read back as the mask).
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
    /// The server's display name.
    pub name: String,
    /// What the server is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The server's URL; private and loopback addresses are refused unless
    /// `ORCH_ALLOW_PRIVATE_NETWORK=true`.
    pub endpoint_url: String,
    /// Which transport to use (default `auto`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport_preference: Option<TransportPreference>,
    /// 1..=300; default 30.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_timeout_seconds: Option<i64>,
    /// How auth material reaches the server (default `none`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_mode: Option<McpAuthMode>,
    /// Whether agents registered from now on get the server (an `mcp_server`
    /// handle in their claims).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled_by_default_for_new_specialists: Option<bool>,
    /// Headers or query parameters sent on every request (the auth material of
    /// `parameterized`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Vec<McpParameter>>,
}

/// A tool, resource or prompt the server listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct McpCapability {
    /// The tool's, resource's or prompt's name.
    pub name: String,
    /// Its description, when the server gave one.
    pub description: Option<String>,
}

/// What the server offered at its last successful verification.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct McpCapabilities {
    /// The tools the server listed.
    pub tools: Vec<McpCapability>,
    /// The resources the server listed (empty when it declares none).
    pub resources: Vec<McpCapability>,
    /// The prompts the server listed (empty when it declares none).
    pub prompts: Vec<McpCapability>,
}

/// A remote MCP server record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RemoteMcpServer {
    /// The server's id, used in `/remote-mcp-servers/:id` routes.
    pub id: Uuid,
    /// The server's display name.
    pub name: String,
    /// What the server is for (empty when not given).
    pub description: String,
    /// The server's URL.
    pub endpoint_url: String,
    /// The transport asked for.
    pub transport_preference: TransportPreference,
    /// The time each call to the server may take, in seconds.
    pub call_timeout_seconds: u32,
    /// How auth material reaches the server.
    pub auth_mode: McpAuthMode,
    /// Whether agents registered from now on get the server.
    pub enabled_by_default_for_new_specialists: bool,
    /// Secret values read back as the mask.
    pub parameters: Vec<McpParameter>,
    /// The outcome of the last verification.
    pub verification_status: VerificationStatus,
    /// Why the last verification failed (null once verified).
    pub verification_error: Option<String>,
    /// The step the last failed verification stopped at.
    pub verification_failed_step: Option<String>,
    /// The transport the last successful verification used; null before one.
    pub resolved_transport: Option<McpTransport>,
    /// What the server offered at its last successful verification.
    pub capabilities: McpCapabilities,
    /// When the server was last verified successfully.
    pub verified_at: Option<Timestamp>,
    /// `not_applicable` unless `authMode` is `oauth`.
    pub oauth_status: String,
    /// When the record was created.
    pub created_at: Timestamp,
    /// When the record last changed.
    pub updated_at: Timestamp,
}

/// `POST /remote-mcp-servers/:id/oauth/reconnect`: where the admin's browser
/// goes to authorize orch (OAuth 2.1 authorization code with PKCE).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OAuthAuthorization {
    /// The authorization server's URL, with the PKCE challenge and state, to
    /// open in the admin's browser.
    pub authorization_url: String,
}
