//! `GET /workflows/:id/events`: the workflow's events, oldest first, after
//! a cursor. `types` is a comma-separated list (or one
//! `event_type`); `work_item_id`, `stage_name`, `activation_id` and
//! `gate_id` match the same keys in the event's data. `limit` defaults to 50
//! and is clamped to 1..=500.

use super::rows::find;
use crate::api::{Event, EventFeed, WorkflowEventQuery};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::store::StoredJson;
use crate::store::on_db;
use chrono::{DateTime, Utc};
use uuid::Uuid;

pub const DEFAULT_LIMIT: i64 = 50;
pub const MAX_LIMIT: i64 = 500;

#[derive(sqlx::FromRow)]
struct FeedRow {
    id: i64,
    #[sqlx(rename = "type")]
    event_type: String,
    entity_type: String,
    entity_id: Uuid,
    workflow_id: Option<Uuid>,
    workspace_id: Option<Uuid>,
    actor_type: Option<String>,
    actor_id: Option<Uuid>,
    data: StoredJson,
    created_at: DateTime<Utc>,
}

macro_rules! feed_sql {
    ($field:literal) => {
        concat!(
            "SELECT id, type, entity_type, entity_id, workflow_id, workspace_id, actor_type, actor_id, data, created_at \
             FROM events WHERE tenant_id = $1 AND workflow_id = $2 AND id > $3 \
             AND ($4 IS NULL OR ',' || $4 || ',' LIKE '%,' || type || ',%') \
             AND ($5 IS NULL OR entity_type = $5) AND ($6 IS NULL OR entity_id = $6) \
             AND ($7 IS NULL OR ", $field, "'work_item_id') = $7) \
             AND ($8 IS NULL OR ", $field, "'stage_name') = $8) \
             AND ($9 IS NULL OR ", $field, "'activation_id') = $9) \
             AND ($10 IS NULL OR ", $field, "'gate_id') = $10) \
             ORDER BY id LIMIT $11"
        )
    };
}

impl ControlPlane {
    /// `GET /workflows/:id/events`: one page of the workflow's events after
    /// the query's cursor, narrowed by its filters (module docs); 404 when
    /// the workflow is not the caller's tenant's.
    pub async fn workflow_events(
        &self,
        caller: &Caller,
        workflow_id: Uuid,
        query: WorkflowEventQuery,
    ) -> Result<EventFeed> {
        let limit = query.limit.unwrap_or(DEFAULT_LIMIT);
        if limit < 1 {
            return Err(Error::invalid_field("limit", "must be a positive integer"));
        }
        let limit = limit.min(MAX_LIMIT);
        let after = query.after.unwrap_or(0);
        let mut conn = self.store().read().await?;
        find(&mut conn, caller.tenant_id, workflow_id)
            .await?
            .ok_or(Error::not_found("workflow"))?;
        let types = query
            .types
            .clone()
            .or(query.event_type.clone())
            .map(|t| {
                t.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .filter(|t| !t.is_empty());
        let text = |id: Option<Uuid>| id.map(|u| u.to_string());
        macro_rules! run {
            ($c:expr, $sql:expr) => {
                sqlx::query_as::<_, FeedRow>($sql)
                    .bind(caller.tenant_id)
                    .bind(workflow_id)
                    .bind(after)
                    .bind(types.as_deref())
                    .bind(query.entity_type.as_deref())
                    .bind(query.entity_id)
                    .bind(text(query.work_item_id))
                    .bind(query.stage_name.as_deref())
                    .bind(text(query.activation_id))
                    .bind(query.gate_id.as_deref())
                    .bind(limit + 1)
                    .fetch_all($c)
                    .await
            };
        }
        let mut rows: Vec<FeedRow> = on_db!(&mut conn, c =>
            sqlite: run!(c, feed_sql!("json_extract(data, '$.' || ")),
            postgres: run!(c, feed_sql!("(data ->> ")),
        )?;
        let has_more = rows.len() as i64 > limit;
        rows.truncate(limit as usize);
        let events: Vec<Event> = rows
            .into_iter()
            .map(|r| Event {
                id: r.id,
                event_type: r.event_type,
                entity_type: r.entity_type,
                entity_id: r.entity_id,
                workflow_id: r.workflow_id,
                workspace_id: r.workspace_id,
                actor_type: r.actor_type,
                actor_id: r.actor_id,
                data: r.data.0,
                created_at: r.created_at.into(),
            })
            .collect();
        // Always a position to resume from: the last id on the page, or the
        // `after` given when the page is empty.
        let next_after = Some(events.last().map_or(after.max(0), |e| e.id).to_string());
        Ok(EventFeed {
            events,
            next_after,
            has_more,
        })
    }
}
