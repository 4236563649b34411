//! Inserting task rows: one ([`insert_row`], every create) or the plain
//! creates waiting for the writer as one statement ([`Creates`], a
//! [`crate::store::Combine`]).
//!
//! Why combine: after claims, starts and completions were combined (BENCHMARKS.md
//! items 14 and 15), a lifecycle's creates were the writer's one statement a
//! request left. A create that names nothing to look up (no workflow, work
//! item, workspace, preferred assignee or environment) and has no
//! `request_id` to record is a single `INSERT` of values taken from the
//! request alone ([`Fields`]), its flow-limit keys included (a rate key is
//! checked before, on a read connection; the rows of its concurrency keys
//! are made by one more statement for the batch), so the creates waiting for the writer can be
//! one `INSERT ... SELECT FROM unnest(...)` on PostgreSQL: one round trip
//! for all of them. The columns such a create leaves empty are `NULL` in the
//! statement itself. Every other create, and every create on SQLite, runs
//! its own `INSERT` ([`insert_row`]), which binds the same [`Fields`].

use crate::api::{CreateTask, RetryPolicy};
use crate::error::Result;
use crate::store::{Access, Combine, Db, Tx, on_db};
use crate::tags::required_tags;
use crate::tasks::DEFAULT_TIMEOUT_MINUTES;
use crate::tasks::retry;
use crate::tasks::rows::{TaskRow, task_columns};
use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use sqlx::types::Json;
use uuid::Uuid;

/// The values of a new task row that come from the request alone (the
/// references and the environment are looked up by [`super::create`]).
pub(crate) struct Fields {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub title: String,
    pub task_type: String,
    pub kind: &'static str,
    pub description: Option<String>,
    pub priority: &'static str,
    pub priority_rank: i32,
    pub stage_name: Option<String>,
    pub role: Option<String>,
    pub required_tags: Vec<String>,
    pub input: Value,
    pub context: Value,
    pub execution_backend: &'static str,
    pub timeout_minutes: i32,
    pub token_budget: Option<f64>,
    pub cost_cap_usd: Option<f64>,
    pub max_iterations: Option<i32>,
    pub llm_max_retries: Option<i32>,
    pub auto_retry: bool,
    pub max_retries: i32,
    pub metadata: Value,
    /// Run control (issue 30): only the flow-limit keys on plain creates.
    pub run_control: RunControl,
}

/// The run-control values of a new task (run control §2–§5), resolved
/// against the clock at create.
#[derive(Default)]
pub(crate) struct RunControl {
    pub retry_policy: Option<RetryPolicy>,
    pub run_at: Option<DateTime<Utc>>,
    pub expires_at: Option<DateTime<Utc>>,
    pub heartbeat_timeout_seconds: Option<i32>,
    pub dedupe_key: Option<String>,
    /// Flow limits (run control §6): checked by [`crate::limits::prepare_keys`].
    pub concurrency_key: Option<String>,
    pub rate_limit_key: Option<String>,
}

impl RunControl {
    /// `request`'s values (already validated) at `now`.
    fn of(request: &CreateTask, now: DateTime<Utc>) -> Self {
        let after = |seconds: i64| now + chrono::Duration::seconds(seconds);
        Self {
            retry_policy: request
                .retry_policy
                .as_ref()
                .and_then(|p| retry::normalise("retry_policy", p).ok()),
            run_at: request
                .run_at
                .map(|t| t.as_datetime())
                .or(request.delay_seconds.map(after)),
            expires_at: request
                .expires_at
                .map(|t| t.as_datetime())
                .or(request.ttl_seconds.map(after)),
            heartbeat_timeout_seconds: request.heartbeat_timeout_seconds.map(|s| s as i32),
            dedupe_key: request.dedupe_key.clone(),
            concurrency_key: request.concurrency_key.clone(),
            rate_limit_key: request.rate_limit_key.clone(),
        }
    }
}

