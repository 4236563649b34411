//! Tenants: the isolation boundary every record belongs to.

use super::{CreatedApiKey, Timestamp};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// `POST /tenants` (service scope).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateTenant {
    /// The tenant's display name.
    pub name: String,
    /// Defaults to a slug made from the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slug: Option<String>,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// A tenant: the isolation boundary every record belongs to.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Tenant {
    /// The tenant's id; every record and key carries it.
    pub id: Uuid,
    /// The tenant's display name.
    pub name: String,
    /// The tenant's unique slug.
    pub slug: String,
    /// When the tenant was created.
    pub created_at: Timestamp,
}

/// The create answer: the tenant and its first admin key, shown this once.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CreatedTenant {
    /// The new tenant.
    #[serde(flatten)]
    pub tenant: Tenant,
    /// The tenant's first admin key, shown only in this answer.
    pub admin_key: CreatedApiKey,
}
