//! Entity events: the append-only record every state change writes.

use super::Timestamp;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// One stored event. Ids increase; a reader resumes with `after = id`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Event {
    pub id: i64,
    #[serde(rename = "type")]
    pub event_type: String,
    pub entity_type: String,
    pub entity_id: Uuid,
    pub workflow_id: Option<Uuid>,
    pub workspace_id: Option<Uuid>,
    pub actor_type: Option<String>,
    pub actor_id: Option<Uuid>,
    pub data: serde_json::Value,
    pub created_at: Timestamp,
}

/// `GET /events` and `/events/stream` filters. `after` is the id of the last
/// event seen; `limit` is 1 to 500 (default 50).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EventFilter {
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub event_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// One page of `GET /events`, oldest first.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EventPage {
    pub items: Vec<Event>,
    /// Always set: the last id as a string (pass as `after`), or the `after`
    /// given (`"0"` when none) when the page is empty.
    pub next_after: Option<String>,
    pub has_more: bool,
}
