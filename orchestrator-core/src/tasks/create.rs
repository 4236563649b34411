//! Creating tasks: `POST /tasks`, and the insert that activations use for
//! their orchestrator tasks.

use crate::api::{CreateTask, TASK_TYPES, Task, Timestamp};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::environments::usable_environment;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Storage, begin_write};
use crate::store::{Combined, Post, Tx, on_db};
use crate::tasks::insert::{Creates, Fields, References, insert_row};
use crate::tasks::rows::TaskRow;
use crate::tasks::{MAX_RETRIES, MAX_TIMEOUT_MINUTES};
use futures_util::future::BoxFuture;
use serde_json::json;
use uuid::Uuid;

/// The parameters of a task insert (used by `POST /tasks` and by activations).
pub(crate) struct NewTask {
    pub request: CreateTask,
    pub activation_id: Option<Uuid>,
}

fn validate_create(request: &CreateTask) -> Result<()> {
    if request.title.trim().is_empty() || request.title.len() > 500 {
        return Err(Error::invalid_field("title", "must be 1 to 500 characters"));
    }
    if !TASK_TYPES.contains(&request.task_type.as_str()) {
        return Err(Error::schema_field(
            "type",
            format!("must be one of: {}", TASK_TYPES.join(", ")),
        ));
    }
    if let Some(m) = request.timeout_minutes
        && !(1..=MAX_TIMEOUT_MINUTES).contains(&m)
    {
        return Err(Error::invalid_field("timeout_minutes", "must be 1 to 240"));
    }
    if let Some(m) = request.max_retries
        && !(0..=MAX_RETRIES).contains(&m)
    {
        return Err(Error::invalid_field("max_retries", "must be 0 to 10"));
    }
    for (field, value) in [("input", &request.input), ("metadata", &request.metadata)] {
        if value.as_ref().is_some_and(|v| !v.is_object()) {
            return Err(Error::schema_field(field, "must be a JSON object"));
        }
    }
    if let Some(role) = &request.role
        && (role.trim().is_empty() || role.len() > 100)
    {
        return Err(Error::invalid_field("role", "must be 1 to 100 characters"));
    }
    Ok(())
}

/// Checks that the workspace and preferred assignee a task names exist in
/// the tenant (the workflow and work item are checked where they are read):
/// a dangling reference is a 400 naming the field, never a task that fails
/// later (a claim answering 404 after it committed).
async fn check_references(tx: &mut Tx, tenant_id: Uuid, request: &CreateTask) -> Result<()> {
    let references = [
        (
            "workspace_id",
            request.workspace_id,
            "SELECT id FROM workspaces WHERE id = $1 AND tenant_id = $2",
            "no such workspace",
        ),
        (
            "preferred_agent_id",
            request.preferred_agent_id,
            "SELECT id FROM agents WHERE id = $1 AND tenant_id = $2",
            "no such agent",
        ),
        (
            "preferred_worker_id",
            request.preferred_worker_id,
            "SELECT id FROM workers WHERE id = $1 AND tenant_id = $2",
            "no such worker",
        ),
    ];
    for (field, id, sql, message) in references {
        let Some(id) = id else { continue };
        let found: Option<(Uuid,)> = on_db!(tx, c => sqlx::query_as(sql)
            .bind(id)
            .bind(tenant_id)
            .fetch_optional(c)
            .await)?;
        if found.is_none() {
            return Err(Error::invalid_field(field, message));
        }
    }
    Ok(())
}

