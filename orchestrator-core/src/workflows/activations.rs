//! Activations: `queued → processing → completed | failed`, at most one
//! processing per workflow (a unique partial index backs it up), dispatched
//! in the transactions that make them due (see the module docs of
//! [`super`]).

use super::MAX_ACTIVATION_ATTEMPTS;
use super::rows::{WorkflowRow, find, find_for_update};
use crate::api::{Activation, Applied, EnqueueActivation, TaskState};
use crate::api::{CreateTask, TaskKind};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Begun, Storage};
use crate::store::StoredJson;
use crate::store::{Access, Tx, on_db};
use crate::tasks::create::NewTask;
use crate::tasks::{self, TaskRow};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sqlx::types::Json;
use uuid::Uuid;

#[derive(Debug, Clone, sqlx::FromRow)]
struct ActivationRow {
    id: Uuid,
    workflow_id: Uuid,
    reason: String,
    event_type: String,
    payload: StoredJson,
    status: String,
    task_id: Option<Uuid>,
    attempts: i32,
    error: Option<StoredJson>,
    started_at: Option<DateTime<Utc>>,
    completed_at: Option<DateTime<Utc>>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

const COLUMNS: &str = "id, workflow_id, reason, event_type, payload, status, task_id, attempts, error, \
    started_at, completed_at, created_at, updated_at";

impl ActivationRow {
    fn to_api(&self) -> Activation {
        Activation {
            id: self.id,
            workflow_id: self.workflow_id,
            status: self.status.clone(),
            reason: self.reason.clone(),
            event_type: self.event_type.clone(),
            payload: self.payload.0.clone(),
            task_id: self.task_id,
            attempts: i64::from(self.attempts),
            error: self.error.as_ref().map(|j| j.0.clone()),
            started_at: self.started_at.map(Into::into),
            completed_at: self.completed_at.map(Into::into),
            created_at: self.created_at.into(),
            updated_at: self.updated_at.into(),
        }
    }
}

async fn record(
    tx: &mut Tx,
    caller: &Caller,
    wf: &WorkflowRow,
    event_type: &str,
    activation_id: Uuid,
    data: Value,
) -> Result<()> {
    let mut event = NewEvent::new(event_type, "activation", activation_id, data);
    event.workflow_id = Some(wf.id);
    event.workspace_id = Some(wf.workspace_id);
    events::record(tx, caller, wf.tenant_id, event).await?;
    Ok(())
}

/// Queues an activation and dispatches it when nothing is processing.
pub(crate) async fn enqueue_in(
    tx: &mut Tx,
    caller: &Caller,
    wf: &WorkflowRow,
    reason: &str,
    event_type: &str,
    payload: Value,
) -> Result<Uuid> {
    let id = Uuid::now_v7();
    let now = tx.now().as_datetime();
    on_db!(tx, c => sqlx::query(
        "INSERT INTO activations (id, tenant_id, workflow_id, reason, event_type, payload, status, attempts, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, 'queued', 0, $7, $7)",
    )
    .bind(id)
    .bind(wf.tenant_id)
    .bind(wf.id)
    .bind(reason)
    .bind(event_type)
    .bind(Json(&payload))
    .bind(now)
    .execute(c).await.map(|r| r.rows_affected()))?;
    record(tx, caller, wf, "activation.queued", id, json!({ "activation_id": id, "status": "queued", "reason": reason, "event_type": event_type })).await?;
    dispatch_next(tx, caller, wf).await?;
    Ok(id)
}

/// Starts the oldest queued activation when none is processing: it becomes
/// `processing` and gets its orchestrator task. Call with the workflow
/// locked (or on SQLite's one writer).
pub(crate) async fn dispatch_next(tx: &mut Tx, caller: &Caller, wf: &WorkflowRow) -> Result<()> {
    if wf.state().is_terminal() {
        return Ok(());
    }
    let now = tx.now().as_datetime();
    let sql = format!(
        "UPDATE activations SET status = 'processing', started_at = $2, updated_at = $2, attempts = attempts + 1 \
         WHERE id = (SELECT id FROM activations WHERE workflow_id = $1 AND status = 'queued' ORDER BY created_at, id LIMIT 1) \
         AND NOT EXISTS (SELECT 1 FROM activations WHERE workflow_id = $1 AND status = 'processing') RETURNING {COLUMNS}"
    );
    let started: Vec<ActivationRow> = on_db!(tx, c => sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
        .bind(wf.id).bind(now).fetch_all(c).await)?;
    let Some(activation) = started.into_iter().next() else {
        return Ok(());
    };
    let request = orchestrator_task(
        wf,
        activation.id,
        &activation.reason,
        &activation.event_type,
        &activation.payload.0,
    );
    let task = tasks::create::insert(
        tx,
        caller,
        wf.tenant_id,
        NewTask {
            request,
            activation_id: Some(activation.id),
            rate_key_checked: false,
        },
        now,
    )
    .await?;
    on_db!(tx, c => sqlx::query("UPDATE activations SET task_id = $1 WHERE id = $2")
        .bind(task.id).bind(activation.id).execute(c).await.map(|r| r.rows_affected()))?;
    record(tx, caller, wf, "activation.processing", activation.id, json!({
        "activation_id": activation.id, "status": "processing", "task_id": task.id, "attempt": activation.attempts,
    })).await?;
    Ok(())
}

/// An orchestrator task of `activation_id` changed: complete, requeue or
/// fail the activation and dispatch the next one.
pub(crate) async fn after_orchestrator_task(
    tx: &mut Tx,
    caller: &Caller,
    task: &TaskRow,
    activation_id: Uuid,
    to: TaskState,
) -> Result<()> {
    let Some(workflow_id) = task.workflow_id else {
        return Ok(());
    };
    let wf = find_for_update(tx, task.tenant_id, workflow_id).await?;
    let now = tx.now().as_datetime();
    let (status, event_type) = match to {
        TaskState::Completed => ("completed", "activation.completed"),
        TaskState::Failed | TaskState::Cancelled => {
            let (attempts,): (i32,) = on_db!(tx, c => sqlx::query_as("SELECT attempts FROM activations WHERE id = $1")
                .bind(activation_id).fetch_one(c).await)?;
            if to == TaskState::Failed
                && attempts < MAX_ACTIVATION_ATTEMPTS
                && !wf.state().is_terminal()
            {
                ("queued", "activation.requeued")
            } else {
                ("failed", "activation.failed")
            }
        }
        _ => return Ok(()),
    };
    let changed = on_db!(tx, c => sqlx::query(
        "UPDATE activations SET status = $1, error = $2, updated_at = $3, \
         completed_at = CASE WHEN $1 = 'queued' THEN NULL ELSE $3 END, \
         task_id = CASE WHEN $1 = 'queued' THEN NULL ELSE task_id END \
         WHERE id = $4 AND status = 'processing'",
    )
    .bind(status)
    .bind(task.error.clone())
    .bind(now)
    .bind(activation_id)
    .execute(c).await.map(|r| r.rows_affected()))?;
    if changed == 0 {
        return Ok(());
    }
    record(tx, caller, &wf, event_type, activation_id, json!({
        "activation_id": activation_id, "status": status, "task_id": task.id, "error": task.error.as_ref().map(|e| e.0.clone()),
    })).await?;
    dispatch_next(tx, caller, &wf).await
}

/// Fails every queued or processing activation (workflow cancelled).
pub(crate) async fn fail_open(
    tx: &mut Tx,
    caller: &Caller,
    wf: &WorkflowRow,
    reason: &str,
) -> Result<()> {
    let sql = format!(
        "UPDATE activations SET status = 'failed', updated_at = $2, completed_at = $2 \
         WHERE workflow_id = $1 AND status IN ('queued', 'processing') RETURNING {COLUMNS}"
    );
    let now = tx.now().as_datetime();
    let rows: Vec<ActivationRow> = on_db!(tx, c => sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
        .bind(wf.id).bind(now).fetch_all(c).await)?;
    for row in rows {
        record(
            tx,
            caller,
            wf,
            "activation.failed",
            row.id,
            json!({ "activation_id": row.id, "status": "failed", "reason": reason }),
        )
        .await?;
    }
    Ok(())
}

pub(crate) async fn list_in(
    access: &mut impl Access,
    workflow_id: Uuid,
) -> Result<Vec<Activation>> {
    let sql =
        format!("SELECT {COLUMNS} FROM activations WHERE workflow_id = $1 ORDER BY created_at, id");
    let rows: Vec<ActivationRow> = on_db!(access, c => sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
        .bind(workflow_id).fetch_all(c).await)?;
    Ok(rows.iter().map(ActivationRow::to_api).collect())
}

impl ControlPlane {
    /// `POST /workflows/:id/activations`: `{id, applied}`; a replay of the
    /// same `request_id` answers the same id with `applied: false`.
    pub async fn enqueue_activation(
        &self,
        caller: &Caller,
        workflow_id: Uuid,
        request: EnqueueActivation,
    ) -> Result<Applied> {
        if request.payload.as_ref().is_some_and(|p| !p.is_object()) {
            return Err(Error::schema_field("payload", "must be a JSON object"));
        }
        let begun: Begun<Applied> = self
            .begin_idempotent(
                caller,
                "workflows.activations.enqueue",
                request.request_id.as_deref(),
                &(workflow_id, &request),
                Storage::Plain,
            )
            .await?;
        let mut write = match begun {
            Begun::Replayed(applied) => {
                return Ok(Applied {
                    id: applied.id,
                    applied: false,
                });
            }
            Begun::Fresh(write) => write,
        };
        let wf = find_for_update(&mut write.tx, caller.tenant_id, workflow_id).await?;
        if wf.state().is_terminal() {
            return Err(Error::InvalidTransition {
                resource: "workflow",
                current: wf.state.clone(),
                requested: "activation".into(),
            });
        }
        let id = enqueue_in(
            &mut write.tx,
            caller,
            &wf,
            request.reason.as_deref().unwrap_or("manual"),
            request.event_type.as_deref().unwrap_or("manual"),
            request.payload.clone().unwrap_or_else(|| json!({})),
        )
        .await?;
        write.finish(Applied { id, applied: true }).await
    }

