//! Tasks: create, read, list, claim and every lifecycle operation.
//!
//! The state machine lives in [`state`] (one `transition` function); the
//! claim engine in [`claim`]. Every operation here runs in one transaction
//! that reads the task (locked on PostgreSQL, on the one writer connection on
//! SQLite), asks [`state::transition`] where it goes, writes the row, the
//! `task.state_changed` event(s) and the workflow consequences
//! ([`crate::workflows::after_task_change`]).
//!
//! Who may act (decisions §3): credentials bound to an agent (or a worker)
//! act as that agent (or that worker's agents); unbound credentials (admin
//! keys, unbound agent keys) name the agent in the body (`agent_id`).
//! Start and complete need the assignee (or its worker), else 403; fail also
//! accepts admin scope; the operator operations (retry, request-changes,
//! skip, reassign, escalate, cancel, resolve-escalation, approve-output) need
//! admin scope, enforced by the route table.

pub mod claim;
pub mod state;

use crate::api::{
    CompleteTask, CreateHandoff, CreateTask, ExecutionBackend, FailTask, Handoff, LogCategory,
    LogLevel, LogStatus, Page, PageRequest, Priority, Scope, StartTask, Task, TaskAction,
    TaskError, TaskFilter, TaskGit, TaskKind, TaskState, Timestamp,
};
use crate::auth::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Storage, begin_write};
use crate::logs::{self, PlatformLog};
use crate::store::{Access, Tx, on_db};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sqlx::types::Json;
use state::{TaskOp, transition};
use uuid::Uuid;

/// Default and bounds of `timeout_minutes` (decisions §8).
pub const DEFAULT_TIMEOUT_MINUTES: i64 = 180;
pub const MAX_TIMEOUT_MINUTES: i64 = 240;
pub const MAX_RETRIES: i64 = 10;

#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct TaskRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub title: String,
    #[sqlx(rename = "type")]
    pub task_type: String,
    pub task_kind: String,
    pub description: Option<String>,
    pub priority: String,
    pub state: String,
    pub workflow_id: Option<Uuid>,
    pub work_item_id: Option<Uuid>,
    pub workspace_id: Option<Uuid>,
    pub activation_id: Option<Uuid>,
    pub stage_name: Option<String>,
    pub role: Option<String>,
    pub required_tags: Json<Vec<String>>,
    pub input: Json<Value>,
    pub context: Json<Value>,
    pub output: Option<Json<Value>>,
    pub error: Option<Json<Value>>,
    pub metrics: Option<Json<Value>>,
    pub git_info: Option<Json<Value>>,
    pub verification: Option<Json<Value>>,
    pub execution_backend: String,
    pub timeout_minutes: i32,
    pub token_budget: Option<f64>,
    pub cost_cap_usd: Option<f64>,
    pub max_iterations: Option<i32>,
    pub llm_max_retries: Option<i32>,
    pub auto_retry: bool,
    pub max_retries: i32,
    pub retry_count: i32,
    pub metadata: Json<Value>,
    pub assigned_agent_id: Option<Uuid>,
    pub assigned_worker_id: Option<Uuid>,
    pub preferred_agent_id: Option<Uuid>,
    pub preferred_worker_id: Option<Uuid>,
    pub claimed_at: Option<DateTime<Utc>>,
    pub started_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// The columns of [`TaskRow`], for `concat!` into static SQL.
macro_rules! task_columns {
    () => {
        "id, tenant_id, title, type, task_kind, description, priority, state, workflow_id, \
         work_item_id, workspace_id, activation_id, stage_name, role, required_tags, input, \
         context, output, error, metrics, git_info, verification, execution_backend, \
         timeout_minutes, token_budget, cost_cap_usd, max_iterations, llm_max_retries, \
         auto_retry, max_retries, retry_count, metadata, assigned_agent_id, assigned_worker_id, \
         preferred_agent_id, preferred_worker_id, claimed_at, started_at, completed_at, \
         created_at, updated_at"
    };
}
pub(crate) use task_columns;

impl TaskRow {
    pub fn state(&self) -> Result<TaskState> {
        TaskState::parse(&self.state).ok_or_else(|| Error::internal("unknown task state"))
    }

    pub fn is_orchestrator(&self) -> bool {
        self.task_kind == TaskKind::Orchestrator.as_str()
    }

