//! Work items: `POST/GET /workflows/:id/work-items`,
//! `GET/PATCH /workflows/:id/work-items/:work_item_id`. Columns are
//! `inbox` (default), `active`, `blocked` and `done`; moving to `done` sets
//! `completed_at`, moving out clears it. A work item whose stage names a
//! pending stage activates that stage.

use super::rows::{find, find_for_update};
use crate::api::{CreateWorkItem, Priority, UpdateWorkItem, WorkItem};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Storage, begin_write};
use crate::store::StoredJson;
use crate::store::{Access, Tx, on_db};
use crate::tasks::TaskRow;
use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::types::Json;
use uuid::Uuid;

/// The board's columns, in order, with their titles.
pub(crate) const COLUMNS: [(&str, &str); 4] = [
    ("inbox", "Inbox"),
    ("active", "Active"),
    ("blocked", "Blocked"),
    ("done", "Done"),
];

#[derive(Debug, Clone, sqlx::FromRow)]
struct WorkItemRow {
    id: Uuid,
    workflow_id: Uuid,
    title: String,
    goal: Option<String>,
    stage_name: Option<String>,
    column_id: String,
    priority: String,
    metadata: StoredJson,
    completed_at: Option<DateTime<Utc>>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

const COLS: &str = "id, workflow_id, title, goal, stage_name, column_id, priority, metadata, completed_at, created_at, updated_at";

impl WorkItemRow {
    fn to_api(&self) -> WorkItem {
        WorkItem {
            id: self.id,
            workflow_id: self.workflow_id,
            title: self.title.clone(),
            goal: self.goal.clone(),
            stage_name: self.stage_name.clone(),
            column_id: self.column_id.clone(),
            priority: self.priority.clone(),
            metadata: self.metadata.0.clone(),
            completed_at: self.completed_at.map(Into::into),
            created_at: self.created_at.into(),
            updated_at: self.updated_at.into(),
        }
    }
}

fn check_column(column: &str) -> Result<()> {
    if COLUMNS.iter().any(|(c, _)| *c == column) {
        Ok(())
    } else {
        Err(Error::invalid_field(
            "column_id",
            "must be inbox, active, blocked or done",
        ))
    }
}

pub(crate) async fn list_in(access: &mut impl Access, workflow_id: Uuid) -> Result<Vec<WorkItem>> {
    let sql =
        format!("SELECT {COLS} FROM work_items WHERE workflow_id = $1 ORDER BY created_at, id");
    let rows: Vec<WorkItemRow> = on_db!(access, c => sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
        .bind(workflow_id).fetch_all(c).await)?;
    Ok(rows.iter().map(WorkItemRow::to_api).collect())
}

async fn find_item(access: &mut impl Access, workflow_id: Uuid, id: Uuid) -> Result<WorkItemRow> {
    let sql = format!("SELECT {COLS} FROM work_items WHERE id = $1 AND workflow_id = $2");
    let row: Option<WorkItemRow> = on_db!(access, c => sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
        .bind(id).bind(workflow_id).fetch_optional(c).await)?;
    row.ok_or(Error::not_found("work item"))
}

async fn record(
    tx: &mut Tx,
    caller: &Caller,
    tenant_id: Uuid,
    workspace_id: Uuid,
    item: &WorkItemRow,
    event_type: &str,
) -> Result<()> {
    let mut event = NewEvent::new(
        event_type,
        "work_item",
        item.id,
        json!({
            "work_item_id": item.id, "title": item.title, "stage_name": item.stage_name, "column_id": item.column_id,
        }),
    );
    event.workflow_id = Some(item.workflow_id);
    event.workspace_id = Some(workspace_id);
    events::record(tx, caller, tenant_id, event).await?;
    Ok(())
}

/// The workflow's current stage: its first active one (by position), where
/// a work item created without `stage_name` goes; `None` when no stage is
/// active (a workflow without stages, or every stage done).
async fn current_stage(tx: &mut Tx, workflow_id: Uuid) -> Result<Option<String>> {
    let row: Option<(String,)> = on_db!(tx, c => sqlx::query_as(
        "SELECT name FROM workflow_stages WHERE workflow_id = $1 AND status = 'active' ORDER BY position LIMIT 1",
    )
    .bind(workflow_id)
    .fetch_optional(c)
    .await)?;
    Ok(row.map(|(name,)| name))
}

/// Activates the stage a work item names, if it is still pending.
async fn activate_stage(tx: &mut Tx, workflow_id: Uuid, stage: Option<&str>) -> Result<()> {
    if let Some(stage) = stage {
        let now = tx.now().as_datetime();
        on_db!(tx, c => sqlx::query("UPDATE workflow_stages SET status = 'active', started_at = $1 WHERE workflow_id = $2 AND name = $3 AND status = 'pending'")
            .bind(now).bind(workflow_id).bind(stage)
            .execute(c).await.map(|r| r.rows_affected()))?;
    }
    Ok(())
}

/// Moves a work item to `done` when none of its tasks is still open.
pub(crate) async fn complete_when_done(
    tx: &mut Tx,
    caller: &Caller,
    task: &TaskRow,
    work_item_id: Uuid,
) -> Result<()> {
    let (open,): (i64,) = on_db!(tx, c => sqlx::query_as(
        "SELECT COUNT(*) FROM tasks WHERE work_item_id = $1 AND state NOT IN ('completed', 'cancelled')",
    )
    .bind(work_item_id)
    .fetch_one(c)
    .await)?;
    if open > 0 {
        return Ok(());
    }
    let now = tx.now().as_datetime();
    let sql = format!(
        "UPDATE work_items SET column_id = 'done', completed_at = $1, updated_at = $1 WHERE id = $2 AND completed_at IS NULL RETURNING {COLS}"
    );
    let rows: Vec<WorkItemRow> = on_db!(tx, c => sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
        .bind(now).bind(work_item_id).fetch_all(c).await)?;
    if let Some(item) = rows.first() {
        record(
            tx,
            caller,
            task.tenant_id,
            task.workspace_id.unwrap_or_default(),
            item,
            "work_item.completed",
        )
        .await?;
    }
    Ok(())
}

impl ControlPlane {
    /// `POST /workflows/:id/work-items`.
    pub async fn create_work_item(
        &self,
        caller: &Caller,
        workflow_id: Uuid,
        request: CreateWorkItem,
    ) -> Result<WorkItem> {
        if request.title.trim().is_empty() || request.title.len() > 500 {
            return Err(Error::invalid_field("title", "must be 1 to 500 characters"));
        }
        let column = request.column_id.clone().unwrap_or_else(|| "inbox".into());
        check_column(&column)?;
        if request.metadata.as_ref().is_some_and(|m| !m.is_object()) {
            return Err(Error::schema_field("metadata", "must be a JSON object"));
        }
        let mut write = begin_write!(self, caller, "work_items.create", request, Storage::Plain);
        let tx = &mut write.tx;
        let wf = find_for_update(tx, caller.tenant_id, workflow_id).await?;
        let stage_name = match &request.stage_name {
            Some(stage) => Some(stage.clone()),
            None => current_stage(tx, workflow_id).await?,
        };
        let now = self.now().as_datetime();
        let sql = format!(
            "INSERT INTO work_items (id, tenant_id, workflow_id, title, goal, stage_name, column_id, priority, metadata, completed_at, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11) RETURNING {COLS}"
        );
        let row: WorkItemRow = on_db!(tx, c => sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
            .bind(Uuid::now_v7())
            .bind(caller.tenant_id)
            .bind(workflow_id)
            .bind(request.title.trim())
            .bind(&request.goal)
            .bind(&stage_name)
            .bind(&column)
            .bind(request.priority.unwrap_or(Priority::Normal).as_str())
            .bind(Json(request.metadata.clone().unwrap_or_else(|| json!({}))))
            .bind((column == "done").then_some(now))
            .bind(now)
            .fetch_one(c)
            .await)?;
        activate_stage(tx, workflow_id, row.stage_name.as_deref()).await?;
        record(
            tx,
            caller,
            caller.tenant_id,
            wf.workspace_id,
            &row,
            "work_item.created",
        )
        .await?;
        let item = row.to_api();
        write.finish(item).await
    }

