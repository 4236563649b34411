//! The `workflows` table: the row, reads (for change), and state changes
//! with their `workflow.state_changed` event.

use crate::api::{InitialInputPacket, LiveVisibilityMode, Workflow, WorkflowState};
use crate::caller::Caller;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::store::StoredJson;
use crate::store::{Access, Tx, on_db};
use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::types::Json;
use std::collections::BTreeMap;
use uuid::Uuid;

#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct WorkflowRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub workspace_id: Uuid,
    pub playbook_id: Uuid,
    pub name: String,
    pub state: String,
    pub lifecycle: String,
    pub operator_note: Option<String>,
    pub parameters: Json<BTreeMap<String, String>>,
    pub metadata: StoredJson,
    pub token_budget: Option<f64>,
    pub cost_cap_usd: Option<f64>,
    pub max_duration_minutes: Option<f64>,
    pub live_visibility_mode: String,
    pub initial_input_packet: Option<Json<InitialInputPacket>>,
    pub lineage_id: Uuid,
    pub attempt_number: i32,
    pub attempt_kind: String,
    pub redrive_of: Option<Uuid>,
    pub completed_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl WorkflowRow {
    pub fn state(&self) -> WorkflowState {
        WorkflowState::parse(&self.state).unwrap_or(WorkflowState::Pending)
    }

    pub fn to_api(&self) -> Workflow {
        Workflow {
            id: self.id,
            workspace_id: self.workspace_id,
            playbook_id: self.playbook_id,
            name: self.name.clone(),
            state: self.state(),
            lifecycle: self.lifecycle.clone(),
            operator_note: self.operator_note.clone(),
            parameters: self.parameters.0.clone(),
            token_budget: self.token_budget,
            cost_cap_usd: self.cost_cap_usd,
            max_duration_minutes: self.max_duration_minutes,
            metadata: self.metadata.0.clone(),
            live_visibility_mode: if self.live_visibility_mode == "enhanced" {
                LiveVisibilityMode::Enhanced
            } else {
                LiveVisibilityMode::Standard
            },
            initial_input_packet: self.initial_input_packet.as_ref().map(|j| j.0.clone()),
            lineage_id: self.lineage_id,
            attempt_number: i64::from(self.attempt_number),
            attempt_kind: self.attempt_kind.clone(),
            redrive_of: self.redrive_of,
            completed_at: self.completed_at.map(Into::into),
            created_at: self.created_at.into(),
            updated_at: self.updated_at.into(),
        }
    }
}

macro_rules! workflow_columns {
    () => {
        "w.id, w.tenant_id, w.workspace_id, w.playbook_id, w.name, w.state, w.lifecycle, w.operator_note, \
         w.parameters, w.metadata, w.token_budget, w.cost_cap_usd, w.max_duration_minutes, \
         w.live_visibility_mode, w.initial_input_packet, w.lineage_id, w.attempt_number, w.attempt_kind, \
         w.redrive_of, w.completed_at, w.created_at, w.updated_at"
    };
}

pub(crate) async fn find(
    access: &mut impl Access,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<Option<WorkflowRow>> {
    Ok(on_db!(access, c => sqlx::query_as(concat!(
        "SELECT ", workflow_columns!(), " FROM workflows w WHERE w.id = $1 AND w.tenant_id = $2"
    ))
    .bind(id)
    .bind(tenant_id)
    .fetch_optional(c)
    .await)?)
}

/// Reads a workflow for change (locked on PostgreSQL).
pub(crate) async fn find_for_update(tx: &mut Tx, tenant_id: Uuid, id: Uuid) -> Result<WorkflowRow> {
    let row: Option<WorkflowRow> = on_db!(tx, c =>
        sqlite: sqlx::query_as(concat!("SELECT ", workflow_columns!(), " FROM workflows w WHERE w.id = $1 AND w.tenant_id = $2"))
            .bind(id).bind(tenant_id).fetch_optional(c).await,
        postgres: sqlx::query_as(concat!("SELECT ", workflow_columns!(), " FROM workflows w WHERE w.id = $1 AND w.tenant_id = $2 FOR UPDATE"))
            .bind(id).bind(tenant_id).fetch_optional(c).await,
    )?;
    row.ok_or(Error::not_found("workflow"))
}

/// Sets a workflow's state (with its event) when it is still `from`.
pub(crate) async fn set_state(
    tx: &mut Tx,
    caller: &Caller,
    wf: &WorkflowRow,
    from: WorkflowState,
    to: WorkflowState,
    reason: &str,
) -> Result<bool> {
    let now = tx.now().as_datetime();
    let completed_at = to.is_terminal().then_some(now);
    let changed = on_db!(tx, c => sqlx::query(
        "UPDATE workflows SET state = $1, updated_at = $2, completed_at = COALESCE($3, completed_at) WHERE id = $4 AND state = $5",
    )
    .bind(to.as_str())
    .bind(now)
    .bind(completed_at)
    .bind(wf.id)
    .bind(from.as_str())
    .execute(c).await.map(|r| r.rows_affected()))?;
    if changed == 0 {
        return Ok(false);
    }
    let mut event = NewEvent::new(
        "workflow.state_changed",
        "workflow",
        wf.id,
        json!({ "workflow_id": wf.id, "from_state": from.as_str(), "to_state": to.as_str(), "reason": reason }),
    );
    event.workflow_id = Some(wf.id);
    event.workspace_id = Some(wf.workspace_id);
    events::record(tx, caller, wf.tenant_id, event).await?;
    if to == WorkflowState::Completed {
        on_db!(tx, c => sqlx::query("UPDATE workflow_stages SET status = 'completed', completed_at = COALESCE(completed_at, $1) WHERE workflow_id = $2")
            .bind(now).bind(wf.id).execute(c).await.map(|r| r.rows_affected()))?;
    }
    Ok(true)
}

/// Opens a workflow that its tasks had settled as `failed` again: back to
/// `in_progress` (a task that failed had been claimed), its end time
/// cleared; `false` when it was not failed.
pub(crate) async fn reopen(
    tx: &mut Tx,
    caller: &Caller,
    wf: &WorkflowRow,
    reason: &str,
) -> Result<bool> {
    if wf.state() != WorkflowState::Failed {
        return Ok(false);
    }
    let to = WorkflowState::InProgress;
    let changed = set_state(tx, caller, wf, WorkflowState::Failed, to, reason).await?;
    if changed {
        on_db!(tx, c => sqlx::query("UPDATE workflows SET completed_at = NULL WHERE id = $1")
            .bind(wf.id).execute(c).await.map(|r| r.rows_affected()))?;
    }
    Ok(changed)
}

pub(crate) use workflow_columns;
