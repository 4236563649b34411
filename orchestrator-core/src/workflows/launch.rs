//! Launching workflows: `POST /workflows` and the planning workflow of a
//! workspace, with their stages and the first activation.

use crate::api::{
    CreateWorkflow, InitialInputPacket, LiveVisibilityMode, PlanningWorkflow, Workflow,
};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Storage, begin_write};
use crate::store::{Tx, on_db};
use serde_json::{Value, json};
use sqlx::types::Json;
use std::collections::BTreeMap;
use uuid::Uuid;

use super::activations;
use super::refs;
use super::refs::{PlaybookRef, lookup_playbook, lookup_workspace};
use super::rows::{WorkflowRow, find};

/// Stages from a playbook definition: `definition.stages[].name` (and `goal`).
pub(crate) fn stages_of(definition: &Value) -> Vec<(String, Option<String>)> {
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
pub(crate) struct NewWorkflow {
    pub workspace_id: Uuid,
    pub playbook: PlaybookRef,
    pub name: String,
    pub operator_note: Option<String>,
    pub parameters: BTreeMap<String, String>,
    pub metadata: Value,
    pub budget: crate::api::Budget,
    pub live_visibility_mode: LiveVisibilityMode,
    pub initial_input_packet: Option<InitialInputPacket>,
    pub lineage_id: Option<Uuid>,
    pub attempt_number: i32,
    pub attempt_kind: &'static str,
    pub redrive_of: Option<Uuid>,
    pub activation_reason: &'static str,
    /// Run control §5: while a workflow of the tenant with this key is not
    /// in a terminal state, the launch answers it instead.
    pub dedupe_key: Option<String>,
}

/// Files one launch may attach (decisions §8, as an upload).
const MAX_FILES: usize = 10;

pub(crate) fn validate_packet(packet: Option<&InitialInputPacket>, field: &str) -> Result<()> {
    let files = packet.and_then(|p| p.files.as_deref()).unwrap_or_default();
    if files.len() > MAX_FILES {
        return Err(Error::invalid_field(
            &format!("{field}.files"),
            format!(
                "{} files; a launch takes at most {MAX_FILES} (up to 10 MiB each, 16 MiB per request)",
                files.len()
            ),
        ));
    }
    for (i, file) in files.iter().enumerate() {
        if file.file_name.trim().is_empty() {
            return Err(Error::invalid_field(
                &format!("{field}.files.{i}.file_name"),
                "is required",
            ));
        }
        crate::files::decode_content(
            &format!("{field}.files.{i}.content_base64"),
            &file.file_name,
            &file.content_base64,
        )?;
    }
    if packet
        .and_then(|p| p.structured_inputs.as_ref())
        .is_some_and(|v| !v.is_object())
    {
        return Err(Error::schema_field(
            &format!("{field}.structured_inputs"),
            "must be a JSON object",
        ));
    }
    Ok(())
}

/// Inserts a workflow with its stages and its `workflow.created` activation
/// (dispatched at once), in `tx`.
pub(crate) async fn insert(tx: &mut Tx, caller: &Caller, new: NewWorkflow) -> Result<WorkflowRow> {
    Ok(insert_deduped(tx, caller, new).await?.0)
}

/// [`insert`], telling whether the answer is the live workflow that
/// already had `new.dedupe_key` (`true`: nothing was written). The unique
/// partial index `workflows_dedupe_key` decides, so concurrent launches
/// with one key insert one row.
pub(crate) async fn insert_deduped(
    tx: &mut Tx,
    caller: &Caller,
    new: NewWorkflow,
) -> Result<(WorkflowRow, bool)> {
    let id = Uuid::now_v7();
    let now = tx.now().as_datetime();
    let lifecycle = new.playbook.lifecycle.clone();
    let inserted = on_db!(tx, c => sqlx::query(
        "INSERT INTO workflows (id, tenant_id, workspace_id, playbook_id, name, state, lifecycle, operator_note, \
         parameters, metadata, token_budget, cost_cap_usd, max_duration_minutes, live_visibility_mode, \
         initial_input_packet, lineage_id, attempt_number, attempt_kind, redrive_of, created_at, updated_at, dedupe_key) \
         VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $19, $20) \
         ON CONFLICT (tenant_id, dedupe_key) \
         WHERE dedupe_key IS NOT NULL AND state NOT IN ('completed', 'failed', 'cancelled') DO NOTHING",
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
    .bind(&new.dedupe_key)
    .execute(c)
    .await
    .map(|r| r.rows_affected()))?;
    if inserted == 0 {
        let live: Option<(Uuid,)> = on_db!(tx, c => sqlx::query_as(
            "SELECT id FROM workflows WHERE tenant_id = $1 AND dedupe_key = $2 \
             AND state NOT IN ('completed', 'failed', 'cancelled')",
        )
        .bind(caller.tenant_id)
        .bind(&new.dedupe_key)
        .fetch_optional(c)
        .await)?;
        let Some((live,)) = live else {
            return Err(Error::Conflict {
                message: "the workflow with this dedupe_key ended while the launch ran".into(),
                hint: Some("retry the request".into()),
            });
        };
        let row = find(tx, caller.tenant_id, live)
            .await?
            .ok_or(Error::not_found("workflow"))?;
        return Ok((row, true));
    }
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
    Ok((row, false))
}

/// Checks and launches a `POST /workflows` body in `tx`: the one launch
/// path of `POST /workflows` and of schedules (which launch in the
/// transaction that writes their run row). `true` with the row when a live
/// workflow already had the body's `dedupe_key` (nothing was written).
pub(crate) async fn launch_in(
    tx: &mut Tx,
    caller: &Caller,
    request: &CreateWorkflow,
) -> Result<(WorkflowRow, bool)> {
    if let Some(key) = &request.dedupe_key
        && (key.is_empty() || key.chars().count() > 200)
    {
        return Err(Error::schema_field(
            "dedupe_key",
            "must be 1 to 200 characters",
        ));
    }
    if request.name.trim().is_empty() || request.name.len() > 200 {
        return Err(Error::invalid_field("name", "must be 1 to 200 characters"));
    }
    if request.metadata.as_ref().is_some_and(|m| !m.is_object()) {
        return Err(Error::schema_field("metadata", "must be a JSON object"));
    }
    validate_packet(
        request.initial_input_packet.as_ref(),
        "initial_input_packet",
    )?;
    let playbook = lookup_playbook(tx, caller.tenant_id, request.playbook_id)
        .await?
        .ok_or_else(|| Error::invalid_field("playbook_id", "no such playbook"))?;
    lookup_workspace(tx, caller.tenant_id, request.workspace_id)
        .await?
        .ok_or_else(|| Error::invalid_field("workspace_id", "no such workspace"))?;
    insert_deduped(
        tx,
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
            dedupe_key: request.dedupe_key.clone(),
        },
    )
    .await
}

impl ControlPlane {
    /// `POST /workflows`: the playbook and workspace must exist in the tenant.
    pub async fn create_workflow(
        &self,
        caller: &Caller,
        request: CreateWorkflow,
    ) -> Result<Workflow> {
        Ok(self.create_workflow_deduped(caller, request).await?.0)
    }

    /// `POST /workflows` telling whether the answer is the live workflow
    /// that already had the request's `dedupe_key` (`true`, 200).
    pub async fn create_workflow_deduped(
        &self,
        caller: &Caller,
        request: CreateWorkflow,
    ) -> Result<(Workflow, bool)> {
        let mut deduplicated = false;
        let workflow = self
            .create_workflow_recorded(caller, request, &mut deduplicated)
            .await?;
        Ok((workflow, deduplicated))
    }

    /// The launch, recorded under its `request_id` (a replay answers the
    /// recorded workflow; `deduplicated` is set only by a fresh launch that
    /// found a live workflow with its key).
    async fn create_workflow_recorded(
        &self,
        caller: &Caller,
        request: CreateWorkflow,
        deduplicated: &mut bool,
    ) -> Result<Workflow> {
        let mut write = begin_write!(self, caller, "workflows.create", request, Storage::Plain);
        let (row, found) = launch_in(&mut write.tx, caller, &request).await?;
        *deduplicated = found;
        write.finish(row.to_api()).await
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
}
