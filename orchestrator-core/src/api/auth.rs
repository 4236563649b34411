//! Authentication wire types: scopes, the token exchange, refresh and `me`.

use super::Timestamp;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

/// What a credential may do. Ranked `service > admin > worker > agent`: a route
/// that names a scope accepts that scope and every higher one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Works tasks as one agent: claims, reports, heartbeats.
    Agent,
    /// Runs agents: registers itself and them, holds the worker channel.
    Worker,
    /// Manages the tenant: playbooks, workflows, keys, settings.
    Admin,
    /// Operates the platform across tenants (creates tenants).
    Service,
}

impl Scope {
    /// Every scope, lowest first.
    pub const ALL: [Scope; 4] = [Scope::Agent, Scope::Worker, Scope::Admin, Scope::Service];

    /// The wire name (`agent`, `worker`, `admin`, `service`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Agent => "agent",
            Self::Worker => "worker",
            Self::Admin => "admin",
            Self::Service => "service",
        }
    }

    /// Whether a caller holding `self` may use a route that requires `required`.
    pub fn satisfies(self, required: Scope) -> bool {
        self >= required
    }

    /// The owner type recorded for keys of this scope when none is given.
    pub fn default_owner_type(self) -> &'static str {
        match self {
            Self::Agent => "agent",
            Self::Worker => "worker",
            Self::Admin => "user",
            Self::Service => "service",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Scope {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|scope| scope.as_str() == s)
            .ok_or_else(|| {
                format!("unknown scope `{s}` (expected agent, worker, admin or service)")
            })
    }
}

/// `POST /auth/token` and `/auth/login`. `apiKey` is accepted as an alias.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct TokenRequest {
    /// The raw API key to exchange (`apiKey` is accepted as an alias).
    #[serde(alias = "apiKey")]
    pub api_key: String,
    /// `true` (the default) gives cookies with an explicit expiry; `false`
    /// gives session cookies that end with the browser session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_session: Option<bool>,
}

/// The token exchange answer. The refresh token itself travels only in the
/// `service_refresh_token` cookie.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TokenResponse {
    /// The access token, sent as `Authorization: Bearer`; also set as a cookie.
    pub token: String,
    /// When the access token stops working.
    pub expires_at: Timestamp,
    /// When the refresh token (in its cookie) stops working.
    pub refresh_expires_at: Timestamp,
    /// The scope of the key the token was issued for.
    pub scope: Scope,
    /// The tenant the token acts in.
    pub tenant_id: Uuid,
}

/// The refresh answer: a new access token; the rotated refresh token is in the
/// cookie that replaces the old one.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RefreshResponse {
    /// The new access token.
    pub token: String,
    /// When the new access token stops working.
    pub expires_at: Timestamp,
    /// When the rotated refresh token stops working.
    pub refresh_expires_at: Timestamp,
}

/// `GET /auth/me`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Me {
    /// Always true: the request carried a valid credential.
    pub authenticated: bool,
    /// The credential's scope.
    pub scope: Scope,
    /// The tenant the credential acts in.
    pub tenant_id: Uuid,
    /// Who the key acts for: `user`, `agent`, `worker` or `service`.
    pub owner_type: String,
    /// The agent, worker or user the key is bound to, if any.
    pub owner_id: Option<Uuid>,
    /// The API key behind the credential (beyond the contract; lets operators
    /// tell which key a session came from).
    pub key_id: Uuid,
}

/// `POST /auth/logout`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LoggedOut {
    /// Always true: the session is ended and its cookies cleared.
    pub logged_out: bool,
}
