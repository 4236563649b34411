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
    /// What the webhook is for, for people.
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
    /// A new `http` or `https` URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// New event types or `.*` prefixes, replacing the old ones (at least one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_types: Option<Vec<String>>,
    /// A new workspace to limit events to; `null` removes the limit.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub workspace_id: Option<Option<Uuid>>,
    /// A new description; `null` clears it.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<Option<String>>,
    /// Turn deliveries on or off.
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
    /// The webhook's id, used in `/webhooks/:id` routes.
    pub id: Uuid,
    /// The URL events are posted to.
    pub url: String,
    /// Exact event types or prefixes ending in `.*` that the webhook receives.
    pub event_types: Vec<String>,
    /// Only events of this workspace; null for all.
    pub workspace_id: Option<Uuid>,
    /// What the webhook is for, for people.
    pub description: Option<String>,
    /// Whether events are delivered; a disabled webhook gets nothing.
    pub enabled: bool,
    /// Until when the secret replaced by the last rotation still signs
    /// deliveries (beside the new one); `null` outside an overlap.
    pub previous_secret_expires_at: Option<Timestamp>,
    /// When the webhook was created.
    pub created_at: Timestamp,
    /// When the webhook last changed.
    pub updated_at: Timestamp,
}

/// The answer of a create or a rotation: the record and the secret, shown
/// this once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WebhookWithSecret {
    /// The webhook's record.
    #[serde(flatten)]
    pub webhook: Webhook,
    /// `whsec_` + base64 of 32 random bytes.
    pub secret: String,
}

/// `DELETE /webhooks/:id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeletedWebhook {
    /// The deleted webhook's id.
    pub id: Uuid,
    /// Always true: the webhook and its deliveries are gone.
    pub deleted: bool,
}

wire_enum!(
    /// Where one delivery attempt stands.
    DeliveryStatus {
        /// Waiting for its `next_attempt_at`.
        Pending = "pending",
        /// The receiver answered 2xx.
        Delivered = "delivered",
        /// The receiver answered otherwise or not at all.
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
    /// The delivery's id: the `webhook-id` header, the same on every attempt.
    pub id: Uuid,
    /// The id of the event delivered.
    pub event_id: i64,
    /// The type of the event delivered.
    pub event_type: String,
    /// Which attempt this is, from 1.
    pub attempt: u32,
    /// Where the attempt stands.
    pub status: DeliveryStatus,
    /// The HTTP status the receiver answered; null when no answer came.
    pub response_status: Option<u16>,
    /// Why the attempt failed (status, timeout, connection error); null
    /// otherwise.
    pub last_error: Option<String>,
    /// When a pending attempt is due; `null` once it was made.
    pub next_attempt_at: Option<Timestamp>,
    /// When the attempt was created.
    pub created_at: Timestamp,
    /// When the receiver acknowledged it with a 2xx; null otherwise.
    pub delivered_at: Option<Timestamp>,
}

/// What a delivery posts: the event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WebhookPayload {
    /// The event's id (increasing).
    pub id: i64,
    /// The event's type (`type` on the wire).
    #[serde(rename = "type")]
    pub event_type: String,
    /// When the event happened.
    pub created_at: Timestamp,
    /// What changed; as the event's `data`.
    pub data: serde_json::Value,
}

/// `GET /webhooks/:id/deliveries` query: the page and, optionally, one
/// status.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct DeliveryFilter {
    /// Only attempts in this state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<DeliveryStatus>,
    /// The page to answer, from 1 (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// Attempts per page (default 20, at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_page: Option<u32>,
}
