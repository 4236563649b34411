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
    Agent,
    Worker,
    Admin,
    Service,
}

impl Scope {
    pub const ALL: [Scope; 4] = [Scope::Agent, Scope::Worker, Scope::Admin, Scope::Service];

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
    pub token: String,
    pub expires_at: Timestamp,
    pub refresh_expires_at: Timestamp,
    pub scope: Scope,
    pub tenant_id: Uuid,
}

/// The refresh answer: a new access token; the rotated refresh token is in the
/// cookie that replaces the old one.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RefreshResponse {
    pub token: String,
    pub expires_at: Timestamp,
    pub refresh_expires_at: Timestamp,
}

/// `GET /auth/me`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Me {
    pub authenticated: bool,
    pub scope: Scope,
    pub tenant_id: Uuid,
    pub owner_type: String,
    pub owner_id: Option<Uuid>,
    /// The API key behind the credential (beyond the contract; lets operators
    /// tell which key a session came from).
    pub key_id: Uuid,
}

/// `POST /auth/logout`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LoggedOut {
    pub logged_out: bool,
}