/// Inserts a pending task in `tx` (with its creation event).
pub(crate) async fn insert(
    tx: &mut Tx,
    caller: &Caller,
    tenant_id: Uuid,
    new: NewTask,
) -> Result<TaskRow> {
    let request = new.request;
    validate_create(&request)?;
    let mut workspace_id = request.workspace_id;
    if let Some(workflow_id) = request.workflow_id {
        let found: Option<(Uuid,)> = on_db!(tx, c => sqlx::query_as(
            "SELECT workspace_id FROM workflows WHERE id = $1 AND tenant_id = $2",
        )
        .bind(workflow_id)
        .bind(tenant_id)
        .fetch_optional(c)
        .await)?;
        let Some((ws,)) = found else {
            return Err(Error::invalid_field("workflow_id", "no such workflow"));
        };
        workspace_id.get_or_insert(ws);
    }
    if let Some(work_item_id) = request.work_item_id {
        let found: Option<(Uuid,)> = on_db!(tx, c => sqlx::query_as(
            "SELECT workflow_id FROM work_items WHERE id = $1 AND tenant_id = $2",
        )
        .bind(work_item_id)
        .bind(tenant_id)
        .fetch_optional(c)
        .await)?;
        match found {
            None => return Err(Error::invalid_field("work_item_id", "no such work item")),
            Some((wf,)) if request.workflow_id.is_some_and(|w| w != wf) => {
                return Err(Error::invalid_field(
                    "work_item_id",
                    "belongs to another workflow",
                ));
            }
            Some(_) => {}
        }
    }
    check_references(tx, tenant_id, &request).await?;
    let workflow_id = match (request.workflow_id, request.work_item_id) {
        (Some(w), _) => Some(w),
        (None, Some(item)) => {
            let (wf,): (Uuid,) = on_db!(tx, c => sqlx::query_as("SELECT workflow_id FROM work_items WHERE id = $1")
                .bind(item).fetch_one(c).await)?;
            Some(wf)
        }
        _ => None,
    };
    let environment = match request.execution_environment_id {
        Some(id) => Some(usable_environment(tx, tenant_id, id).await?),
        None => None,
    };
    let refs = References {
        workflow_id,
        work_item_id: request.work_item_id,
        workspace_id,
        activation_id: new.activation_id,
        preferred_agent_id: request.preferred_agent_id,
        preferred_worker_id: request.preferred_worker_id,
        execution_environment_id: request.execution_environment_id,
        execution_environment: environment,
    };
    let fields = Fields::of(tenant_id, &request);
    let row = insert_row(tx, &fields, &refs, Timestamp::now().as_datetime()).await?;
    record_created(tx, caller, &row).await?;
    Ok(row)
}

/// The `task.created` event of a new task.
async fn record_created(tx: &mut Tx, caller: &Caller, row: &TaskRow) -> Result<()> {
    let mut event = NewEvent::new(
        "task.created",
        "task",
        row.id,
        json!({
            "task_id": row.id, "to_state": "pending", "title": row.title,
            "work_item_id": row.work_item_id, "stage_name": row.stage_name,
            "activation_id": row.activation_id, "is_orchestrator_task": row.is_orchestrator(),
        }),
    );
    event.workflow_id = row.workflow_id;
    event.workspace_id = row.workspace_id;
    events::record(tx, caller, row.tenant_id, event).await
}

impl ControlPlane {
    /// `POST /tasks`: a pending task.
    pub async fn create_task(&self, caller: &Caller, request: CreateTask) -> Result<Task> {
        let (this, caller) = (self.clone(), caller.clone());
        self.store()
            .on_writer(async move { this.create_task_here(&caller, request).await })
            .await
    }

    async fn create_task_here(&self, caller: &Caller, request: CreateTask) -> Result<Task> {
        validate_create(&request)?;
        if Fields::plain(&request) && self.store().combines() {
            // Nothing to look up or record: one INSERT shared with the other
            // plain creates waiting for the writer (tasks::insert).
            let fields = Fields::of(caller.tenant_id, &request);
            let post: Post<TaskRow, Task> = {
                let caller = caller.clone();
                Box::new(
                    move |tx: &mut Tx, row: TaskRow| -> BoxFuture<'_, Result<Task>> {
                        Box::pin(async move {
                            record_created(tx, &caller, &row).await?;
                            row.to_api()
                        })
                    },
                )
            };
            return match self.store().combined::<Creates>(fields, post).await? {
                Combined::Done(task) => Ok(task),
                // An INSERT of a fresh id always adds its row.
                Combined::Missed(_) => Err(Error::internal("a combined create added no row")),
            };
        }
        // A task that names nothing to look up is one INSERT: no savepoint
        // (store::begin_unguarded). A lookup can fail with a 400, so a
        // request with references keeps its savepoint.
        let references = request.workflow_id.is_some()
            || request.work_item_id.is_some()
            || request.workspace_id.is_some()
            || request.preferred_agent_id.is_some()
            || request.preferred_worker_id.is_some()
            || request.execution_environment_id.is_some();
        let mut write = begin_write!(
            self, caller, "tasks.create", request, Storage::Plain, guarded: references
        );
        let row = insert(
            &mut write.tx,
            caller,
            caller.tenant_id,
            NewTask {
                request: request.clone(),
                activation_id: None,
            },
        )
        .await?;
        let task = row.to_api()?;
        write.finish(task).await
    }
}
