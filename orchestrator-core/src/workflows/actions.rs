//! Operator actions on a workflow: pause, resume, cancel, redrive.

use crate::api::{
    Applied, InheritancePolicy, InitialInputPacket, LiveVisibilityMode, RedriveWorkflow, Workflow,
    WorkflowAction, WorkflowState,
};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::idempotency::{Begun, Storage, begin_write};
use crate::store::on_db;
use crate::tasks::{self, TaskRow, task_columns};
use serde_json::json;
use std::collections::BTreeMap;
use uuid::Uuid;

use super::activations;
use super::launch::{NewWorkflow, insert, validate_packet};
use super::refs;
use super::rows::{find, find_for_update, set_state};
use super::state::{WorkflowOp, workflow_transition};

impl ControlPlane {
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
        let reason = request
            .reason
            .clone()
            .unwrap_or_else(|| format!("{op:?}").to_lowercase());
        let row = apply_workflow_op(&mut write.tx, caller, id, op, &reason).await?;
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
                dedupe_key: None,
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
}

/// One operator action on workflow `id` inside `tx` (cancel also cancels its
/// open tasks and fails its open activations), recorded with `reason`. The
/// single-workflow routes and bulk actions ([`crate::bulk`]) both go through
/// it. An action that does not apply fails before any write.
pub(crate) async fn apply_workflow_op(
    tx: &mut crate::store::Tx,
    caller: &Caller,
    id: Uuid,
    op: WorkflowOp,
    reason: &str,
) -> Result<super::rows::WorkflowRow> {
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
    if op == WorkflowOp::Cancel {
        let open: Vec<TaskRow> = on_db!(tx, c => sqlx::query_as(concat!(
                "SELECT ", task_columns!(), " FROM tasks WHERE workflow_id = $1 AND state NOT IN ('completed', 'cancelled') ORDER BY created_at, id"
            ))
            .bind(id)
            .fetch_all(c)
            .await)?;
        let now = tx.now().as_datetime();
        for mut task in open {
            let task_from = task.state()?;
            let task_to = tasks::state::transition(tasks::state::TaskOp::Cancel, task_from)?;
            let before = task.clone();
            task.state = task_to.as_str().into();
            task.completed_at = Some(now);
            task.updated_at = now;
            tasks::rows::save(tx, &task).await?;
            tasks::rows::record_change(
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
    set_state(tx, caller, &wf, from, to, reason).await?;
    let row = find(tx, caller.tenant_id, id)
        .await?
        .ok_or(Error::not_found("workflow"))?;
    Ok(row)
}