    pub fn to_api(&self) -> Result<Task> {
        Ok(Task {
            id: self.id,
            title: self.title.clone(),
            task_type: self.task_type.clone(),
            task_kind: TaskKind::parse(&self.task_kind).unwrap_or_default(),
            is_orchestrator_task: self.is_orchestrator(),
            description: self.description.clone(),
            priority: Priority::parse(&self.priority).unwrap_or_default(),
            state: self.state()?,
            workflow_id: self.workflow_id,
            work_item_id: self.work_item_id,
            workspace_id: self.workspace_id,
            activation_id: self.activation_id,
            stage_name: self.stage_name.clone(),
            role: self.role.clone(),
            required_tags: self.required_tags.0.clone(),
            execution_backend: if self.execution_backend == "runtime_plus_task" {
                ExecutionBackend::RuntimePlusTask
            } else {
                ExecutionBackend::RuntimeOnly
            },
            used_task_sandbox: self.execution_backend == "runtime_plus_task"
                && self.claimed_at.is_some(),
            execution_environment: None,
            assigned_agent_id: self.assigned_agent_id,
            assigned_worker_id: self.assigned_worker_id,
            preferred_agent_id: self.preferred_agent_id,
            preferred_worker_id: self.preferred_worker_id,
            input: self.input.0.clone(),
            context: self.context.0.clone(),
            output: self.output.as_ref().map(|j| j.0.clone()),
            error: self.error.as_ref().map(|j| j.0.clone()),
            metrics: self.metrics.as_ref().map(|j| j.0.clone()),
            git_info: self.git_info.as_ref().map(|j| j.0.clone()),
            verification: self.verification.as_ref().map(|j| j.0.clone()),
            timeout_minutes: i64::from(self.timeout_minutes),
            token_budget: self.token_budget,
            cost_cap_usd: self.cost_cap_usd,
            max_iterations: self.max_iterations.map(i64::from),
            llm_max_retries: self.llm_max_retries.map(i64::from),
            auto_retry: self.auto_retry,
            max_retries: i64::from(self.max_retries),
            retry_count: i64::from(self.retry_count),
            metadata: self.metadata.0.clone(),
            credentials: Vec::new(),
            claimed_at: self.claimed_at.map(Into::into),
            started_at: self.started_at.map(Into::into),
            completed_at: self.completed_at.map(Into::into),
            created_at: self.created_at.into(),
            updated_at: self.updated_at.into(),
            latest_handoff: None,
        })
    }
}

/// Trims, lower-cases, deduplicates and sorts routing tags.
pub fn normalise_tags<'a>(tags: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    let mut out: Vec<String> = tags
        .into_iter()
        .map(|t| t.trim().to_lowercase())
        .filter(|t| !t.is_empty())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The tags a task requires of its claimer (decisions §5).
pub(crate) fn required_tags(role: Option<&str>, kind: TaskKind) -> Vec<String> {
    let mut tags = Vec::new();
    if let Some(role) = role {
        tags.push(format!("role:{}", role.trim().to_lowercase()));
    }
    if kind == TaskKind::Orchestrator {
        tags.push("orchestrator".to_owned());
    }
    tags.sort();
    tags
}

/// Who is acting on a task.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Acting {
    pub agent_id: Option<Uuid>,
    pub worker_id: Option<Uuid>,
}

impl Acting {
    /// Bound credentials act as their owner; a body naming someone else is 403.
    pub fn resolve(
        caller: &Caller,
        agent_id: Option<Uuid>,
        worker_id: Option<Uuid>,
    ) -> Result<Self> {
        match (caller.owner_type.as_str(), caller.owner_id) {
            ("agent", Some(owner)) => {
                if agent_id.is_some_and(|a| a != owner) {
                    return Err(Error::forbidden("this credential belongs to another agent"));
                }
                Ok(Self {
                    agent_id: Some(owner),
                    worker_id: None,
                })
            }
            ("worker", Some(owner)) => {
                if worker_id.is_some_and(|w| w != owner) {
                    return Err(Error::forbidden(
                        "this credential belongs to another worker",
                    ));
                }
                Ok(Self {
                    agent_id,
                    worker_id: Some(owner),
                })
            }
            _ => Ok(Self {
                agent_id,
                worker_id,
            }),
        }
    }

    /// Whether this actor holds `task`.
    fn holds(&self, task: &TaskRow) -> bool {
        (self.agent_id.is_some() && self.agent_id == task.assigned_agent_id)
            || (self.worker_id.is_some() && self.worker_id == task.assigned_worker_id)
    }
}

