//! Handoffs: what one task's holder leaves for the next.

use crate::api::{CreateHandoff, Handoff};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Storage, begin_write};
use crate::store::StoredJson;
use crate::store::{Access, on_db};
use crate::tasks::acting::Acting;
use crate::tasks::rows::{find, find_for_update};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sqlx::types::Json;
use uuid::Uuid;

pub(crate) async fn latest_handoff(
    access: &mut impl Access,
    task_id: Uuid,
) -> Result<Option<Handoff>> {
    let row: Option<HandoffRow> = on_db!(access, c => sqlx::query_as(
        "SELECT id, task_id, sequence, agent_id, body, created_at FROM task_handoffs \
         WHERE task_id = $1 ORDER BY sequence DESC LIMIT 1",
    )
    .bind(task_id)
    .fetch_optional(c)
    .await)?;
    row.map(HandoffRow::into_api).transpose()
}

#[derive(sqlx::FromRow)]
struct HandoffRow {
    id: Uuid,
    task_id: Uuid,
    sequence: i32,
    agent_id: Option<Uuid>,
    body: StoredJson,
    created_at: DateTime<Utc>,
}

impl HandoffRow {
    fn into_api(self) -> Result<Handoff> {
        let body = self.body.0;
        let get = |k: &str| body.get(k).cloned().filter(|v| !v.is_null());
        Ok(Handoff {
            id: self.id,
            task_id: self.task_id,
            sequence: i64::from(self.sequence),
            agent_id: self.agent_id,
            summary: body
                .get("summary")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            changes: get("changes"),
            decisions: get("decisions"),
            remaining_items: get("remaining_items"),
            blockers: get("blockers"),
            artifacts: get("artifacts"),
            created_at: self.created_at.into(),
        })
    }
}

impl ControlPlane {
    /// `POST /tasks/:id/handoffs`: by the assignee while claimed or in progress.
    pub async fn create_handoff(
        &self,
        caller: &Caller,
        id: Uuid,
        request: CreateHandoff,
    ) -> Result<Handoff> {
        if request.summary.trim().is_empty() {
            return Err(Error::invalid_field("summary", "is required"));
        }
        let acting = Acting::resolve(caller, request.agent_id, None)?;
        let mut write = begin_write!(self, caller, "tasks.handoff", request, Storage::Plain);
        let tx = &mut write.tx;
        let row = find_for_update(tx, caller.tenant_id, id).await?;
        let state = row.state()?;
        if !state.is_held() {
            return Err(Error::InvalidTransition {
                resource: "task",
                current: state.as_str().into(),
                requested: "handoff".into(),
            });
        }
        if !acting.holds(&row) {
            return Err(Error::forbidden(
                "only the assigned agent may record a handoff",
            ));
        }
        let body = json!({
            "summary": request.summary, "changes": request.changes, "decisions": request.decisions,
            "remaining_items": request.remaining_items, "blockers": request.blockers, "artifacts": request.artifacts,
        });
        let handoff: HandoffRow = on_db!(tx, c => sqlx::query_as(
            "INSERT INTO task_handoffs (id, tenant_id, task_id, sequence, body, agent_id, created_at) \
             VALUES ($1, $2, $3, (SELECT COALESCE(MAX(sequence), 0) + 1 FROM task_handoffs WHERE task_id = $3), $4, $5, $6) \
             RETURNING id, task_id, sequence, agent_id, body, created_at",
        )
        .bind(Uuid::now_v7())
        .bind(caller.tenant_id)
        .bind(id)
        .bind(Json(&body))
        .bind(row.assigned_agent_id)
        .bind(self.now().as_datetime())
        .fetch_one(c)
        .await)?;
        let handoff = handoff.into_api()?;
        let mut event = NewEvent::new(
            "task.handoff_recorded",
            "task",
            id,
            json!({ "task_id": id, "sequence": handoff.sequence, "work_item_id": row.work_item_id, "stage_name": row.stage_name }),
        );
        event.workflow_id = row.workflow_id;
        event.workspace_id = row.workspace_id;
        events::record(tx, caller, caller.tenant_id, event).await?;
        write.finish(handoff).await
    }

    /// `GET /tasks/:id/handoffs`, oldest first.
    pub async fn list_handoffs(&self, caller: &Caller, id: Uuid) -> Result<Vec<Handoff>> {
        let mut conn = self.store().read().await?;
        find(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("task"))?;
        let rows: Vec<HandoffRow> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT id, task_id, sequence, agent_id, body, created_at FROM task_handoffs WHERE task_id = $1 ORDER BY sequence",
        )
        .bind(id)
        .fetch_all(c)
        .await)?;
        rows.into_iter().map(HandoffRow::into_api).collect()
    }
}