    /// `GET /workflows/:id/work-items`: oldest first.
    pub async fn list_work_items(
        &self,
        caller: &Caller,
        workflow_id: Uuid,
    ) -> Result<Vec<WorkItem>> {
        let mut conn = self.store().read().await?;
        find(&mut conn, caller.tenant_id, workflow_id)
            .await?
            .ok_or(Error::not_found("workflow"))?;
        list_in(&mut conn, workflow_id).await
    }

    /// `GET /workflows/:id/work-items/:work_item_id`.
    pub async fn get_work_item(
        &self,
        caller: &Caller,
        workflow_id: Uuid,
        id: Uuid,
    ) -> Result<WorkItem> {
        let mut conn = self.store().read().await?;
        find(&mut conn, caller.tenant_id, workflow_id)
            .await?
            .ok_or(Error::not_found("workflow"))?;
        Ok(find_item(&mut conn, workflow_id, id).await?.to_api())
    }

    /// `PATCH /workflows/:id/work-items/:work_item_id`: at least one field.
    pub async fn update_work_item(
        &self,
        caller: &Caller,
        workflow_id: Uuid,
        id: Uuid,
        request: UpdateWorkItem,
    ) -> Result<WorkItem> {
        if request.title.is_none()
            && request.goal.is_none()
            && request.stage_name.is_none()
            && request.column_id.is_none()
            && request.priority.is_none()
            && request.metadata.is_none()
        {
            return Err(Error::validation(
                "a work item patch needs at least one field",
            ));
        }
        if let Some(column) = &request.column_id {
            check_column(column)?;
        }
        if request.title.as_ref().is_some_and(|t| t.trim().is_empty()) {
            return Err(Error::invalid_field("title", "must not be empty"));
        }
        let mut tx = self.store().begin().await?;
        let wf = find_for_update(&mut tx, caller.tenant_id, workflow_id).await?;
        let mut row = find_item(&mut tx, workflow_id, id).await?;
        let now = self.now().as_datetime();
        if let Some(t) = &request.title {
            row.title = t.trim().to_owned();
        }
        if request.goal.is_some() {
            row.goal = request.goal.clone();
        }
        if request.stage_name.is_some() {
            row.stage_name = request.stage_name.clone();
        }
        if let Some(p) = request.priority {
            row.priority = p.as_str().into();
        }
        if let Some(m) = &request.metadata {
            row.metadata = StoredJson(m.clone());
        }
        let completed_now =
            request.column_id.as_deref() == Some("done") && row.completed_at.is_none();
        if let Some(column) = &request.column_id {
            row.column_id = column.clone();
            row.completed_at = if column == "done" {
                row.completed_at.or(Some(now))
            } else {
                None
            };
        }
        row.updated_at = now;
        on_db!(&mut tx, c => sqlx::query(
            "UPDATE work_items SET title = $1, goal = $2, stage_name = $3, column_id = $4, priority = $5, metadata = $6, completed_at = $7, updated_at = $8 WHERE id = $9",
        )
        .bind(&row.title).bind(&row.goal).bind(&row.stage_name).bind(&row.column_id).bind(&row.priority)
        .bind(&row.metadata).bind(row.completed_at).bind(now).bind(id)
        .execute(c).await.map(|r| r.rows_affected()))?;
        activate_stage(&mut tx, workflow_id, row.stage_name.as_deref()).await?;
        record(
            &mut tx,
            caller,
            caller.tenant_id,
            wf.workspace_id,
            &row,
            if completed_now {
                "work_item.completed"
            } else {
                "work_item.updated"
            },
        )
        .await?;
        if completed_now {
            super::settle::settle(&mut tx, caller, caller.tenant_id, workflow_id).await?;
        }
        tx.commit().await?;
        Ok(row.to_api())
    }
}
