//! Entity events: the append-only record every state change writes.

use super::Timestamp;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// One stored event. Ids increase; a reader resumes with `after = id`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Event {
    /// The event's id: increasing, so a reader resumes after the last id it
    /// saw.
    pub id: i64,
    /// What happened (`type` on the wire), as `<entity>.<change>`:
    /// `task.state_changed`, `workflow.created`, ...
    #[serde(rename = "type")]
    pub event_type: String,
    /// The kind of entity that changed (`task`, `workflow`, `agent`, ...).
    pub entity_type: String,
    /// The id of the entity that changed.
    pub entity_id: Uuid,
    /// The workflow the entity belongs to, if any.
    pub workflow_id: Option<Uuid>,
    /// The workspace the entity belongs to, if any.
    pub workspace_id: Option<Uuid>,
    /// The owner type of the credential that caused the change (`user`,
    /// `agent`, `worker`, `service`).
    pub actor_type: Option<String>,
    /// The credential's owner (an agent or worker id), or the key's id when
    /// the key has no owner.
    pub actor_id: Option<Uuid>,
    /// What changed; its fields depend on `type`.
    pub data: serde_json::Value,
    /// When the change was committed.
    pub created_at: Timestamp,
}

/// `GET /events` and `/events/stream` filters. `after` is the id of the last
/// event seen; `limit` is 1 to 500 (default 50).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EventFilter {
    /// Only events of this type (`type` on the wire).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub event_type: Option<String>,
    /// Only events about this kind of entity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity_type: Option<String>,
    /// Only events about this entity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity_id: Option<Uuid>,
    /// Only events of this workflow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    /// Only events of this workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<Uuid>,
    /// Only events after this id (the last one seen); from the start when
    /// absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<i64>,
    /// At most this many events, 1 to 500 (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// One page of `GET /events`, oldest first.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EventPage {
    /// The events, oldest first.
    pub items: Vec<Event>,
    /// Always set: the last id as a string (pass as `after`), or the `after`
    /// given (`"0"` when none) when the page is empty.
    pub next_after: Option<String>,
    /// Whether more events follow `next_after` now.
    pub has_more: bool,
}