impl Fields {
    /// The values of `request` (already validated) for a new task of
    /// `tenant_id`, under a fresh time-ordered id (UUIDv7: new tasks land at
    /// the right edge of the primary-key index instead of on a random page,
    /// so a write batch dirties a few pages, not one per task).
    pub(crate) fn of(tenant_id: Uuid, request: &CreateTask, now: DateTime<Utc>) -> Self {
        let kind = request.task_kind.unwrap_or_default();
        let priority = request.priority.unwrap_or_default();
        let role = request.role.as_deref().map(|r| r.trim().to_owned());
        Self {
            id: Uuid::now_v7(),
            tenant_id,
            title: request.title.trim().to_owned(),
            task_type: request.task_type.trim().to_owned(),
            kind: kind.as_str(),
            description: request.description.clone(),
            priority: priority.as_str(),
            priority_rank: priority.rank(),
            stage_name: request.stage_name.clone(),
            required_tags: required_tags(role.as_deref(), kind),
            role,
            input: request.input.clone().unwrap_or_else(|| json!({})),
            context: request.context.clone().unwrap_or_else(|| json!({})),
            execution_backend: request.execution_backend.unwrap_or_default().as_str(),
            timeout_minutes: request.timeout_minutes.unwrap_or(DEFAULT_TIMEOUT_MINUTES) as i32,
            token_budget: request.token_budget,
            cost_cap_usd: request.cost_cap_usd,
            max_iterations: request.max_iterations.map(|v| v as i32),
            llm_max_retries: request.llm_max_retries.map(|v| v as i32),
            auto_retry: request.auto_retry.unwrap_or(false),
            max_retries: request.max_retries.unwrap_or(0) as i32,
            metadata: request.metadata.clone().unwrap_or_else(|| json!({})),
            run_control: RunControl::of(request, now),
        }
    }

    /// Whether a create of `request` can be combined: nothing to look up,
    /// nothing to record under a key (module docs).
    pub(crate) fn plain(request: &CreateTask) -> bool {
        request.workflow_id.is_none()
            && request.work_item_id.is_none()
            && request.workspace_id.is_none()
            && request.preferred_agent_id.is_none()
            && request.preferred_worker_id.is_none()
            && request.execution_environment_id.is_none()
            && request.request_id.is_none()
            && request.retry_policy.is_none()
            && request.run_at.is_none()
            && request.delay_seconds.is_none()
            && request.expires_at.is_none()
            && request.ttl_seconds.is_none()
            && request.heartbeat_timeout_seconds.is_none()
            && request.dedupe_key.is_none()
    }
}

/// What a task refers to, looked up and checked by [`super::create`]; all
/// `None` for a plain create.
#[derive(Default)]
pub(crate) struct References {
    pub workflow_id: Option<Uuid>,
    pub work_item_id: Option<Uuid>,
    pub workspace_id: Option<Uuid>,
    pub activation_id: Option<Uuid>,
    pub preferred_agent_id: Option<Uuid>,
    pub preferred_worker_id: Option<Uuid>,
    pub execution_environment_id: Option<Uuid>,
    /// The environment as the task keeps it (its definition at creation).
    pub execution_environment: Option<Value>,
}

