//! The `tasks` table: the row, its columns, reads for change, the write of
//! its mutable columns, and the record of a change of state (event and
//! platform log row in the same transaction).

use crate::api::{
    ExecutionBackend, LogCategory, LogLevel, LogStatus, Priority, RetryPolicy, Task, TaskKind,
    TaskState,
};
use crate::caller::Caller;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::logs::{self, PlatformLog};
use crate::store::{Access, StoredJson, Tx, is_unique_violation, on_db};
use crate::tasks::state::TaskOp;
use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::types::Json;
use uuid::Uuid;

/// A `tasks` row; decoded by [`super::row_decode`], in [`task_columns!`]'s
/// order.
#[derive(Debug, Clone)]
pub(crate) struct TaskRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub title: String,
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
    pub input: StoredJson,
    pub context: StoredJson,
    pub output: Option<StoredJson>,
    pub error: Option<StoredJson>,
    pub metrics: Option<StoredJson>,
    pub git_info: Option<StoredJson>,
    pub verification: Option<StoredJson>,
    pub execution_backend: String,
    pub timeout_minutes: i32,
    pub token_budget: Option<f64>,
    pub cost_cap_usd: Option<f64>,
    pub max_iterations: Option<i32>,
    pub llm_max_retries: Option<i32>,
    pub auto_retry: bool,
    pub max_retries: i32,
    pub retry_count: i32,
    pub metadata: StoredJson,
    pub assigned_agent_id: Option<Uuid>,
    pub assigned_worker_id: Option<Uuid>,
    pub preferred_agent_id: Option<Uuid>,
    pub preferred_worker_id: Option<Uuid>,
    pub claimed_at: Option<DateTime<Utc>>,
    pub started_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// The environment summary taken at create (`{id, name, image, ...}`).
    pub execution_environment: Option<StoredJson>,
    // Run control (issue 30; [`crate::lifecycle::run_control`]).
    pub run_at: Option<DateTime<Utc>>,
    pub attempt: i32,
    pub retry_policy: Option<Json<RetryPolicy>>,
    pub heartbeat_timeout_seconds: Option<i32>,
    /// The holder's last claim, start or heartbeat: the lease's start.
    pub last_heartbeat_at: Option<DateTime<Utc>>,
    /// The agent whose lease expired last (its late calls are `LEASE_LOST`).
    pub lease_lost_agent_id: Option<Uuid>,
    pub progress: Option<StoredJson>,
    pub progress_at: Option<DateTime<Utc>>,
    pub cancel_requested: bool,
    pub expires_at: Option<DateTime<Utc>>,
    pub dedupe_key: Option<String>,
    // Flow limits (issue 31; [`crate::limits`]).
    pub concurrency_key: Option<String>,
    pub rate_limit_key: Option<String>,
    /// When the task was first held back by a limit (`task.limit_waiting`).
    pub limit_waiting_at: Option<DateTime<Utc>>,
}

impl TaskRow {
    pub fn state(&self) -> Result<TaskState> {
        TaskState::parse(&self.state).ok_or_else(|| Error::internal("unknown task state"))
    }

    /// When the holder's lease runs out: held, with a heartbeat timeout.
    pub fn lease_expires_at(&self) -> Option<DateTime<Utc>> {
        let held = self.state().is_ok_and(TaskState::is_held);
        match (held, self.heartbeat_timeout_seconds, self.last_heartbeat_at) {
            (true, Some(timeout), Some(last)) => {
                Some(last + chrono::Duration::seconds(i64::from(timeout)))
            }
            _ => None,
        }
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
            execution_environment: self.execution_environment.as_ref().map(|j| j.0.clone()),
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
            retry_policy: self.retry_policy.as_ref().map(|j| j.0.clone()),
            attempt: i64::from(self.attempt),
            run_at: self.run_at.map(Into::into),
            progress: self.progress.as_ref().map(|j| j.0.clone()),
            progress_at: self.progress_at.map(Into::into),
            cancel_requested: self.cancel_requested,
            expires_at: self.expires_at.map(Into::into),
            heartbeat_timeout_seconds: self.heartbeat_timeout_seconds.map(i64::from),
            lease_expires_at: self.lease_expires_at().map(Into::into),
            dedupe_key: self.dedupe_key.clone(),
            concurrency_key: self.concurrency_key.clone(),
            rate_limit_key: self.rate_limit_key.clone(),
            limit_waiting_at: self.limit_waiting_at.map(Into::into),
            latest_handoff: None,
        })
    }
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
         created_at, updated_at, execution_environment, run_at, attempt, retry_policy, \
         heartbeat_timeout_seconds, last_heartbeat_at, lease_lost_agent_id, progress, \
         progress_at, cancel_requested, expires_at, dedupe_key, concurrency_key, rate_limit_key, \
         limit_waiting_at"
    };
}
pub(crate) use task_columns;

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

/// Writes the mutable columns of `row`. A write the unique indexes refuse
/// (a task going back to pending while another live task has its
/// `dedupe_key`) is a 409.
pub(crate) async fn save(tx: &mut Tx, row: &TaskRow) -> Result<()> {
    let written = on_db!(tx, c => sqlx::query(
        "UPDATE tasks SET state = $1, assigned_agent_id = $2, assigned_worker_id = $3, \
         preferred_agent_id = $4, preferred_worker_id = $5, input = $6, output = $7, error = $8, \
         metrics = $9, git_info = $10, verification = $11, retry_count = $12, claimed_at = $13, \
         started_at = $14, completed_at = $15, updated_at = $16, run_at = $18, attempt = $19, \
         last_heartbeat_at = $20, lease_lost_agent_id = $21, progress = $22, progress_at = $23, \
         cancel_requested = $24 WHERE id = $17",
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
    .bind(row.run_at)
    .bind(row.attempt)
    .bind(row.last_heartbeat_at)
    .bind(row.lease_lost_agent_id)
    .bind(&row.progress)
    .bind(row.progress_at)
    .bind(row.cancel_requested)
    .execute(c).await.map(|r| r.rows_affected()));
    match written {
        Err(e) if is_unique_violation(&e) => Err(Error::conflict(
            "another live task of the tenant has this task's dedupe_key",
        )),
        other => other.map(|_| ()).map_err(Into::into),
    }
}

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
    // A failure is an error to an operator (`orch logs tail --level error`
    // must find it), even when an automatic retry follows; a lost agent
    // whose task goes back to the queue is only a warning.
    if failed || matches!(op, TaskOp::Fail { .. }) {
        log.level = LogLevel::Error;
    } else if matches!(op, TaskOp::AgentLost { .. } | TaskOp::Timeout { .. }) {
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
