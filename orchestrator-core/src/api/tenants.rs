//! Tenants: the isolation boundary every record belongs to.

use super::{CreatedApiKey, Timestamp};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// `POST /tenants` (service scope).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateTenant {
    pub name: String,
    /// Defaults to a slug made from the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slug: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Tenant {
    pub id: Uuid,
    pub name: String,
    pub slug: String,
    pub created_at: Timestamp,
}

/// The create answer: the tenant and its first admin key, shown this once.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CreatedTenant {
    #[serde(flatten)]
    pub tenant: Tenant,
    pub admin_key: CreatedApiKey,
}
