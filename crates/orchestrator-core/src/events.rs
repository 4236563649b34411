//! The entity-event log: every state change appends an event in the same
//! transaction as the change, and the event reaches subscribers only after
//! that transaction commits (see [`crate::store::Tx::commit`]).

use crate::api::{Event, Timestamp};
use crate::auth::Caller;
use crate::error::Result;
use crate::store::{Tx, on_db};
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::types::Json;
use uuid::Uuid;

/// An event about to be written.
#[derive(Debug, Clone)]
pub(crate) struct NewEvent<'a> {
    pub event_type: &'a str,
    pub entity_type: &'a str,
    pub entity_id: Uuid,
    pub workflow_id: Option<Uuid>,
    pub workspace_id: Option<Uuid>,
    pub data: Value,
}

impl<'a> NewEvent<'a> {
    pub fn new(event_type: &'a str, entity_type: &'a str, entity_id: Uuid, data: Value) -> Self {
        Self {
            event_type,
            entity_type,
            entity_id,
            workflow_id: None,
            workspace_id: None,
            data,
        }
    }
}

#[derive(sqlx::FromRow)]
struct EventRow {
    id: i64,
    #[sqlx(rename = "type")]
    event_type: String,
    entity_type: String,
    entity_id: Uuid,
    workflow_id: Option<Uuid>,
    workspace_id: Option<Uuid>,
    actor_type: Option<String>,
    actor_id: Option<Uuid>,
    data: Json<Value>,
    created_at: DateTime<Utc>,
}

impl From<EventRow> for Event {
    fn from(row: EventRow) -> Self {
        Event {
            id: row.id,
            event_type: row.event_type,
            entity_type: row.entity_type,
            entity_id: row.entity_id,
            workflow_id: row.workflow_id,
            workspace_id: row.workspace_id,
            actor_type: row.actor_type,
            actor_id: row.actor_id,
            data: row.data.0,
            created_at: row.created_at.into(),
        }
    }
}

/// Appends an event in `tx`, acted by `caller` in the caller's tenant, and
/// queues it for publication when `tx` commits.
pub(crate) async fn record(
    tx: &mut Tx,
    caller: &Caller,
    tenant_id: Uuid,
    event: NewEvent<'_>,
) -> Result<Event> {
    let now = Timestamp::now().as_datetime();
    let row: EventRow = on_db!(tx, c => sqlx::query_as(
        "INSERT INTO events (tenant_id, type, entity_type, entity_id, workflow_id, workspace_id, \
         actor_type, actor_id, data, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
         RETURNING id, type, entity_type, entity_id, workflow_id, workspace_id, actor_type, actor_id, data, created_at",
    )
    .bind(tenant_id)
    .bind(event.event_type)
    .bind(event.entity_type)
    .bind(event.entity_id)
    .bind(event.workflow_id)
    .bind(event.workspace_id)
    .bind(caller.owner_type.clone())
    .bind(caller.owner_id.or(Some(caller.key_id)))
    .bind(Json(&event.data))
    .bind(now)
    .fetch_one(c)
    .await)?;
    let event = Event::from(row);
    tx.publish_after_commit(event.clone());
    Ok(event)
}

/// Events about a workspace (`workspace_id` set), newest first, and how
/// many there are.
pub(crate) async fn list_for_workspace(
    access: &mut impl crate::store::Access,
    tenant_id: Uuid,
    workspace_id: Uuid,
    limit: i64,
    offset: i64,
) -> Result<(Vec<Event>, i64)> {
    let (total,): (i64,) = on_db!(access, c => sqlx::query_as(
        "SELECT COUNT(*) FROM events WHERE tenant_id = $1 AND workspace_id = $2",
    )
    .bind(tenant_id)
    .bind(workspace_id)
    .fetch_one(c)
    .await)?;
    let rows: Vec<EventRow> = on_db!(access, c => sqlx::query_as(
        "SELECT id, type, entity_type, entity_id, workflow_id, workspace_id, actor_type, actor_id, data, created_at \
         FROM events WHERE tenant_id = $1 AND workspace_id = $2 ORDER BY id DESC LIMIT $3 OFFSET $4",
    )
    .bind(tenant_id)
    .bind(workspace_id)
    .bind(limit)
    .bind(offset)
    .fetch_all(c)
    .await)?;
    Ok((rows.into_iter().map(Event::from).collect(), total))
}