/// Inserts one pending task (no event: the caller records it); `None` when
/// a live task of the tenant already has its `dedupe_key` (the unique
/// partial index `tasks_dedupe_key` decides, so concurrent creates with one
/// key insert one row whatever path they take).
pub(crate) async fn insert_row(
    tx: &mut Tx,
    fields: &Fields,
    refs: &References,
    now: DateTime<Utc>,
) -> Result<Option<TaskRow>> {
    let f = fields;
    let rc = &f.run_control;
    Ok(on_db!(tx, c => sqlx::query_as(concat!(
        "INSERT INTO tasks (id, tenant_id, title, type, task_kind, description, priority, priority_rank, state, \
         workflow_id, work_item_id, workspace_id, activation_id, stage_name, role, required_tags, input, context, \
         execution_backend, timeout_minutes, token_budget, cost_cap_usd, max_iterations, llm_max_retries, \
         auto_retry, max_retries, retry_count, metadata, preferred_agent_id, preferred_worker_id, created_at, updated_at, \
         execution_environment_id, execution_environment, run_at, retry_policy, heartbeat_timeout_seconds, \
         expires_at, dedupe_key, concurrency_key, rate_limit_key) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, \
         $20, $21, $22, $23, $24, $25, 0, $26, $27, $28, $29, $29, $30, $31, $32, $33, $34, $35, $36, $37, $38) \
         ON CONFLICT (tenant_id, dedupe_key) \
         WHERE dedupe_key IS NOT NULL AND state NOT IN ('completed', 'failed', 'cancelled') DO NOTHING \
         RETURNING ", task_columns!()
    ))
    .bind(f.id)
    .bind(f.tenant_id)
    .bind(&f.title)
    .bind(&f.task_type)
    .bind(f.kind)
    .bind(&f.description)
    .bind(f.priority)
    .bind(f.priority_rank)
    .bind(refs.workflow_id)
    .bind(refs.work_item_id)
    .bind(refs.workspace_id)
    .bind(refs.activation_id)
    .bind(&f.stage_name)
    .bind(&f.role)
    .bind(Json(&f.required_tags))
    .bind(Json(&f.input))
    .bind(Json(&f.context))
    .bind(f.execution_backend)
    .bind(f.timeout_minutes)
    .bind(f.token_budget)
    .bind(f.cost_cap_usd)
    .bind(f.max_iterations)
    .bind(f.llm_max_retries)
    .bind(f.auto_retry)
    .bind(f.max_retries)
    .bind(Json(&f.metadata))
    .bind(refs.preferred_agent_id)
    .bind(refs.preferred_worker_id)
    .bind(now)
    .bind(refs.execution_environment_id)
    .bind(refs.execution_environment.as_ref().map(Json))
    .bind(rc.run_at)
    .bind(rc.retry_policy.as_ref().map(Json))
    .bind(rc.heartbeat_timeout_seconds)
    .bind(rc.expires_at)
    .bind(&rc.dedupe_key)
    .bind(&rc.concurrency_key)
    .bind(&rc.rate_limit_key)
    .fetch_optional(c)
    .await)?)
}

/// Plain tasks inserted as one statement: the list's columns side by side,
/// the references `NULL`.
const CREATE_EACH_POSTGRES: &str = concat!(
    "INSERT INTO tasks (id, tenant_id, title, type, task_kind, description, priority, \
     priority_rank, state, stage_name, role, required_tags, input, context, execution_backend, \
     timeout_minutes, token_budget, cost_cap_usd, max_iterations, llm_max_retries, auto_retry, \
     max_retries, retry_count, metadata, created_at, updated_at, concurrency_key, rate_limit_key) \
     SELECT v.id, v.tenant_id, v.title, v.type, v.task_kind, v.description, v.priority, \
     v.priority_rank, 'pending', v.stage_name, v.role, v.required_tags, v.input, v.context, \
     v.execution_backend, v.timeout_minutes, v.token_budget, v.cost_cap_usd, v.max_iterations, \
     v.llm_max_retries, v.auto_retry, v.max_retries, 0, v.metadata, $1, $1, \
     v.concurrency_key, v.rate_limit_key \
     FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], \
     $8::text[], $9::int[], $10::text[], $11::text[], $12::jsonb[], $13::jsonb[], $14::jsonb[], \
     $15::text[], $16::int[], $17::float8[], $18::float8[], $19::int[], $20::int[], \
     $21::bool[], $22::int[], $23::jsonb[], $24::text[], $25::text[]) \
     AS v(id, tenant_id, title, type, task_kind, description, priority, priority_rank, \
     stage_name, role, required_tags, input, context, execution_backend, timeout_minutes, \
     token_budget, cost_cap_usd, max_iterations, llm_max_retries, auto_retry, max_retries, \
     metadata, concurrency_key, rate_limit_key) \
     RETURNING ",
    task_columns!()
);

