//! Outbound webhooks (admin): where the control plane posts its events,
//! signed as the Standard Webhooks specification says, and the log of
//! each delivery attempt.
//!
//! The secret (`whsec_` + base64 of 32 random bytes) is in the answer of a
//! create or a rotation only ([`WebhookWithSecret`]); every other answer is
//! a [`Webhook`] without it.

use super::Timestamp;
use super::wire_enum::wire_enum;
use serde::{Deserialize, Deserializer, Serialize};
use uuid::Uuid;

/// The prefix of every webhook secret.
pub const WEBHOOK_SECRET_PREFIX: &str = "whsec_";

/// `POST /webhooks`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateWebhook {
    /// An `http` or `https` URL the events are posted to.
    pub url: String,
    /// Exact event types (`workflow.completed`) or prefixes ending in `.*`
    /// (`task.*`); at least one.
    pub event_types: Vec<String>,
    /// Only events of this workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Default `true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// `PATCH /webhooks/:id`: the fields given change; `null` clears
/// `workspace_id` or `description`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct UpdateWebhook {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_types: Option<Vec<String>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub workspace_id: Option<Option<Uuid>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<Option<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// A field that is present (`Some`), maybe as `null` (`Some(None)`); an
/// absent one stays `None` through `#[serde(default)]`.
fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// A webhook as every read answers it (never with its secret).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Webhook {
    pub id: Uuid,
    pub url: String,
    pub event_types: Vec<String>,
    pub workspace_id: Option<Uuid>,
    pub description: Option<String>,
    pub enabled: bool,
    /// Until when the secret replaced by the last rotation still signs
    /// deliveries (beside the new one); `null` outside an overlap.
    pub previous_secret_expires_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// The answer of a create or a rotation: the record and the secret, shown
/// this once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WebhookWithSecret {
    #[serde(flatten)]
    pub webhook: Webhook,
    /// `whsec_` + base64 of 32 random bytes.
    pub secret: String,
}

/// `DELETE /webhooks/:id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeletedWebhook {
    pub id: Uuid,
    pub deleted: bool,
}

wire_enum!(
    /// Where one delivery attempt stands.
    DeliveryStatus {
        Pending = "pending",
        Delivered = "delivered",
        Failed = "failed",
    }
);

/// One attempt of a delivery (`GET /webhooks/:id/deliveries`, newest
/// first). `id` is the delivery, the same `webhook-id` on every attempt;
/// an attempt that failed with retries left is `failed` and the next one
/// is a new entry with `attempt + 1`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WebhookDelivery {
    pub id: Uuid,
    pub event_id: i64,
    pub event_type: String,
    pub attempt: u32,
    pub status: DeliveryStatus,
    pub response_status: Option<u16>,
    pub last_error: Option<String>,
    /// When a pending attempt is due; `null` once it was made.
    pub next_attempt_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub delivered_at: Option<Timestamp>,
}

/// What a delivery posts: the event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WebhookPayload {
    pub id: i64,
    #[serde(rename = "type")]
    pub event_type: String,
    pub created_at: Timestamp,
    pub data: serde_json::Value,
}

/// `GET /webhooks/:id/deliveries` query: the page and, optionally, one
/// status.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct DeliveryFilter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<DeliveryStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_page: Option<u32>,
}