    /// `GET /workflows/:id/activations`: oldest first.
    pub async fn list_activations(
        &self,
        caller: &Caller,
        workflow_id: Uuid,
    ) -> Result<Vec<Activation>> {
        let mut conn = self.store().read().await?;
        find(&mut conn, caller.tenant_id, workflow_id)
            .await?
            .ok_or(Error::not_found("workflow"))?;
        list_in(&mut conn, workflow_id).await
    }
}

/// The orchestrator task an activation creates.
pub(crate) fn orchestrator_task(
    wf: &WorkflowRow,
    activation_id: Uuid,
    reason: &str,
    event_type: &str,
    payload: &Value,
) -> CreateTask {
    CreateTask {
        title: format!("Orchestrate {}: {}", wf.name, reason),
        task_type: "orchestration".into(),
        task_kind: Some(TaskKind::Orchestrator),
        description: Some(format!(
            "Activation {event_type} of workflow {}: {reason}",
            wf.name
        )),
        workflow_id: Some(wf.id),
        workspace_id: Some(wf.workspace_id),
        input: Some(json!({
            "activation_id": activation_id, "reason": reason, "event_type": event_type, "payload": payload,
            "workflow_id": wf.id, "playbook_id": wf.playbook_id,
        })),
        ..Default::default()
    }
}