/// The `concurrency_keys` rows of a combined create's keys, and of the
/// group without a key (`crate::limits`), made if missing.
const CREATE_KEYS_POSTGRES: &str = "INSERT INTO concurrency_keys (tenant_id, key, created_at, updated_at) \
     SELECT DISTINCT v.tenant_id, k.key, $1::timestamptz, $1::timestamptz \
     FROM unnest($2::uuid[], $3::text[]) AS v(tenant_id, key) \
     CROSS JOIN LATERAL (VALUES (v.key), ('')) AS k(key) \
     WHERE v.key IS NOT NULL ORDER BY 1, 2 \
     ON CONFLICT (tenant_id, key) DO NOTHING";

/// Plain creates, one row each.
pub(crate) struct Creates;

impl Combine for Creates {
    type Item = Fields;
    type Row = TaskRow;
    type Out = crate::api::Task;

    fn key(item: &Fields) -> Uuid {
        item.id
    }

    fn row_key(row: &TaskRow) -> Uuid {
        row.id
    }

    fn run<'a>(tx: &'a mut Tx, items: &'a [Fields]) -> BoxFuture<'a, Result<Vec<TaskRow>>> {
        Box::pin(async move {
            let now = tx.now().as_datetime();
            // SQLite never combines (Store::combines): each its own INSERT.
            if matches!(Access::db(tx), Db::Sqlite(_)) {
                let mut rows = Vec::with_capacity(items.len());
                for fields in items {
                    // Plain creates carry no dedupe key: always a row.
                    rows.extend(insert_row(tx, fields, &References::default(), now).await?);
                }
                return Ok(rows);
            }
            fn column<'i, T>(items: &'i [Fields], f: impl Fn(&'i Fields) -> T) -> Vec<T> {
                items.iter().map(f).collect()
            }
            // The rows of the batch's concurrency keys, as `prepare_keys`
            // makes them for a single create, in one statement (sorted, so
            // that batches of two replicas lock them in one order).
            if items
                .iter()
                .any(|f| f.run_control.concurrency_key.is_some())
            {
                on_db!(tx, c =>
                    sqlite: {
                        let _ = c;
                        Err(sqlx::Error::Configuration("answered above".into()))
                    },
                    postgres: sqlx::query(CREATE_KEYS_POSTGRES)
                        .bind(now)
                        .bind(column(items, |f| f.tenant_id))
                        .bind(column(items, |f| f.run_control.concurrency_key.as_deref()))
                        .execute(c)
                        .await
                        .map(|_| ()),
                )?;
            }
            let rows = on_db!(tx, c =>
                sqlite: {
                    let _ = c;
                    Err(sqlx::Error::Configuration("answered above".into()))
                },
                postgres: sqlx::query_as(CREATE_EACH_POSTGRES)
                .bind(now)
                .bind(column(items, |f| f.id))
                .bind(column(items, |f| f.tenant_id))
                .bind(column(items, |f| f.title.as_str()))
                .bind(column(items, |f| f.task_type.as_str()))
                .bind(column(items, |f| f.kind))
                .bind(column(items, |f| f.description.as_deref()))
                .bind(column(items, |f| f.priority))
                .bind(column(items, |f| f.priority_rank))
                .bind(column(items, |f| f.stage_name.as_deref()))
                .bind(column(items, |f| f.role.as_deref()))
                .bind(column(items, |f| Json(&f.required_tags)))
                .bind(column(items, |f| Json(&f.input)))
                .bind(column(items, |f| Json(&f.context)))
                .bind(column(items, |f| f.execution_backend))
                .bind(column(items, |f| f.timeout_minutes))
                .bind(column(items, |f| f.token_budget))
                .bind(column(items, |f| f.cost_cap_usd))
                .bind(column(items, |f| f.max_iterations))
                .bind(column(items, |f| f.llm_max_retries))
                .bind(column(items, |f| f.auto_retry))
                .bind(column(items, |f| f.max_retries))
                .bind(column(items, |f| Json(&f.metadata)))
                .bind(column(items, |f| f.run_control.concurrency_key.as_deref()))
                .bind(column(items, |f| f.run_control.rate_limit_key.as_deref()))
                .fetch_all(c)
                .await,
            )?;
            Ok(rows)
        })
    }
}
