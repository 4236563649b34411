//! Creating tasks: `POST /tasks`, and the insert that activations use for
//! their orchestrator tasks.

use crate::api::{CreateTask, Issues, RetryPolicy, TASK_TYPES, Task};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::environments::usable_environment;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Storage, begin_write};
use crate::store::{Combined, Post, Tx, on_db};
use crate::tasks::insert::{Creates, Fields, References, insert_row};
use crate::tasks::retry;
use crate::tasks::rows::{TaskRow, task_columns};
use crate::tasks::{MAX_DELAY_SECONDS, MAX_RETRIES, MAX_TIMEOUT_MINUTES};
use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use sqlx::types::Json;
use uuid::Uuid;

/// The parameters of a task insert (used by `POST /tasks` and by activations).
pub(crate) struct NewTask {
    pub request: CreateTask,
    pub activation_id: Option<Uuid>,
    /// The request's rate key was checked before the transaction
    /// ([`crate::limits::check_rate_key`], on a read connection), so the
    /// create needs no lookup on the writer and no savepoint for it.
    pub rate_key_checked: bool,
}

/// The checks of a create's body that need no database (its 400s and
/// 422s).
pub(crate) fn validate_create(request: &CreateTask) -> Result<()> {
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
    validate_run_control(request)
}

/// The run-control fields of a create (run control §2–§5): types and
/// ranges are 422 like serde's own faults.
fn validate_run_control(request: &CreateTask) -> Result<()> {
    if let Some(policy) = &request.retry_policy {
        retry::normalise("retry_policy", policy)?;
        let beside: Vec<&str> = [
            ("auto_retry", request.auto_retry.is_some()),
            ("max_retries", request.max_retries.is_some()),
        ]
        .into_iter()
        .filter_map(|(field, given)| given.then_some(field))
        .collect();
        if !beside.is_empty() {
            let mut issues = Issues::default();
            for field in ["retry_policy"].iter().chain(&beside) {
                issues.add_field(
                    *field,
                    "retry_policy replaces auto_retry and max_retries: give one or the other",
                );
            }
            return Err(Error::schema(
                format!("retry_policy cannot be given with {}", beside.join(" or ")),
                issues,
            ));
        }
    }
    let pairs = [
        (
            "run_at",
            request.run_at.is_some(),
            "delay_seconds",
            request.delay_seconds.is_some(),
        ),
        (
            "expires_at",
            request.expires_at.is_some(),
            "ttl_seconds",
            request.ttl_seconds.is_some(),
        ),
    ];
    for (a, has_a, b, has_b) in pairs {
        if has_a && has_b {
            let mut issues = Issues::field(a, format!("give {a} or {b}, not both"));
            issues.add_field(b, format!("give {a} or {b}, not both"));
            return Err(Error::schema(
                format!("{a} and {b} exclude each other"),
                issues,
            ));
        }
    }
    let ranges = [
        ("delay_seconds", request.delay_seconds, 0, MAX_DELAY_SECONDS),
        ("ttl_seconds", request.ttl_seconds, 1, MAX_DELAY_SECONDS),
        (
            "heartbeat_timeout_seconds",
            request.heartbeat_timeout_seconds,
            5,
            3_600,
        ),
    ];
    for (field, value, low, high) in ranges {
        if value.is_some_and(|v| !(low..=high).contains(&v)) {
            return Err(Error::schema_field(
                field,
                format!("must be {low} to {high}"),
            ));
        }
    }
    if let Some(key) = &request.dedupe_key
        && (key.is_empty() || key.chars().count() > 200)
    {
        return Err(Error::schema_field(
            "dedupe_key",
            "must be 1 to 200 characters",
        ));
    }
    for (field, key) in [
        ("concurrency_key", &request.concurrency_key),
        ("rate_limit_key", &request.rate_limit_key),
    ] {
        if let Some(key) = key {
            crate::limits::check_key(field, key)?;
        }
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

/// Inserts a pending task in `tx` (with its creation event); a live task
/// of the tenant with the same `dedupe_key` is answered instead.
pub(crate) async fn insert(
    tx: &mut Tx,
    caller: &Caller,
    tenant_id: Uuid,
    new: NewTask,
    now: DateTime<Utc>,
) -> Result<TaskRow> {
    Ok(insert_deduped(tx, caller, tenant_id, new, now).await?.0)
}

/// How many times a create with a dedupe key tries again when the live
/// task it collided with ended before it could be read (the key is free
/// then). Two are enough; the bound keeps a pathological loop finite.
const DEDUPE_ATTEMPTS: usize = 3;

/// [`insert`], telling whether the answer is an existing live task with the
/// request's `dedupe_key` (`true`: nothing was written).
pub(crate) async fn insert_deduped(
    tx: &mut Tx,
    caller: &Caller,
    tenant_id: Uuid,
    new: NewTask,
    now: DateTime<Utc>,
) -> Result<(TaskRow, bool)> {
    let rate_key_checked = new.rate_key_checked;
    let mut request = new.request;
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
    let playbook_rate_key = match workflow_id {
        Some(workflow_id) => {
            apply_playbook_defaults(tx, tenant_id, workflow_id, &mut request).await?
        }
        None => false,
    };
    crate::limits::prepare_keys(
        tx,
        tenant_id,
        &request,
        playbook_rate_key || rate_key_checked,
        now,
    )
    .await?;
    let fields = Fields::of(tenant_id, &request, now);
    for _ in 0..DEDUPE_ATTEMPTS {
        if let Some(row) = insert_row(tx, &fields, &refs, now).await? {
            record_created(tx, caller, &row).await?;
            return Ok((row, false));
        }
        let key = fields.run_control.dedupe_key.as_deref().unwrap_or_default();
        if let Some(row) = live_with_key(tx, tenant_id, key).await? {
            return Ok((row, true));
        }
    }
    Err(Error::Conflict {
        message: "tasks with this dedupe_key kept starting and ending".into(),
        hint: Some("retry the request".into()),
    })
}

/// The tenant's task with `key` that is not in a terminal state (the one
/// the unique partial index `tasks_dedupe_key` admits).
async fn live_with_key(tx: &mut Tx, tenant_id: Uuid, key: &str) -> Result<Option<TaskRow>> {
    Ok(on_db!(tx, c => sqlx::query_as(concat!(
        "SELECT ", task_columns!(), " FROM tasks WHERE tenant_id = $1 AND dedupe_key = $2 \
         AND state NOT IN ('completed', 'failed', 'cancelled')"
    ))
    .bind(tenant_id)
    .bind(key)
    .fetch_optional(c)
    .await)?)
}

/// Fills what `request` leaves out from the top level of the definition of
/// `workflow_id`'s playbook: `retry_policy` (run control §2) when it names
/// no retry setting, and `concurrency_key` / `rate_limit_key` (§6), each
/// when it names none. Activations' orchestrator tasks are created here too, so a
/// playbook's keys bound its orchestration turns. One read of the
/// definition, and none when the request already names all of them.
///
/// Saving a playbook checks these (`validate_definition`), so one that does
/// not check out can only come from a row written before that check; it is
/// ignored (logged) rather than failing every create of the workflow. A
/// default rate key with no limit set is kept (the task is not held back
/// until a limit is set): refusing it would fail the workflow's activations
/// instead, which no caller could correct in the request. `true` when the
/// rate key came from the playbook (so no limit need be set for it).
async fn apply_playbook_defaults(
    tx: &mut Tx,
    tenant_id: Uuid,
    workflow_id: Uuid,
    request: &mut CreateTask,
) -> Result<bool> {
    let wants_policy = request.retry_policy.is_none()
        && request.auto_retry.is_none()
        && request.max_retries.is_none();
    let wants_keys = request.concurrency_key.is_none() || request.rate_limit_key.is_none();
    if !wants_policy && !wants_keys {
        return Ok(false);
    }
    let found: Option<(Json<Value>,)> = on_db!(tx, c => sqlx::query_as(
        "SELECT p.definition FROM workflows w JOIN playbooks p ON p.id = w.playbook_id \
         WHERE w.id = $1 AND w.tenant_id = $2",
    )
    .bind(workflow_id)
    .bind(tenant_id)
    .fetch_optional(c)
    .await)?;
    let Some((Json(definition),)) = found else {
        return Ok(false);
    };
    if wants_policy && let Some(policy) = definition.get("retry_policy") {
        match serde_json::from_value::<RetryPolicy>(policy.clone()) {
            Ok(policy) => request.retry_policy = Some(policy),
            Err(error) => tracing::warn!(%workflow_id, %error, "playbook retry_policy ignored"),
        }
    }
    let key = |field: &str| -> Option<String> {
        let key = definition.get(field)?.as_str()?;
        match crate::limits::check_key(field, key) {
            Ok(()) => Some(key.to_owned()),
            Err(_) => {
                tracing::warn!(%workflow_id, field, "playbook flow-limit key ignored");
                None
            }
        }
    };
    if request.concurrency_key.is_none() {
        request.concurrency_key = key("concurrency_key");
    }
    if request.rate_limit_key.is_none() {
        request.rate_limit_key = key("rate_limit_key");
        return Ok(request.rate_limit_key.is_some());
    }
    Ok(false)
}

/// A plain create's follow-up in a combined turn: its `task.created` event,
/// then the task as the route answers it.
pub(crate) fn created_post(caller: &Caller) -> Post<TaskRow, Task> {
    let caller = caller.clone();
    Box::new(
        move |tx: &mut Tx, row: TaskRow| -> BoxFuture<'_, Result<Task>> {
            Box::pin(async move {
                record_created(tx, &caller, &row).await?;
                row.to_api()
            })
        },
    )
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
        Ok(self.create_task_deduped(caller, request).await?.0)
    }

    /// `POST /tasks` telling whether the answer is an existing live task
    /// with the request's `dedupe_key` (`true`, 200) or a new one (201).
    pub async fn create_task_deduped(
        &self,
        caller: &Caller,
        request: CreateTask,
    ) -> Result<(Task, bool)> {
        let (this, caller) = (self.clone(), caller.clone());
        let created = self
            .store()
            .on_writer(async move { this.create_task_here(&caller, request).await })
            .await?;
        self.after_create(&created.0, created.1);
        Ok(created)
    }

    /// What follows a committed create off the writer: the dedupe counter,
    /// and the wake-ups of the jobs that a new task may concern.
    pub(crate) fn after_create(&self, task: &Task, deduplicated: bool) {
        if deduplicated {
            crate::tasks::counters::counters()
                .dedupe_hits
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return;
        }
        if let Some(run_at) = task.run_at.into_iter().chain(task.expires_at).min() {
            // Work due later: the run-control job plans its wake-up.
            self.wake_background(run_at.as_datetime());
        }
        if task.concurrency_key.is_some() || task.rate_limit_key.is_some() {
            // Its key may be full: the limits job records that it waits.
            self.wake_flow_limits(crate::limits::recheck_after(self.now().as_datetime()));
        }
    }

    /// `POST /tasks` on the writer's thread: the shared fast path for a
    /// plain create where statements combine, else the ordinary create.
    pub(crate) async fn create_task_here(
        &self,
        caller: &Caller,
        request: CreateTask,
    ) -> Result<(Task, bool)> {
        validate_create(&request)?;
        let now = self.now().as_datetime();
        // A rate key must name a limit: read before, off the writer, unless
        // the request may be a replay (its recorded answer comes first).
        let rate_key_checked = match &request.rate_limit_key {
            Some(key) if request.request_id.is_none() => {
                let mut conn = self.store().read().await?;
                crate::limits::check_rate_key(&mut conn, caller.tenant_id, key).await?;
                true
            }
            _ => false,
        };
        if Fields::plain(&request) && self.store().combines() {
            // Nothing to look up or record: one INSERT shared with the other
            // plain creates waiting for the writer (tasks::insert).
            let fields = Fields::of(caller.tenant_id, &request, now);
            match self
                .store()
                .combined::<Creates>(fields, created_post(caller))
                .await?
            {
                Combined::Done(task) => return Ok((task, false)),
                // An INSERT of a fresh id always adds its row, so its group
                // gave way on the second writer (store::combine): the
                // ordinary create below, on the first.
                Combined::Missed(tx) => drop(tx),
            }
        }
        let mut deduplicated = false;
        let task = self
            .create_task_recorded(caller, request, now, rate_key_checked, &mut deduplicated)
            .await?;
        Ok((task, deduplicated))
    }

    /// The ordinary create, recorded under its `request_id` (a replay
    /// answers the recorded task; `deduplicated` is set only by a fresh
    /// create that found a live task with its key).
    async fn create_task_recorded(
        &self,
        caller: &Caller,
        request: CreateTask,
        now: DateTime<Utc>,
        rate_key_checked: bool,
        deduplicated: &mut bool,
    ) -> Result<Task> {
        // A task that names nothing to look up is one INSERT: no savepoint
        // (store::begin_unguarded). A lookup can fail with a 400, so a
        // request with references keeps its savepoint.
        let references = request.workflow_id.is_some()
            || (request.rate_limit_key.is_some() && !rate_key_checked)
            || request.work_item_id.is_some()
            || request.workspace_id.is_some()
            || request.preferred_agent_id.is_some()
            || request.preferred_worker_id.is_some()
            || request.execution_environment_id.is_some();
        let mut write = begin_write!(
            self, caller, "tasks.create", request, Storage::Plain, guarded: references
        );
        let (row, found) = insert_deduped(
            &mut write.tx,
            caller,
            caller.tenant_id,
            NewTask {
                request: request.clone(),
                activation_id: None,
                rate_key_checked,
            },
            now,
        )
        .await?;
        *deduplicated = found;
        write.finish(row.to_api()?).await
    }
}
