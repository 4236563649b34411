//! Workflows: launch, reads, redrives, pause/resume/cancel, the derived
//! workflow state, stages, work items, activations and the event feed
//! (decisions §6, §7).
//!
//! The derived state is computed in the transaction of the task change that
//! causes it ([`after_task_change`]): `pending → in_progress` when any task is
//! claimed; `completed` (lifecycle `planned` only) when the workflow has at
//! least one task, every task is completed or cancelled and every work item is
//! done; `failed` when a task fails with no retry left and nothing else is
//! open. `ongoing` workflows never complete by themselves.
//!
//! Activations dispatch without a poller: enqueuing one when none is
//! processing starts it in the same transaction (it becomes `processing` and
//! creates its orchestrator task); when that task completes the activation
//! completes and the next queued one starts; when it fails (no retry left)
//! the activation returns to `queued` with the error and is started again,
//! up to [`MAX_ACTIVATION_ATTEMPTS`] times, after which it is `failed`.
//! A work item moves to `done` when its last open task completes.

mod activations;
mod feed;
pub mod operations;
mod refs;
mod work_items;

pub(crate) use refs::{PlaybookRef, lookup_playbook, lookup_workspace};

use crate::api::{
    Applied, Board, BoardColumn, CreateTask, CreateWorkflow, InheritancePolicy, InitialInputPacket,
    LiveVisibilityMode, Page, PageRequest, PlanningWorkflow, RedriveWorkflow, Task, TaskContext,
    TaskKind, TaskState, Timestamp, WorkItemSummary, Workflow, WorkflowAction, WorkflowDetail,
    WorkflowFilter, WorkflowListItem, WorkflowStage, WorkflowState,
};
use crate::auth::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Begun, Storage, begin_write};
use crate::store::{Access, Tx, on_db};
use crate::tasks::{self, TaskRow, task_columns};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sqlx::types::Json;
use std::collections::BTreeMap;
use uuid::Uuid;

/// How often an activation is retried before it is `failed`.
pub const MAX_ACTIVATION_ATTEMPTS: i32 = 3;

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
    pub metadata: Json<Value>,
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

macro_rules! workflow_columns {
    () => {
        "w.id, w.tenant_id, w.workspace_id, w.playbook_id, w.name, w.state, w.lifecycle, w.operator_note, \
         w.parameters, w.metadata, w.token_budget, w.cost_cap_usd, w.max_duration_minutes, \
         w.live_visibility_mode, w.initial_input_packet, w.lineage_id, w.attempt_number, w.attempt_kind, \
         w.redrive_of, w.completed_at, w.created_at, w.updated_at"
    };
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

/// Operator operations on a workflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkflowOp {
    Pause,
    Resume,
    Cancel,
}