pub(crate) async fn find(
    access: &mut impl Access,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<Option<TaskRow>> {
    Ok(on_db!(access, c => sqlx::query_as(concat!(
        "SELECT ", task_columns!(), " FROM tasks WHERE id = $1 AND tenant_id = $2"
    ))
    .bind(id)
    .bind(tenant_id)
    .fetch_optional(c)
    .await)?)
}

/// Reads a task for change: locked until the transaction ends on
/// PostgreSQL; SQLite's one writer already serialises.
pub(crate) async fn find_for_update(tx: &mut Tx, tenant_id: Uuid, id: Uuid) -> Result<TaskRow> {
    let row: Option<TaskRow> = on_db!(tx, c =>
        sqlite: sqlx::query_as(concat!("SELECT ", task_columns!(), " FROM tasks WHERE id = $1 AND tenant_id = $2"))
            .bind(id).bind(tenant_id).fetch_optional(c).await,
        postgres: sqlx::query_as(concat!("SELECT ", task_columns!(), " FROM tasks WHERE id = $1 AND tenant_id = $2 FOR UPDATE"))
            .bind(id).bind(tenant_id).fetch_optional(c).await,
    )?;
    row.ok_or(Error::not_found("task"))
}

/// Writes the mutable columns of `row`.
pub(crate) async fn save(tx: &mut Tx, row: &TaskRow) -> Result<()> {
    on_db!(tx, c => sqlx::query(
        "UPDATE tasks SET state = $1, assigned_agent_id = $2, assigned_worker_id = $3, \
         preferred_agent_id = $4, preferred_worker_id = $5, input = $6, output = $7, error = $8, \
         metrics = $9, git_info = $10, verification = $11, retry_count = $12, claimed_at = $13, \
         started_at = $14, completed_at = $15, updated_at = $16 WHERE id = $17",
    )
    .bind(&row.state)
    .bind(row.assigned_agent_id)
    .bind(row.assigned_worker_id)
    .bind(row.preferred_agent_id)
    .bind(row.preferred_worker_id)
    .bind(&row.input)
    .bind(&row.output)
    .bind(&row.error)
    .bind(&row.metrics)
    .bind(&row.git_info)
    .bind(&row.verification)
    .bind(row.retry_count)
    .bind(row.claimed_at)
    .bind(row.started_at)
    .bind(row.completed_at)
    .bind(row.updated_at)
    .bind(row.id)
    .execute(c).await.map(|r| r.rows_affected()))?;
    Ok(())
}

/// Writes `task.state_changed` for `row` going `from` → its current state.
/// Records a task's change of state: the `task.state_changed` event and the
/// platform log row (`task.<operation>`, category `task_lifecycle`), both in
/// `tx`, so the feed and the logs say what happened exactly when it commits.
pub(crate) async fn record_change(
    tx: &mut Tx,
    caller: &Caller,
    row: &TaskRow,
    op: TaskOp,
    (from, to): (TaskState, TaskState),
    reason: &str,
) -> Result<()> {
    let mut event = NewEvent::new(
        "task.state_changed",
        "task",
        row.id,
        json!({
            "task_id": row.id,
            "from_state": from.as_str(),
            "to_state": to.as_str(),
            "reason": reason,
            "agent_id": row.assigned_agent_id,
            "worker_id": row.assigned_worker_id,
            "work_item_id": row.work_item_id,
            "stage_name": row.stage_name,
            "activation_id": row.activation_id,
            "is_orchestrator_task": row.is_orchestrator(),
        }),
    );
    event.workflow_id = row.workflow_id;
    event.workspace_id = row.workspace_id;
    events::record(tx, caller, row.tenant_id, event).await?;
    let operation = format!("task.{}", op.name());
    let failed = matches!(to, TaskState::Failed);
    let mut log = PlatformLog::new(
        LogCategory::TaskLifecycle,
        &operation,
        if failed {
            LogStatus::Failed
        } else {
            LogStatus::Completed
        },
    );
    if failed || matches!(op, TaskOp::AgentLost { .. } | TaskOp::Timeout) {
        log.level = LogLevel::Warn;
    }
    log.payload = json!({
        "from_state": from.as_str(),
        "to_state": to.as_str(),
        "reason": reason,
        "agent_id": row.assigned_agent_id,
        "worker_id": row.assigned_worker_id,
        "title": row.title,
    });
    log.workspace_id = row.workspace_id;
    log.workflow_id = row.workflow_id;
    log.task_id = Some(row.id);
    log.work_item_id = row.work_item_id;
    log.activation_id = row.activation_id;
    log.stage_name = row.stage_name.clone();
    log.role = row.role.clone();
    log.is_orchestrator_task = Some(row.is_orchestrator());
    log.resource_type = Some("task");
    log.resource_id = Some(row.id.to_string());
    logs::write_platform_log(tx, caller, row.tenant_id, log).await
}

/// The parameters of a task insert (used by `POST /tasks` and by activations).
pub(crate) struct NewTask {
    pub request: CreateTask,
    pub activation_id: Option<Uuid>,
}

fn validate_create(request: &CreateTask) -> Result<()> {
    if request.title.trim().is_empty() || request.title.len() > 500 {
        return Err(Error::invalid_field("title", "must be 1 to 500 characters"));
    }
    let t = request.task_type.trim();
    if t.is_empty() || t.len() > 64 {
        return Err(Error::invalid_field("type", "must be 1 to 64 characters"));
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
            return Err(Error::invalid_field(field, "must be a JSON object"));
        }
    }
    if let Some(role) = &request.role
        && (role.trim().is_empty() || role.len() > 100)
    {
        return Err(Error::invalid_field("role", "must be 1 to 100 characters"));
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
    let kind = request.task_kind.unwrap_or_default();
    let priority = request.priority.unwrap_or_default();
    let role = request.role.as_deref().map(|r| r.trim().to_owned());
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
    let workflow_id = match (request.workflow_id, request.work_item_id) {
        (Some(w), _) => Some(w),
        (None, Some(item)) => {
            let (wf,): (Uuid,) = on_db!(tx, c => sqlx::query_as("SELECT workflow_id FROM work_items WHERE id = $1")
                .bind(item).fetch_one(c).await)?;
            Some(wf)
        }
        _ => None,
    };
    let now = Timestamp::now().as_datetime();
    let tags = required_tags(role.as_deref(), kind);
    let row: TaskRow = on_db!(tx, c => sqlx::query_as(concat!(
        "INSERT INTO tasks (id, tenant_id, title, type, task_kind, description, priority, priority_rank, state, \
         workflow_id, work_item_id, workspace_id, activation_id, stage_name, role, required_tags, input, context, \
         execution_backend, timeout_minutes, token_budget, cost_cap_usd, max_iterations, llm_max_retries, \
         auto_retry, max_retries, retry_count, metadata, preferred_agent_id, preferred_worker_id, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, \
         $20, $21, $22, $23, $24, $25, 0, $26, $27, $28, $29, $29) RETURNING ", task_columns!()
    ))
    .bind(Uuid::new_v4())
    .bind(tenant_id)
    .bind(request.title.trim())
    .bind(request.task_type.trim())
    .bind(kind.as_str())
    .bind(&request.description)
    .bind(priority.as_str())
    .bind(priority.rank())
    .bind(workflow_id)
    .bind(request.work_item_id)
    .bind(workspace_id)
    .bind(new.activation_id)
    .bind(&request.stage_name)
    .bind(&role)
    .bind(Json(&tags))
    .bind(Json(request.input.clone().unwrap_or_else(|| json!({}))))
    .bind(Json(request.context.clone().unwrap_or_else(|| json!({}))))
    .bind(request.execution_backend.unwrap_or_default().as_str())
    .bind(request.timeout_minutes.unwrap_or(DEFAULT_TIMEOUT_MINUTES) as i32)
    .bind(request.token_budget)
    .bind(request.cost_cap_usd)
    .bind(request.max_iterations.map(|v| v as i32))
    .bind(request.llm_max_retries.map(|v| v as i32))
    .bind(request.auto_retry.unwrap_or(false))
    .bind(request.max_retries.unwrap_or(0) as i32)
    .bind(Json(request.metadata.clone().unwrap_or_else(|| json!({}))))
    .bind(request.preferred_agent_id)
    .bind(request.preferred_worker_id)
    .bind(now)
    .fetch_one(c)
    .await)?;
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
    events::record(tx, caller, tenant_id, event).await?;
    Ok(row)
}

async fn latest_handoff(access: &mut impl Access, task_id: Uuid) -> Result<Option<Handoff>> {
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
    body: Json<Value>,
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
    /// `POST /tasks`: a pending task.
    pub async fn create_task(&self, caller: &Caller, request: CreateTask) -> Result<Task> {
        validate_create(&request)?;
        let mut write = begin_write!(self, caller, "tasks.create", request, Storage::Plain);
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

    /// `GET /tasks/:id`, with the latest handoff.
    pub async fn get_task(&self, caller: &Caller, id: Uuid) -> Result<Task> {
        let mut conn = self.store().read().await?;
        let row = find(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("task"))?;
        let mut task = row.to_api()?;
        task.latest_handoff = Some(latest_handoff(&mut conn, id).await?);
        Ok(task)
    }

    /// `GET /tasks`: newest first.
    pub async fn list_tasks(
        &self,
        caller: &Caller,
        filter: TaskFilter,
        page: PageRequest,
    ) -> Result<Page<Task>> {
        let mut conn = self.store().read().await?;
        const WHERE: &str = "WHERE tenant_id = $1 AND ($2 IS NULL OR state = $2) \
             AND ($3 IS NULL OR workspace_id = $3) AND ($4 IS NULL OR workflow_id = $4) \
             AND ($5 IS NULL OR work_item_id = $5) AND ($6 IS NULL OR assigned_agent_id = $6) \
             AND ($7 IS NULL OR activation_id = $7) AND ($8 IS NULL OR execution_backend = $8) \
             AND ($9 IS NULL OR task_kind = $9) AND ($10 IS NULL OR task_kind <> $10)";
        let orch = filter.is_orchestrator_task;
        let kind_eq = orch.filter(|b| *b).map(|_| "orchestrator");
        let kind_ne = orch.filter(|b| !*b).map(|_| "orchestrator");
        let state = filter.state.map(|s| s.as_str());
        let backend = filter.execution_backend.map(|b| b.as_str());
        macro_rules! binds {
            ($q:expr) => {
                $q.bind(caller.tenant_id)
                    .bind(state)
                    .bind(filter.workspace_id)
                    .bind(filter.workflow_id)
                    .bind(filter.work_item_id)
                    .bind(filter.assigned_agent_id)
                    .bind(filter.activation_id)
                    .bind(backend)
                    .bind(kind_eq)
                    .bind(kind_ne)
            };
        }
        let count = format!("SELECT COUNT(*) FROM tasks {WHERE}");
        let (total,): (i64,) = on_db!(&mut conn, c => binds!(sqlx::query_as(sqlx::AssertSqlSafe(count.as_str()))).fetch_one(c).await)?;
        let select = format!(
            concat!(
                "SELECT ",
                task_columns!(),
                " FROM tasks {} ORDER BY created_at DESC, id DESC LIMIT $11 OFFSET $12"
            ),
            WHERE
        );
        let rows: Vec<TaskRow> = on_db!(&mut conn, c => binds!(sqlx::query_as(sqlx::AssertSqlSafe(select.as_str())))
            .bind(i64::from(page.per_page))
            .bind(page.offset() as i64)
            .fetch_all(c)
            .await)?;
        let items = rows
            .iter()
            .map(TaskRow::to_api)
            .collect::<Result<Vec<_>>>()?;
        Ok(Page::new(items, total as u64, page))
    }

    /// `POST /tasks/:id/start`: claimed → in_progress by the assignee; a repeat is a no-op.
    pub async fn start_task(&self, caller: &Caller, id: Uuid, request: StartTask) -> Result<Task> {
        let acting = Acting::resolve(caller, request.agent_id, request.worker_id)?;
        let mut tx = self.store().begin().await?;
        // Fast path, one statement: the assignee starts a claimed task.
        let (from, to) = (
            TaskState::Claimed,
            transition(TaskOp::Start, TaskState::Claimed)?,
        );
        let now = Timestamp::now().as_datetime();
        let started: Option<TaskRow> = on_db!(&mut tx, c => sqlx::query_as(concat!(
            "UPDATE tasks SET state = $1, started_at = $2, updated_at = $2 \
             WHERE id = $3 AND tenant_id = $4 AND state = $5 \
             AND (assigned_agent_id = $6 OR assigned_worker_id = $7) RETURNING ",
            task_columns!()
        ))
        .bind(to.as_str())
        .bind(now)
        .bind(id)
        .bind(caller.tenant_id)
        .bind(from.as_str())
        .bind(acting.agent_id)
        .bind(acting.worker_id)
        .fetch_optional(c)
        .await)?;
        if let Some(row) = started {
            record_change(&mut tx, caller, &row, TaskOp::Start, (from, to), "started").await?;
            tx.commit().await?;
            return row.to_api();
        }
        // Anything else (a repeat, a wrong state, not the assignee, no such
        // task): read the row and let the rules below answer.
        let mut row = find_for_update(&mut tx, caller.tenant_id, id).await?;
        let from = row.state()?;
        let to = transition(TaskOp::Start, from)?;
        if !acting.holds(&row) {
            return Err(Error::forbidden(
                "only the assigned agent or its worker may start this task",
            ));
        }
        if to == from {
            return row.to_api();
        }
        let now = Timestamp::now().as_datetime();
        row.state = to.as_str().into();
        row.started_at = Some(now);
        row.updated_at = now;
        save(&mut tx, &row).await?;
        record_change(&mut tx, caller, &row, TaskOp::Start, (from, to), "started").await?;
        tx.commit().await?;
        row.to_api()
    }

    /// `POST /tasks/:id/complete`. From claimed it passes through
    /// in_progress (both events). `verification.passed == false` gives
    /// `output_pending_assessment`. Replays with the same `request_id`
    /// return the same task.
    pub async fn complete_task(
        &self,
        caller: &Caller,
        id: Uuid,
        request: CompleteTask,
    ) -> Result<Task> {
        let acting = Acting::resolve(caller, request.agent_id, request.worker_id)?;
        let mut write = begin_write!(self, caller, "tasks.complete", request, Storage::Plain);
        let tx = &mut write.tx;
        let passed = request
            .verification
            .as_ref()
            .and_then(|v| v.get("passed"))
            .and_then(Value::as_bool)
            .unwrap_or(true);
        // Fast path, one statement: the assignee completes a task in progress.
        let from = TaskState::InProgress;
        let to = transition(TaskOp::Complete { passed }, from)?;
        let now = Timestamp::now().as_datetime();
        let completed: Option<TaskRow> = on_db!(tx, c => sqlx::query_as(concat!(
            "UPDATE tasks SET state = $1, output = $2, metrics = $3, git_info = $4, \
             verification = $5, error = NULL, completed_at = COALESCE($6, completed_at), \
             updated_at = $7 WHERE id = $8 AND tenant_id = $9 AND state = $10 \
             AND (assigned_agent_id = $11 OR assigned_worker_id = $12) RETURNING ",
            task_columns!()
        ))
        .bind(to.as_str())
        .bind(Json(request.output.clone().unwrap_or(Value::Null)))
        .bind(request.metrics.clone().map(Json))
        .bind(request.git_info.clone().map(Json))
        .bind(request.verification.clone().map(Json))
        .bind((to == TaskState::Completed).then_some(now))
        .bind(now)
        .bind(id)
        .bind(caller.tenant_id)
        .bind(from.as_str())
        .bind(acting.agent_id)
        .bind(acting.worker_id)
        .fetch_optional(c)
        .await)?;
        if let Some(row) = completed {
            return self
                .completed(write, caller, row, request, passed, (from, to))
                .await;
        }
        // Anything else (from claimed, a wrong state, not the assignee, no
        // such task): read the row and let the rules below answer.
        let mut row = find_for_update(tx, caller.tenant_id, id).await?;
        let from = row.state()?;
        let to = transition(TaskOp::Complete { passed }, from)?;
        if !acting.holds(&row) {
            return Err(Error::forbidden(
                "only the assigned agent or its worker may complete this task",
            ));
        }
        let now = Timestamp::now().as_datetime();
        if from == TaskState::Claimed {
            row.state = TaskState::InProgress.as_str().into();
            row.started_at = Some(now);
            record_change(
                tx,
                caller,
                &row,
                TaskOp::Start,
                (from, TaskState::InProgress),
                "started",
            )
            .await?;
        }
        row.state = to.as_str().into();
        row.output = Some(Json(request.output.clone().unwrap_or(Value::Null)));
        row.metrics = request.metrics.clone().map(Json);
        row.git_info = request.git_info.clone().map(Json);
        row.verification = request.verification.clone().map(Json);
        row.error = None;
        if to == TaskState::Completed {
            row.completed_at = Some(now);
        }
        row.updated_at = now;
        save(tx, &row).await?;
        let via = if from == TaskState::Claimed {
            TaskState::InProgress
        } else {
            from
        };
        self.completed(write, caller, row, request, passed, (via, to))
            .await
    }

    /// The rest of a completion once `row` is written: its event and log,
    /// the artifacts, the workflow's consequences, the commit.
    async fn completed(
        &self,
        mut write: crate::idempotency::IdempotentWrite,
        caller: &Caller,
        row: TaskRow,
        request: CompleteTask,
        passed: bool,
        (via, to): (TaskState, TaskState),
    ) -> Result<Task> {
        let tx = &mut write.tx;
        record_change(
            tx,
            caller,
            &row,
            TaskOp::Complete { passed },
            (via, to),
            "completed",
        )
        .await?;
        for artifact in request.artifacts.iter().flatten() {
            store_artifact(tx, caller, &row, artifact).await?;
        }
        crate::workflows::after_task_change(tx, caller, &row, via, to).await?;
        let task = row.to_api()?;
        write.finish(task).await
    }

    /// `POST /tasks/:id/fail`: by the assignee (or an admin). Goes back to
    /// pending with `retry_count + 1` when `auto_retry` and retries are left.
    pub async fn fail_task(&self, caller: &Caller, id: Uuid, request: FailTask) -> Result<Task> {
        let acting = Acting::resolve(caller, request.agent_id, request.worker_id)?;
        let mut write = begin_write!(self, caller, "tasks.fail", request, Storage::Plain);
        let tx = &mut write.tx;
        let row = find_for_update(tx, caller.tenant_id, id).await?;
        if !acting.holds(&row) && !caller.scope.satisfies(Scope::Admin) {
            return Err(Error::forbidden(
                "only the assigned agent, its worker or an admin may fail this task",
            ));
        }
        let error = request.error.clone().unwrap_or_default();
        let row = fail_in(tx, caller, row, &error, "failed").await?;
        let task = row.to_api()?;
        write.finish(task).await
    }

    /// The operator operations: retry, request-changes, reassign, skip,
    /// escalate, resolve-escalation, approve-output, cancel.
    pub async fn task_action(
        &self,
        caller: &Caller,
        id: Uuid,
        op: TaskOp,
        request: TaskAction,
    ) -> Result<Task> {
        let required = |value: &Option<String>, field: &str| -> Result<String> {
            match value.as_deref().map(str::trim) {
                Some(v) if !v.is_empty() => Ok(v.to_owned()),
                _ => Err(Error::invalid_field(field, "is required")),
            }
        };
        let reason = match op {
            TaskOp::Reassign | TaskOp::Escalate => Some(required(&request.reason, "reason")?),
            _ => request.reason.clone(),
        };
        let feedback = match op {
            TaskOp::RequestChanges => Some(required(&request.feedback, "feedback")?),
            _ => None,
        };
        let instructions = match op {
            TaskOp::ResolveEscalation => Some(required(&request.instructions, "instructions")?),
            _ => None,
        };
        let mut write = match op {
            TaskOp::Retry => begin_write!(self, caller, "tasks.retry", request, Storage::Plain),
            TaskOp::RequestChanges => begin_write!(
                self,
                caller,
                "tasks.request_changes",
                request,
                Storage::Plain
            ),
            TaskOp::Reassign => {
                begin_write!(self, caller, "tasks.reassign", request, Storage::Plain)
            }
            TaskOp::Skip => begin_write!(self, caller, "tasks.skip", request, Storage::Plain),
            TaskOp::Escalate => {
                begin_write!(self, caller, "tasks.escalate", request, Storage::Plain)
            }
            TaskOp::ResolveEscalation => begin_write!(
                self,
                caller,
                "tasks.resolve_escalation",
                request,
                Storage::Plain
            ),
            TaskOp::ApproveOutput => begin_write!(
                self,
                caller,
                "tasks.approve_output",
                request,
                Storage::Plain
            ),
            _ => begin_write!(self, caller, "tasks.cancel", request, Storage::Plain),
        };
        let tx = &mut write.tx;
        let mut row = find_for_update(tx, caller.tenant_id, id).await?;
        let from = row.state()?;
        let to = transition(op, from)?;
        let now = Timestamp::now().as_datetime();
        let before = row.clone();
        let release = |row: &mut TaskRow| {
            row.assigned_agent_id = None;
            row.assigned_worker_id = None;
            row.claimed_at = None;
            row.started_at = None;
            row.completed_at = None;
        };
        match op {
            TaskOp::Retry => {
                release(&mut row);
                row.output = None;
                row.error = None;
                row.retry_count += 1;
            }
            TaskOp::RequestChanges => {
                release(&mut row);
                let input = row.input.0.as_object_mut();
                if let Some(input) = input {
                    let list = input.entry("feedback").or_insert_with(|| json!([]));
                    if !list.is_array() {
                        *list = json!([list.clone()]);
                    }
                    if let Some(list) = list.as_array_mut() {
                        list.push(Value::String(feedback.clone().unwrap_or_default()));
                    }
                }
            }
            TaskOp::Reassign => {
                release(&mut row);
                row.preferred_agent_id = request.preferred_agent_id;
                row.preferred_worker_id = request.preferred_worker_id;
            }
            TaskOp::Skip => {
                row.output = Some(Json(json!({ "skipped": true, "reason": reason })));
                row.completed_at = Some(now);
            }
            TaskOp::ResolveEscalation => {
                release(&mut row);
                if let Some(input) = row.input.0.as_object_mut() {
                    input.insert(
                        "instructions".into(),
                        Value::String(instructions.clone().unwrap_or_default()),
                    );
                }
            }
            TaskOp::ApproveOutput => row.completed_at = Some(now),
            TaskOp::Cancel => row.completed_at = Some(now),
            _ => {}
        }
        row.state = to.as_str().into();
        row.updated_at = now;
        save(tx, &row).await?;
        let why = reason.clone().unwrap_or_else(|| op.name().to_owned());
        record_change(tx, caller, &before, op, (from, to), &why).await?;
        crate::workflows::after_task_change(tx, caller, &row, from, to).await?;
        let task = row.to_api()?;
        write.finish(task).await
    }

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
        .bind(Uuid::new_v4())
        .bind(caller.tenant_id)
        .bind(id)
        .bind(Json(&body))
        .bind(row.assigned_agent_id)
        .bind(Timestamp::now().as_datetime())
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

    /// `POST /tasks/:id/artifacts`: by the assignee while the task is held,
    /// or by an admin at any time.
    pub async fn add_task_artifact(
        &self,
        caller: &Caller,
        id: Uuid,
        request: crate::api::TaskArtifact,
    ) -> Result<crate::api::workspaces::Artifact> {
        let acting = Acting::resolve(caller, request.agent_id, None)?;
        let mut write = begin_write!(self, caller, "tasks.artifact", request, Storage::Plain);
        let row = find_for_update(&mut write.tx, caller.tenant_id, id).await?;
        let admin = caller.scope.satisfies(Scope::Admin);
        if !(admin || (acting.holds(&row) && row.state()?.is_held())) {
            return Err(Error::forbidden(
                "only the task's assignee (while it is held) or an admin may add artifacts",
            ));
        }
        let artifact = store_artifact(&mut write.tx, caller, &row, &request).await?;
        write.finish(artifact).await
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

    /// `GET /tasks/:id/git`: derived from the `git_info` given at completion.
    pub async fn task_git(&self, caller: &Caller, id: Uuid) -> Result<TaskGit> {
        let mut conn = self.store().read().await?;
        let row = find(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("task"))?;
        let raw = row.git_info.map(|j| j.0).unwrap_or_else(|| json!({}));
        let pick = |k: &str, default: Value| {
            raw.get(k)
                .cloned()
                .filter(|v| !v.is_null())
                .unwrap_or(default)
        };
        Ok(TaskGit {
            linked_prs: pick("linked_prs", json!([])),
            branches: pick("branches", json!([])),
            ci_status: pick("ci_status", Value::Null),
            merge_history: pick("merge_history", json!([])),
            raw,
        })
    }
}

/// Stores one artifact of `task` (through the files module).
async fn store_artifact(
    tx: &mut Tx,
    caller: &Caller,
    task: &TaskRow,
    artifact: &crate::api::TaskArtifact,
) -> Result<crate::api::workspaces::Artifact> {
    let content = crate::files::decode_content("content_base64", &artifact.content_base64)?;
    crate::files::insert_artifact(
        tx,
        caller,
        crate::files::NewArtifact {
            workspace_id: task.workspace_id,
            workflow_id: task.workflow_id,
            work_item_id: task.work_item_id,
            task_id: Some(task.id),
            stage_name: task.stage_name.clone(),
            role: task.role.clone(),
            file_name: artifact.file_name.clone(),
            key: artifact.key.clone(),
            description: artifact.description.clone(),
            content_type: artifact.content_type.clone(),
            content,
        },
    )
    .await
}

/// Fails a held task in `tx` (by its holder, the liveness monitor or the
/// timeout sweep): back to pending when `auto_retry` and retries are left.
pub(crate) async fn fail_in(
    tx: &mut Tx,
    caller: &Caller,
    mut row: TaskRow,
    error: &TaskError,
    reason: &str,
) -> Result<TaskRow> {
    let from = row.state()?;
    let retry_left = row.auto_retry && row.retry_count < row.max_retries;
    let to = transition(TaskOp::Fail { retry_left }, from)?;
    let now = Timestamp::now().as_datetime();
    let before = row.clone();
    row.error = Some(Json(serde_json::to_value(error)?));
    if to == TaskState::Pending {
        row.retry_count += 1;
        row.assigned_agent_id = None;
        row.assigned_worker_id = None;
        row.claimed_at = None;
        row.started_at = None;
    }
    row.state = to.as_str().into();
    row.updated_at = now;
    save(tx, &row).await?;
    // The event names the agent that held the task.
    record_change(
        tx,
        caller,
        &before,
        TaskOp::Fail { retry_left },
        (from, to),
        reason,
    )
    .await?;
    crate::workflows::after_task_change(tx, caller, &row, from, to).await?;
    Ok(row)
}

impl ControlPlane {
    /// `POST /tasks/:id/claim-credentials` (decisions §9). Only the task's
    /// current assignee may resolve handles. No LLM settings or MCP servers
    /// are stored yet, so no claimed task lists credentials and no handle
    /// resolves: no handle at all is 400 `VALIDATION_ERROR`, a handle not
    /// shaped `claim:v1:...` is 400, a well-formed handle that this
    /// deployment never issued is 404.
    pub async fn claim_credentials(
        &self,
        caller: &Caller,
        id: Uuid,
        request: crate::api::ClaimCredentials,
    ) -> Result<Value> {
        let handles: Vec<&String> = request
            .llm_api_key_claim_handle
            .iter()
            .chain(request.llm_extra_headers_claim_handle.iter())
            .chain(request.mcp_claim_handles.iter().flatten())
            .collect();
        if handles.is_empty() {
            return Err(Error::validation(
                "claim-credentials needs at least one handle",
            ));
        }
        let mut conn = self.store().read().await?;
        let row = find(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("task"))?;
        let acting = Acting::resolve(caller, None, None)?;
        if !row.state()?.is_held() || !acting.holds(&row) {
            return Err(Error::forbidden(
                "only the task's current assignee may resolve its credentials",
            ));
        }
        if let Some(bad) = handles.iter().find(|h| !h.starts_with("claim:v1:")) {
            return Err(Error::invalid_field(
                "handle",
                format!("`{bad}` is not a claim handle"),
            ));
        }
        Err(Error::not_found("claim handle"))
    }

    /// Whether a task streams (`GET /tasks/:id/stream`): it does while it is
    /// claimed or in progress. The stream itself is the entity-event stream
    /// filtered to the task.
    pub async fn task_is_streaming(&self, caller: &Caller, id: Uuid) -> Result<bool> {
        let mut conn = self.store().read().await?;
        let row = find(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("task"))?;
        Ok(row.state()?.is_held())
    }
}
