//! API key management (beyond the contract): list, create, revoke.

use super::{Scope, Timestamp};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// `POST /api-keys`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateApiKey {
    /// A label for people; defaults to the scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub scope: Scope,
    /// When the key stops working; never when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<Timestamp>,
    /// Who the key acts for (`user`, `agent`, `worker`, `service`); defaults by scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// A key as listed: never the secret, only its display prefix.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ApiKey {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub name: String,
    pub scope: Scope,
    pub key_prefix: String,
    pub owner_type: String,
    pub owner_id: Option<Uuid>,
    pub created_at: Timestamp,
    pub expires_at: Option<Timestamp>,
    pub revoked_at: Option<Timestamp>,
}

/// The create answer: the record plus the key, shown this once.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CreatedApiKey {
    #[serde(flatten)]
    pub key: ApiKey,
    pub api_key: String,
}