/// Where an operator operation takes a workflow; anything else is 409
/// `INVALID_STATE_TRANSITION`. Resume returns to `in_progress` (or
/// `pending` when nothing was ever claimed, decided by the caller).
pub fn workflow_transition(op: WorkflowOp, from: WorkflowState) -> Result<WorkflowState> {
    use WorkflowState::*;
    match (op, from) {
        (WorkflowOp::Pause, Pending | InProgress) => Ok(Paused),
        (WorkflowOp::Resume, Paused) => Ok(InProgress),
        (WorkflowOp::Cancel, s) if !s.is_terminal() => Ok(Cancelled),
        _ => Err(Error::InvalidTransition {
            resource: "workflow",
            current: from.as_str().into(),
            requested: match op {
                WorkflowOp::Pause => Paused,
                WorkflowOp::Resume => InProgress,
                WorkflowOp::Cancel => Cancelled,
            }
            .as_str()
            .into(),
        }),
    }
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
    let now = Timestamp::now().as_datetime();
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

/// The workflow consequences of a task going `from → to`, in the task's
/// transaction (see the module docs).
pub(crate) async fn after_task_change(
    tx: &mut Tx,
    caller: &Caller,
    task: &TaskRow,
    from: TaskState,
    to: TaskState,
) -> Result<()> {
    let Some(workflow_id) = task.workflow_id else {
        return Ok(());
    };
    if to == TaskState::Claimed {
        let changed = on_db!(tx, c => sqlx::query(
            "UPDATE workflows SET state = 'in_progress', updated_at = $1 WHERE id = $2 AND state = 'pending'",
        )
        .bind(Timestamp::now().as_datetime())
        .bind(workflow_id)
        .execute(c).await.map(|r| r.rows_affected()))?;
        if changed == 1 {
            let mut event = NewEvent::new(
                "workflow.state_changed",
                "workflow",
                workflow_id,
                json!({ "workflow_id": workflow_id, "from_state": "pending", "to_state": "in_progress", "reason": "task claimed", "task_id": task.id }),
            );
            event.workflow_id = Some(workflow_id);
            event.workspace_id = task.workspace_id;
            events::record(tx, caller, task.tenant_id, event).await?;
        }
        return Ok(());
    }
    if from == to {
        return Ok(());
    }
    let terminal = matches!(
        to,
        TaskState::Completed | TaskState::Cancelled | TaskState::Failed
    );
    // Serialises the workflow's terminal task changes, so the last two
    // tasks finishing at once cannot both miss each other (PostgreSQL;
    // SQLite's one writer already serialises).
    let mut locked = match terminal {
        true => Some(find_for_update(tx, task.tenant_id, workflow_id).await?),
        false => None,
    };
    if let Some(activation_id) = task.activation_id {
        activations::after_orchestrator_task(tx, caller, task, activation_id, to).await?;
        // It may have changed the workflow: read it again below.
        locked = None;
    }
    if to == TaskState::Completed
        && let Some(work_item_id) = task.work_item_id
    {
        work_items::complete_when_done(tx, caller, task, work_item_id).await?;
    }
    if terminal {
        // The locked row is still current (a work item's completion does
        // not touch the workflow row): no second read.
        let wf = match locked {
            Some(wf) => Some(wf),
            None => find(tx, task.tenant_id, workflow_id).await?,
        };
        settle_row(tx, caller, wf, to == TaskState::Failed).await?;
    }
    Ok(())
}

/// Completes or fails the workflow when its tasks say so.
pub(crate) async fn settle(
    tx: &mut Tx,
    caller: &Caller,
    tenant_id: Uuid,
    workflow_id: Uuid,
    a_task_failed: bool,
) -> Result<()> {
    let wf = find(tx, tenant_id, workflow_id).await?;
    settle_row(tx, caller, wf, a_task_failed).await
}

/// [`settle`] with the workflow row already read in `tx`.
async fn settle_row(
    tx: &mut Tx,
    caller: &Caller,
    wf: Option<WorkflowRow>,
    a_task_failed: bool,
) -> Result<()> {
    let Some(wf) = wf else {
        return Ok(());
    };
    let workflow_id = wf.id;
    let state = wf.state();
    if state.is_terminal() || state == WorkflowState::Paused {
        return Ok(());
    }
    let (total, done, failed): (i64, Option<i64>, Option<i64>) = on_db!(tx, c => sqlx::query_as(
        "SELECT COUNT(*), SUM(CASE WHEN state IN ('completed', 'cancelled') THEN 1 ELSE 0 END), \
         SUM(CASE WHEN state = 'failed' THEN 1 ELSE 0 END) FROM tasks WHERE workflow_id = $1",
    )
    .bind(workflow_id)
    .fetch_one(c)
    .await)?;
    let (done, failed) = (done.unwrap_or(0), failed.unwrap_or(0));
    if total == 0 || done + failed < total {
        return Ok(());
    }
    if failed > 0 {
        if a_task_failed {
            set_state(
                tx,
                caller,
                &wf,
                state,
                WorkflowState::Failed,
                "a task failed with no retry left",
            )
            .await?;
        }
        return Ok(());
    }
    if wf.lifecycle != "planned" {
        return Ok(());
    }
    let (open_items, open_activations): (i64, i64) = on_db!(tx, c => sqlx::query_as(
        "SELECT (SELECT COUNT(*) FROM work_items WHERE workflow_id = $1 AND completed_at IS NULL), \
                (SELECT COUNT(*) FROM activations WHERE workflow_id = $1 AND status IN ('queued', 'processing'))",
    )
    .bind(workflow_id)
    .fetch_one(c)
    .await)?;
    if open_items == 0 && open_activations == 0 {
        set_state(
            tx,
            caller,
            &wf,
            state,
            WorkflowState::Completed,
            "every task and work item is done",
        )
        .await?;
    }
    Ok(())
}

/// Stages from a playbook definition: `definition.stages[].name` (and `goal`).
fn stages_of(definition: &Value) -> Vec<(String, Option<String>)> {
    definition
        .get("stages")
        .and_then(Value::as_array)
        .map(|stages| {
            stages
                .iter()
                .filter_map(|s| {
                    let name = s
                        .get("name")
                        .and_then(Value::as_str)
                        .or_else(|| s.as_str())?;
                    let goal = s.get("goal").and_then(Value::as_str).map(str::to_owned);
                    Some((name.to_owned(), goal))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Everything a new workflow row holds.
struct NewWorkflow {
    workspace_id: Uuid,
    playbook: PlaybookRef,
    name: String,
    operator_note: Option<String>,
    parameters: BTreeMap<String, String>,
    metadata: Value,
    budget: crate::api::Budget,
    live_visibility_mode: LiveVisibilityMode,
    initial_input_packet: Option<InitialInputPacket>,
    lineage_id: Option<Uuid>,
    attempt_number: i32,
    attempt_kind: &'static str,
    redrive_of: Option<Uuid>,
    activation_reason: &'static str,
}

fn validate_packet(packet: Option<&InitialInputPacket>, field: &str) -> Result<()> {
    use base64::Engine;
    for (i, file) in packet
        .and_then(|p| p.files.as_ref())
        .into_iter()
        .flatten()
        .enumerate()
    {
        if file.file_name.trim().is_empty() {
            return Err(Error::invalid_field(
                &format!("{field}.files.{i}.file_name"),
                "is required",
            ));
        }
        if base64::engine::general_purpose::STANDARD
            .decode(&file.content_base64)
            .is_err()
        {
            return Err(Error::invalid_field(
                &format!("{field}.files.{i}.content_base64"),
                "must be base64",
            ));
        }
    }
    if packet
        .and_then(|p| p.structured_inputs.as_ref())
        .is_some_and(|v| !v.is_object())
    {
        return Err(Error::invalid_field(
            &format!("{field}.structured_inputs"),
            "must be a JSON object",
        ));
    }
    Ok(())
}

/// Inserts a workflow with its stages and its `workflow.created` activation
/// (dispatched at once), in `tx`.
async fn insert(tx: &mut Tx, caller: &Caller, new: NewWorkflow) -> Result<WorkflowRow> {
    let id = Uuid::new_v4();
    let now = Timestamp::now().as_datetime();
    let lifecycle = new.playbook.lifecycle.clone();
    on_db!(tx, c => sqlx::query(
        "INSERT INTO workflows (id, tenant_id, workspace_id, playbook_id, name, state, lifecycle, operator_note, \
         parameters, metadata, token_budget, cost_cap_usd, max_duration_minutes, live_visibility_mode, \
         initial_input_packet, lineage_id, attempt_number, attempt_kind, redrive_of, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $19)",
    )
    .bind(id)
    .bind(caller.tenant_id)
    .bind(new.workspace_id)
    .bind(new.playbook.id)
    .bind(new.name.trim())
    .bind(&lifecycle)
    .bind(&new.operator_note)
    .bind(Json(&new.parameters))
    .bind(Json(&new.metadata))
    .bind(new.budget.token_budget)
    .bind(new.budget.cost_cap_usd)
    .bind(new.budget.max_duration_minutes)
    .bind(match new.live_visibility_mode { LiveVisibilityMode::Enhanced => "enhanced", LiveVisibilityMode::Standard => "standard" })
    .bind(new.initial_input_packet.as_ref().map(Json))
    .bind(new.lineage_id.unwrap_or(id))
    .bind(new.attempt_number)
    .bind(new.attempt_kind)
    .bind(new.redrive_of)
    .bind(now)
    .execute(c)
    .await
    .map(|r| r.rows_affected()))?;
    let row = find(tx, caller.tenant_id, id)
        .await?
        .ok_or(Error::not_found("workflow"))?;
    for (position, (name, goal)) in stages_of(&new.playbook.definition).into_iter().enumerate() {
        let status = if position == 0 { "active" } else { "pending" };
        on_db!(tx, c => sqlx::query(
            "INSERT INTO workflow_stages (workflow_id, position, name, goal, status, started_at) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(id)
        .bind(position as i32)
        .bind(&name)
        .bind(&goal)
        .bind(status)
        .bind((position == 0).then_some(now))
        .execute(c).await.map(|r| r.rows_affected()))?;
    }
    let mut event = NewEvent::new(
        "workflow.created",
        "workflow",
        id,
        json!({ "workflow_id": id, "name": row.name, "playbook_id": new.playbook.id, "state": "pending",
                "attempt_number": new.attempt_number, "attempt_kind": new.attempt_kind, "redrive_of": new.redrive_of }),
    );
    event.workflow_id = Some(id);
    event.workspace_id = Some(new.workspace_id);
    events::record(tx, caller, caller.tenant_id, event).await?;
    activations::enqueue_in(
        tx,
        caller,
        &row,
        new.activation_reason,
        "workflow.created",
        json!({ "workflow_id": id, "name": row.name }),
    )
    .await?;
    Ok(row)
}

impl ControlPlane {
    /// `POST /workflows`: the playbook and workspace must exist in the tenant.
    pub async fn create_workflow(
        &self,
        caller: &Caller,
        request: CreateWorkflow,
    ) -> Result<Workflow> {
        if request.name.trim().is_empty() || request.name.len() > 200 {
            return Err(Error::invalid_field("name", "must be 1 to 200 characters"));
        }
        if request.metadata.as_ref().is_some_and(|m| !m.is_object()) {
            return Err(Error::invalid_field("metadata", "must be a JSON object"));
        }
        validate_packet(
            request.initial_input_packet.as_ref(),
            "initial_input_packet",
        )?;
        let mut write = begin_write!(self, caller, "workflows.create", request, Storage::Plain);
        let playbook = lookup_playbook(&mut write.tx, caller.tenant_id, request.playbook_id)
            .await?
            .ok_or_else(|| Error::invalid_field("playbook_id", "no such playbook"))?;
        lookup_workspace(&mut write.tx, caller.tenant_id, request.workspace_id)
            .await?
            .ok_or_else(|| Error::invalid_field("workspace_id", "no such workspace"))?;
        let row = insert(
            &mut write.tx,
            caller,
            NewWorkflow {
                workspace_id: request.workspace_id,
                playbook,
                name: request.name.clone(),
                operator_note: request.operator_note.clone(),
                parameters: request.parameters.clone().unwrap_or_default(),
                metadata: request.metadata.clone().unwrap_or_else(|| json!({})),
                budget: request.budget.clone().unwrap_or_default(),
                live_visibility_mode: request.live_visibility_mode.unwrap_or_default(),
                initial_input_packet: request.initial_input_packet.clone(),
                lineage_id: None,
                attempt_number: 1,
                attempt_kind: "initial",
                redrive_of: None,
                activation_reason: "workflow created",
            },
        )
        .await?;
        let workflow = row.to_api();
        write.finish(workflow).await
    }

    /// `POST /workspaces/:id/planning-workflow`: launches `playbook_id` (or,
    /// when absent, the tenant's newest active playbook) for the workspace,
    /// with the brief as `initial_input_packet.summary`.
    pub async fn planning_workflow(
        &self,
        caller: &Caller,
        workspace_id: Uuid,
        request: PlanningWorkflow,
    ) -> Result<Workflow> {
        if request.brief.trim().is_empty() {
            return Err(Error::invalid_field("brief", "is required"));
        }
        let mut conn = self.store().read().await?;
        lookup_workspace(&mut conn, caller.tenant_id, workspace_id)
            .await?
            .ok_or(Error::not_found("workspace"))?;
        let playbook_id = match request.playbook_id {
            Some(id) => id,
            None => refs::newest_active_playbook(&mut conn, caller.tenant_id)
                .await?
                .ok_or_else(|| {
                    Error::invalid_field(
                        "playbook_id",
                        "no active playbook exists; create one or name one",
                    )
                })?,
        };
        drop(conn);
        self.create_workflow(
            caller,
            CreateWorkflow {
                request_id: request.request_id.clone(),
                playbook_id,
                workspace_id,
                name: request.name.clone(),
                initial_input_packet: Some(InitialInputPacket {
                    summary: Some(request.brief.clone()),
                    structured_inputs: None,
                    files: None,
                }),
                metadata: Some(json!({ "planning": true })),
                ..Default::default()
            },
        )
        .await
    }

    /// `GET /workflows`: newest first, with names, task counts and the work
    /// item summary (grouped queries, one each per page).
    pub async fn list_workflows(
        &self,
        caller: &Caller,
        filter: WorkflowFilter,
        page: PageRequest,
    ) -> Result<Page<WorkflowListItem>> {
        self.list_workflow_items(caller, filter, ListExtra::default(), page)
            .await
    }

    pub(crate) async fn list_workflow_items(
        &self,
        caller: &Caller,
        filter: WorkflowFilter,
        extra: ListExtra,
        page: PageRequest,
    ) -> Result<Page<WorkflowListItem>> {
        let mut conn = self.store().read().await?;
        let where_clause = format!(
            "w.tenant_id = $1 AND ($2 IS NULL OR w.workspace_id = $2) \
             AND ($3 IS NULL OR w.playbook_id IN (SELECT p.id FROM playbooks p WHERE p.family_id = \
                 (SELECT q.family_id FROM playbooks q WHERE q.id = $3))) AND ($4 IS NULL OR w.state = $4) AND ($5 IS NULL OR w.lifecycle = $5) \
             AND ($8 IS NULL OR LOWER(w.name) LIKE $8) AND ($9 IS NULL OR w.id = $9) {}",
            extra.condition
        );
        #[allow(non_snake_case)]
        let WHERE = where_clause.as_str();
        let state = filter.state.map(|s| s.as_str());
        let search = extra
            .search
            .as_ref()
            .map(|s| format!("%{}%", s.to_lowercase()));
        macro_rules! binds {
            ($q:expr) => {
                $q.bind(caller.tenant_id)
                    .bind(filter.workspace_id)
                    .bind(filter.playbook_id)
                    .bind(state)
                    .bind(filter.lifecycle.as_deref())
            };
        }
        let count =
            format!("SELECT COUNT(*) FROM workflows w WHERE {WHERE} AND $6 > 0 AND $7 >= 0");
        let (total,): (i64,) = on_db!(&mut conn, c => binds!(sqlx::query_as(sqlx::AssertSqlSafe(count.as_str())))
            .bind(i64::from(page.per_page)).bind(page.offset() as i64).bind(search.as_deref()).bind(extra.workflow_id).fetch_one(c).await)?;
        let page_ids = format!(
            "SELECT w.id FROM workflows w WHERE {WHERE} ORDER BY w.created_at DESC, w.id DESC LIMIT $6 OFFSET $7"
        );
        let select = format!(
            "SELECT {}, {} FROM workflows w WHERE {WHERE} ORDER BY w.created_at DESC, w.id DESC LIMIT $6 OFFSET $7",
            workflow_columns!(),
            refs::NAME_COLUMNS
        );
        let rows: Vec<NamedWorkflowRow> = on_db!(&mut conn, c => binds!(sqlx::query_as(sqlx::AssertSqlSafe(select.as_str())))
            .bind(i64::from(page.per_page)).bind(page.offset() as i64).bind(search.as_deref()).bind(extra.workflow_id).fetch_all(c).await)?;
        let counts_sql = format!(
            "SELECT workflow_id, state, COUNT(*) FROM tasks WHERE workflow_id IN ({page_ids}) GROUP BY workflow_id, state"
        );
        let counts: Vec<(Uuid, String, i64)> = on_db!(&mut conn, c => binds!(sqlx::query_as(sqlx::AssertSqlSafe(counts_sql.as_str())))
            .bind(i64::from(page.per_page)).bind(page.offset() as i64).bind(search.as_deref()).bind(extra.workflow_id).fetch_all(c).await)?;
        let items_sql = format!(
            "SELECT workflow_id, COUNT(*), \
             SUM(CASE WHEN completed_at IS NULL THEN 1 ELSE 0 END), \
             SUM(CASE WHEN column_id = 'blocked' AND completed_at IS NULL THEN 1 ELSE 0 END), \
             SUM(CASE WHEN completed_at IS NOT NULL THEN 1 ELSE 0 END) \
             FROM work_items WHERE workflow_id IN ({page_ids}) GROUP BY workflow_id"
        );
        #[allow(clippy::type_complexity)]
        let items: Vec<(Uuid, i64, Option<i64>, Option<i64>, Option<i64>)> = on_db!(&mut conn, c => binds!(sqlx::query_as(sqlx::AssertSqlSafe(items_sql.as_str())))
            .bind(i64::from(page.per_page)).bind(page.offset() as i64).bind(search.as_deref()).bind(extra.workflow_id).fetch_all(c).await)?;
        let stages_sql = format!(
            "SELECT workflow_id, name FROM workflow_stages WHERE status = 'active' AND workflow_id IN ({page_ids}) ORDER BY workflow_id, position"
        );
        let stages: Vec<(Uuid, String)> = on_db!(&mut conn, c => binds!(sqlx::query_as(sqlx::AssertSqlSafe(stages_sql.as_str())))
            .bind(i64::from(page.per_page)).bind(page.offset() as i64).bind(search.as_deref()).bind(extra.workflow_id).fetch_all(c).await)?;
        let list = rows
            .into_iter()
            .map(|named| {
                let id = named.row.id;
                let mut task_counts: BTreeMap<String, i64> = TaskState::ALL
                    .iter()
                    .map(|s| (s.as_str().to_owned(), 0))
                    .collect();
                for (_, state, n) in counts.iter().filter(|(w, _, _)| *w == id) {
                    task_counts.insert(state.clone(), *n);
                }
                let mut summary = WorkItemSummary::default();
                if let Some((_, total, open, blocked, done)) = items.iter().find(|(w, ..)| *w == id)
                {
                    summary.total_work_items = *total;
                    summary.open_work_item_count = open.unwrap_or(0);
                    summary.blocked_work_item_count = blocked.unwrap_or(0);
                    summary.completed_work_item_count = done.unwrap_or(0);
                }
                summary.active_stage_names = stages
                    .iter()
                    .filter(|(w, _)| *w == id)
                    .map(|(_, n)| n.clone())
                    .collect();
                summary.active_stage_count = summary.active_stage_names.len() as i64;
                WorkflowListItem {
                    workflow: named.row.to_api(),
                    workspace_name: named.workspace_name,
                    playbook_name: named.playbook_name,
                    task_counts,
                    work_item_summary: summary,
                }
            })
            .collect();
        Ok(Page::new(list, total as u64, page))
    }

    /// `GET /workflows/:id`: the record plus tasks, work items, activations
    /// and stages.
    pub async fn get_workflow(&self, caller: &Caller, id: Uuid) -> Result<WorkflowDetail> {
        let mut conn = self.store().read().await?;
        let row = find(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("workflow"))?;
        let tasks: Vec<TaskRow> = on_db!(&mut conn, c => sqlx::query_as(concat!(
            "SELECT ", task_columns!(), " FROM tasks WHERE workflow_id = $1 ORDER BY created_at, id"
        ))
        .bind(id)
        .fetch_all(c)
        .await)?;
        let tasks = tasks
            .iter()
            .map(TaskRow::to_api)
            .collect::<Result<Vec<Task>>>()?;
        let work_items = work_items::list_in(&mut conn, id).await?;
        let activations = activations::list_in(&mut conn, id).await?;
        let workflow_stages = stages_in(&mut conn, id).await?;
        Ok(WorkflowDetail {
            workflow: row.to_api(),
            tasks,
            work_items,
            activations,
            workflow_stages,
        })
    }

    /// `GET /workflows/:id/stages`.
    pub async fn workflow_stages(&self, caller: &Caller, id: Uuid) -> Result<Vec<WorkflowStage>> {
        let mut conn = self.store().read().await?;
        find(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("workflow"))?;
        stages_in(&mut conn, id).await
    }

    /// `GET /workflows/:id/board`.
    pub async fn workflow_board(&self, caller: &Caller, id: Uuid) -> Result<Board> {
        let mut conn = self.store().read().await?;
        find(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("workflow"))?;
        let items = work_items::list_in(&mut conn, id).await?;
        let stages = stages_in(&mut conn, id).await?;
        let columns = work_items::COLUMNS
            .iter()
            .map(|(col, title)| BoardColumn {
                id: (*col).to_owned(),
                title: (*title).to_owned(),
                work_items: items
                    .iter()
                    .filter(|i| i.column_id == *col)
                    .cloned()
                    .collect(),
            })
            .collect();
        Ok(Board {
            workflow_id: id,
            columns,
            stages,
        })
    }

    /// `POST /workflows/:id/pause|resume|cancel`. Cancel also cancels every
    /// open task and fails queued or processing activations.
    pub async fn workflow_action(
        &self,
        caller: &Caller,
        id: Uuid,
        op: WorkflowOp,
        request: WorkflowAction,
    ) -> Result<Workflow> {
        let mut write = match op {
            WorkflowOp::Pause => {
                begin_write!(self, caller, "workflows.pause", request, Storage::Plain)
            }
            WorkflowOp::Resume => {
                begin_write!(self, caller, "workflows.resume", request, Storage::Plain)
            }
            WorkflowOp::Cancel => {
                begin_write!(self, caller, "workflows.cancel", request, Storage::Plain)
            }
        };
        let tx = &mut write.tx;
        let wf = find_for_update(tx, caller.tenant_id, id).await?;
        let from = wf.state();
        let mut to = workflow_transition(op, from)?;
        if op == WorkflowOp::Resume {
            let (claimed,): (i64,) = on_db!(tx, c => sqlx::query_as("SELECT COUNT(*) FROM tasks WHERE workflow_id = $1 AND claimed_at IS NOT NULL OR (workflow_id = $1 AND state <> 'pending')")
                .bind(id).fetch_one(c).await)?;
            if claimed == 0 {
                to = WorkflowState::Pending;
            }
        }
        let reason = request
            .reason
            .clone()
            .unwrap_or_else(|| format!("{op:?}").to_lowercase());
        if op == WorkflowOp::Cancel {
            let open: Vec<TaskRow> = on_db!(tx, c => sqlx::query_as(concat!(
                "SELECT ", task_columns!(), " FROM tasks WHERE workflow_id = $1 AND state NOT IN ('completed', 'cancelled') ORDER BY created_at, id"
            ))
            .bind(id)
            .fetch_all(c)
            .await)?;
            let now = Timestamp::now().as_datetime();
            for mut task in open {
                let task_from = task.state()?;
                let task_to = tasks::state::transition(tasks::state::TaskOp::Cancel, task_from)?;
                let before = task.clone();
                task.state = task_to.as_str().into();
                task.completed_at = Some(now);
                task.updated_at = now;
                tasks::save(tx, &task).await?;
                tasks::record_change(
                    tx,
                    caller,
                    &before,
                    tasks::state::TaskOp::Cancel,
                    (task_from, task_to),
                    "workflow cancelled",
                )
                .await?;
            }
            activations::fail_open(tx, caller, &wf, "workflow cancelled").await?;
        }
        set_state(tx, caller, &wf, from, to, &reason).await?;
        let row = find(tx, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("workflow"))?;
        let workflow = row.to_api();
        write.finish(workflow).await
    }

    /// `POST /workflows/:id/redrives`: a new workflow in the same lineage
    /// (`attempt_number + 1`, `attempt_kind: redrive`). `inherit_all`
    /// (default) carries the parameters, metadata, budget, visibility and
    /// input packet forward, overridden by what the body gives;
    /// `inherit_none` starts from the body alone. The answer is `{id,
    /// applied}`; a replay of the same `request_id` answers `applied: false`.
    pub async fn redrive_workflow(
        &self,
        caller: &Caller,
        id: Uuid,
        request: RedriveWorkflow,
    ) -> Result<Applied> {
        validate_packet(
            Some(&InitialInputPacket {
                summary: None,
                structured_inputs: request.structured_inputs.clone(),
                files: request.files.clone(),
            }),
            "redrive",
        )?;
        let begun: Begun<Applied> = self
            .begin_idempotent(
                caller,
                "workflows.redrive",
                request.request_id.as_deref(),
                &(id, &request),
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
        let tx = &mut write.tx;
        let prior = find_for_update(tx, caller.tenant_id, id).await?;
        let playbook = refs::launched_revision(tx, caller.tenant_id, prior.playbook_id)
            .await?
            .ok_or_else(|| Error::conflict("the workflow's playbook no longer exists"))?;
        let (latest,): (i32,) = on_db!(tx, c => sqlx::query_as("SELECT MAX(attempt_number) FROM workflows WHERE lineage_id = $1")
            .bind(prior.lineage_id).fetch_one(c).await)?;
        let inherit =
            request.inheritance_policy.unwrap_or_default() == InheritancePolicy::InheritAll;
        let mut parameters = if inherit {
            prior.parameters.0.clone()
        } else {
            BTreeMap::new()
        };
        parameters.extend(request.parameters.clone().unwrap_or_default());
        let prior_packet = if inherit {
            prior.initial_input_packet.as_ref().map(|p| p.0.clone())
        } else {
            None
        };
        let packet = InitialInputPacket {
            summary: request
                .summary
                .clone()
                .or_else(|| prior_packet.as_ref().and_then(|p| p.summary.clone())),
            structured_inputs: request.structured_inputs.clone().or_else(|| {
                prior_packet
                    .as_ref()
                    .and_then(|p| p.structured_inputs.clone())
            }),
            files: request
                .files
                .clone()
                .or_else(|| prior_packet.as_ref().and_then(|p| p.files.clone())),
        };
        let mut metadata = if inherit {
            prior.metadata.0.clone()
        } else {
            json!({})
        };
        if let Some(map) = metadata.as_object_mut() {
            map.insert(
                "redrive".into(),
                json!({
                    "reason": request.reason, "steering_instruction": request.steering_instruction,
                    "redrive_input_packet_id": request.redrive_input_packet_id,
                    "inheritance_policy": if inherit { "inherit_all" } else { "inherit_none" },
                    "redrive_of": prior.id,
                }),
            );
        }
        let row = insert(
            tx,
            caller,
            NewWorkflow {
                workspace_id: prior.workspace_id,
                playbook,
                name: request.name.clone().unwrap_or_else(|| prior.name.clone()),
                operator_note: if inherit {
                    prior.operator_note.clone()
                } else {
                    None
                },
                parameters,
                metadata,
                budget: if inherit {
                    crate::api::Budget {
                        token_budget: prior.token_budget,
                        cost_cap_usd: prior.cost_cap_usd,
                        max_duration_minutes: prior.max_duration_minutes,
                    }
                } else {
                    Default::default()
                },
                live_visibility_mode: request.live_visibility_mode.unwrap_or(
                    if inherit && prior.live_visibility_mode == "enhanced" {
                        LiveVisibilityMode::Enhanced
                    } else {
                        LiveVisibilityMode::Standard
                    },
                ),
                initial_input_packet: Some(packet),
                lineage_id: Some(prior.lineage_id),
                attempt_number: latest + 1,
                attempt_kind: "redrive",
                redrive_of: Some(prior.id),
                activation_reason: "workflow redriven",
            },
        )
        .await?;
        write
            .finish(Applied {
                id: row.id,
                applied: true,
            })
            .await
    }

    /// `GET /tasks/:id/context` (and the claim's `include_context`): the
    /// task with its workflow, workspace, documents (workspace files) and
    /// attachments (the workflow's input files).
    pub async fn task_context(&self, caller: &Caller, id: Uuid) -> Result<TaskContext> {
        let task = self.get_task(caller, id).await?;
        self.context_packet(caller, &task).await
    }

    pub(crate) async fn context_packet(&self, caller: &Caller, task: &Task) -> Result<TaskContext> {
        let mut conn = self.store().read().await?;
        let workflow = match task.workflow_id {
            Some(id) => find(&mut conn, caller.tenant_id, id).await?,
            None => None,
        };
        let workspace_id = task
            .workspace_id
            .or(workflow.as_ref().map(|w| w.workspace_id));
        let workspace = match workspace_id {
            Some(id) => refs::workspace_packet(&mut conn, caller.tenant_id, id).await?,
            None => None,
        };
        let documents = match workspace_id {
            Some(id) => self
                .list_workspace_files(caller, id, PageRequest::new(1, 100))
                .await?
                .items
                .into_iter()
                .map(serde_json::to_value)
                .collect::<std::result::Result<Vec<_>, _>>()?,
            None => Vec::new(),
        };
        let attachments = workflow
            .as_ref()
            .and_then(|w| w.initial_input_packet.as_ref())
            .and_then(|p| p.0.files.clone())
            .unwrap_or_default()
            .into_iter()
            .map(|f| json!({ "file_name": f.file_name, "content_type": f.content_type, "content_base64": f.content_base64 }))
            .collect();
        let workflow = match workflow {
            Some(w) => {
                let stages = stages_in(&mut conn, w.id).await?;
                let mut value = serde_json::to_value(w.to_api())?;
                value["workflow_stages"] = serde_json::to_value(stages)?;
                Some(value)
            }
            None => None,
        };
        Ok(TaskContext {
            task: task.clone(),
            workflow,
            workspace,
            documents,
            attachments,
        })
    }
}

/// Extra list conditions of the operations rail.
#[derive(Debug, Clone, Default)]
pub(crate) struct ListExtra {
    /// A static SQL condition starting with `AND` (over `w`).
    pub condition: &'static str,
    pub search: Option<String>,
    pub workflow_id: Option<Uuid>,
}

#[derive(sqlx::FromRow)]
struct NamedWorkflowRow {
    #[sqlx(flatten)]
    row: WorkflowRow,
    workspace_name: Option<String>,
    playbook_name: Option<String>,
}

pub(crate) async fn stages_in(
    access: &mut impl Access,
    workflow_id: Uuid,
) -> Result<Vec<WorkflowStage>> {
    #[allow(clippy::type_complexity)]
    let rows: Vec<(
        String,
        i32,
        Option<String>,
        String,
        Option<DateTime<Utc>>,
        Option<DateTime<Utc>>,
        i64,
        Option<i64>,
    )> = on_db!(access, c => sqlx::query_as(
        "SELECT s.name, s.position, s.goal, s.status, s.started_at, s.completed_at, \
         (SELECT COUNT(*) FROM work_items i WHERE i.workflow_id = s.workflow_id AND i.stage_name = s.name), \
         (SELECT SUM(CASE WHEN i.completed_at IS NULL THEN 1 ELSE 0 END) FROM work_items i WHERE i.workflow_id = s.workflow_id AND i.stage_name = s.name) \
         FROM workflow_stages s WHERE s.workflow_id = $1 ORDER BY s.position",
    )
    .bind(workflow_id)
    .fetch_all(c)
    .await)?;
    Ok(rows
        .into_iter()
        .map(
            |(name, position, goal, status, started, completed, count, open)| WorkflowStage {
                name,
                position: i64::from(position),
                goal,
                status,
                work_item_count: count,
                open_work_item_count: open.unwrap_or(0),
                started_at: started.map(Into::into),
                completed_at: completed.map(Into::into),
            },
        )
        .collect())
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
