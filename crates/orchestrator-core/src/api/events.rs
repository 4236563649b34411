//! Entity events: the append-only record every state change writes.

use super::Timestamp;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// One stored event. Ids increase; a reader resumes with `after = id`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
