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
    /// What the key may do; a caller can create keys of its own scope or lower.
    pub scope: Scope,
    /// When the key stops working; never when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<Timestamp>,
    /// Who the key acts for (`user`, `agent`, `worker`, `service`); defaults by scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_type: Option<String>,
    /// The agent, worker or user the key acts for; agent keys bound to an agent
    /// may only act as it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_id: Option<Uuid>,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// A key as listed: never the secret, only its display prefix.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ApiKey {
    /// The key's id, used in `/api-keys/:id` routes and reported by `GET
    /// /auth/me` as `key_id`.
    pub id: Uuid,
    /// The tenant the key belongs to.
    pub tenant_id: Uuid,
    /// A label for people.
    pub name: String,
    /// What the key may do.
    pub scope: Scope,
    /// The first characters of the key, to recognise it by (never the secret).
    pub key_prefix: String,
    /// Who the key acts for: `user`, `agent`, `worker` or `service`.
    pub owner_type: String,
    /// The agent, worker or user the key is bound to, if any.
    pub owner_id: Option<Uuid>,
    /// When the key was created.
    pub created_at: Timestamp,
    /// When the key stops working; null for never.
    pub expires_at: Option<Timestamp>,
    /// When the key was revoked; null while it works.
    pub revoked_at: Option<Timestamp>,
}

/// The create answer: the record plus the key, shown this once.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CreatedApiKey {
    /// The key's record.
    #[serde(flatten)]
    pub key: ApiKey,
    /// The key itself (`orch_<scope>_<32 chars>`), shown only in this answer.
    pub api_key: String,
}
