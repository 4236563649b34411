//! Writing log rows: runtime batches (`POST /logs/ingest`, one multi-row
//! INSERT per batch, all or nothing) and the platform's own rows, written in
//! the transaction of the operation they describe.

use crate::api::logs::MAX_INGEST_ENTRIES;
use crate::api::{Ingested, LogCategory, LogLevel, LogSource, LogStatus, NewLogEntry, Timestamp};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::store::{Access, Tx, on_db};
use serde_json::{Value, json};
use sqlx::types::Json;
use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use uuid::Uuid;

/// Columns written per row (everything but `id` and `txid`).
pub(crate) const INSERT_COLUMNS: &str = "tenant_id, created_at, trace_id, span_id, parent_span_id, source, \
    category, level, operation, status, duration_ms, payload, error, workspace_id, workflow_id, \
    task_id, work_item_id, activation_id, stage_name, is_orchestrator_task, execution_backend, \
    tool_owner, role, actor_type, actor_id, actor_name, resource_type, resource_id, resource_name";

pub(crate) const INSERT_COLUMN_COUNT: usize = 29;

/// Longest free-text linkage, actor or resource field.
pub(crate) const MAX_TEXT: usize = 1000;

/// A row ready to insert (validated, defaults resolved).
#[derive(Debug, Clone)]
pub(crate) struct PreparedLog {
    entry: NewLogEntry,
    source: LogSource,
    level: LogLevel,
    payload: Value,
}

/// One platform row: what [`write_platform_log`] records.
#[derive(Debug, Clone)]
pub(crate) struct PlatformLog<'a> {
    pub category: LogCategory,
    pub level: LogLevel,
    /// Stable action name, e.g. `task.claim`, `task.complete`, `auth.token`.
    pub operation: &'a str,
    pub status: LogStatus,
    pub payload: Value,
    pub error: Option<Value>,
    pub workspace_id: Option<Uuid>,
    pub workflow_id: Option<Uuid>,
    pub task_id: Option<Uuid>,
    pub work_item_id: Option<Uuid>,
    pub activation_id: Option<Uuid>,
    pub stage_name: Option<String>,
    pub role: Option<String>,
    pub is_orchestrator_task: Option<bool>,
    pub resource_type: Option<&'a str>,
    pub resource_id: Option<String>,
}

impl<'a> PlatformLog<'a> {
    /// An `info` row with no linkage; set the fields you know.
    pub fn new(category: LogCategory, operation: &'a str, status: LogStatus) -> Self {
        Self {
            category,
            level: LogLevel::Info,
            operation,
            status,
            payload: json!({}),
            error: None,
            workspace_id: None,
            workflow_id: None,
            task_id: None,
            work_item_id: None,
            activation_id: None,
            stage_name: None,
            role: None,
            is_orchestrator_task: None,
            resource_type: None,
            resource_id: None,
        }
    }
}

/// Writes one platform row (source `platform`) inside `tx`, acted by `caller`
/// in `tenant_id`: one INSERT in the transaction of the operation it
/// describes, so the row exists exactly when the operation committed, and log
/// streams wake at that commit.
///
/// For task lifecycle operations call it as
/// ```ignore
/// let mut log = PlatformLog::new(LogCategory::TaskLifecycle, "task.complete", LogStatus::Completed);
/// log.task_id = Some(task.id);
/// log.workflow_id = task.workflow_id;
/// log.payload = json!({"from_state": from, "to_state": to});
/// logs::write_platform_log(&mut tx, caller, caller.tenant_id, log).await?;
/// ```
pub(crate) async fn write_platform_log(
    tx: &mut Tx,
    caller: &Caller,
    tenant_id: Uuid,
    log: PlatformLog<'_>,
) -> Result<()> {
    let mut entry = NewLogEntry::new(log.category, log.operation);
    entry.source = Some(LogSource::Platform);
    entry.level = Some(log.level);
    entry.status = Some(log.status);
    entry.error = log.error;
    entry.workspace_id = log.workspace_id;
    entry.workflow_id = log.workflow_id;
    entry.task_id = log.task_id;
    entry.work_item_id = log.work_item_id;
    entry.activation_id = log.activation_id;
    entry.stage_name = log.stage_name;
    entry.role = log.role;
    entry.is_orchestrator_task = log.is_orchestrator_task;
    entry.resource_type = log.resource_type.map(str::to_owned);
    entry.resource_id = log.resource_id;
    entry.tool_owner = Some("platform".to_owned());
    let mut prepared = PreparedLog {
        source: LogSource::Platform,
        level: log.level,
        payload: log.payload,
        entry,
    };
    // The actor is resolved now: the batch writes rows of several callers.
    let (actor_type, actor_id) = caller_actor(Some(caller));
    let entry = &mut prepared.entry;
    entry.actor_type = entry.actor_type.take().or(actor_type);
    entry.actor_id = entry.actor_id.take().or(actor_id);
    tx.defer("platform log", flush_platform_logs, (tenant_id, prepared));
    tx.mark_logs_written();
    Ok(())
}

/// Writes the platform log rows the requests of one write batch deferred
/// ([`crate::store::FlushFn`]): one insert per run of rows of one tenant.
fn flush_platform_logs(
    db: &mut dyn Access,
    rows: Vec<Box<dyn Any + Send>>,
) -> Pin<Box<dyn Future<Output = Result<Vec<crate::api::Event>>> + Send + '_>> {
    let rows: Vec<(Uuid, PreparedLog)> = rows
        .into_iter()
        .filter_map(|row| row.downcast::<(Uuid, PreparedLog)>().ok().map(|row| *row))
        .collect();
    Box::pin(async move {
        let mut rows = rows.into_iter().peekable();
        while let Some((tenant_id, first)) = rows.next() {
            let mut run = vec![first];
            while let Some((_, next)) = rows.next_if(|(t, _)| *t == tenant_id) {
                run.push(next);
            }
            insert_rows(db, None, tenant_id, &run).await?;
        }
        Ok(Vec::new())
    })
}

/// The actor a caller's rows carry when they name none.
fn caller_actor(caller: Option<&Caller>) -> (Option<String>, Option<String>) {
    match caller {
        Some(c) => (
            Some(c.owner_type.clone()),
            Some(c.owner_id.unwrap_or(c.key_id).to_string()),
        ),
        None => (None, None),
    }
}

/// Validates one ingest entry, adding the caller's actor fields when absent.
pub(crate) fn prepare(
    index: usize,
    entry: NewLogEntry,
    issues: &mut crate::api::Issues,
) -> PreparedLog {
    let mut issue = |field: &str, message: &str| {
        issues
            .field_errors
            .entry(format!("entries.{index}.{field}"))
            .or_default()
            .push(message.to_owned());
    };
    let operation = entry.operation.trim();
    if operation.is_empty() || operation.len() > 200 {
        issue("operation", "must be 1 to 200 characters");
    }
    if entry.payload.as_ref().is_some_and(|p| !p.is_object()) {
        issue("payload", "must be a JSON object");
    }
    if entry
        .error
        .as_ref()
        .is_some_and(|e| !(e.is_object() || e.is_null()))
    {
        issue("error", "must be an object or null");
    }
    if entry.duration_ms.is_some_and(|d| d < 0) {
        issue("duration_ms", "must not be negative");
    }
    let texts = [
        ("stage_name", &entry.stage_name),
        ("execution_backend", &entry.execution_backend),
        ("tool_owner", &entry.tool_owner),
        ("role", &entry.role),
        ("actor_type", &entry.actor_type),
        ("actor_id", &entry.actor_id),
        ("actor_name", &entry.actor_name),
        ("resource_type", &entry.resource_type),
        ("resource_id", &entry.resource_id),
        ("resource_name", &entry.resource_name),
    ];
    for (field, value) in texts {
        if value.as_ref().is_some_and(|v| v.len() > MAX_TEXT) {
            issue(field, "must be at most 1000 characters");
        }
    }
    let mut entry = entry;
    PreparedLog {
        source: entry.source.unwrap_or(LogSource::Runtime),
        level: entry.level.unwrap_or(LogLevel::Info),
        payload: entry.payload.take().unwrap_or_else(|| json!({})),
        entry,
    }
}

/// Inserts rows in `tx`: on SQLite one multi-row INSERT per batch with
/// positional `?` parameters (1,000 rows x 29 columns stays under SQLite's
/// 32,766; numbered `$n` names would make every bind a linear name lookup),
/// on PostgreSQL one `INSERT ... SELECT FROM UNNEST(<one array per column>)`,
/// which costs one small statement however large the batch.
pub(crate) async fn insert_rows(
    tx: &mut (impl Access + ?Sized),
    caller: Option<&Caller>,
    tenant_id: Uuid,
    rows: &[PreparedLog],
) -> Result<u64> {
    let now = Timestamp::now().as_datetime();
    let (default_actor_type, default_actor_id) = caller_actor(caller);
    let actor_type = |e: &NewLogEntry| e.actor_type.clone().or_else(|| default_actor_type.clone());
    let actor_id = |e: &NewLogEntry| e.actor_id.clone().or_else(|| default_actor_id.clone());
    let mut inserted = 0;
    for chunk in rows.chunks(MAX_INGEST_ENTRIES) {
        inserted += on_db!(tx, c => sqlite: {
            let mut sql = String::with_capacity(64 + chunk.len() * INSERT_COLUMN_COUNT * 2 + 3);
            sql.push_str("INSERT INTO logs (");
            sql.push_str(INSERT_COLUMNS);
            sql.push_str(") VALUES ");
            let one = format!("({})", vec!["?"; INSERT_COLUMN_COUNT].join(","));
            for i in 0..chunk.len() {
                if i > 0 {
                    sql.push(',');
                }
                sql.push_str(&one);
            }
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
            for row in chunk {
                let e = &row.entry;
                query = query
                    .bind(tenant_id)
                    .bind(now)
                    .bind(e.trace_id)
                    .bind(e.span_id)
                    .bind(e.parent_span_id)
                    .bind(row.source.as_str())
                    .bind(e.category.as_str())
                    .bind(row.level.as_str())
                    .bind(e.operation.trim())
                    .bind(e.status.map(|s| s.as_str()))
                    .bind(e.duration_ms)
                    .bind(Json(&row.payload))
                    .bind(e.error.as_ref().filter(|v| !v.is_null()).map(Json))
                    .bind(e.workspace_id)
                    .bind(e.workflow_id)
                    .bind(e.task_id)
                    .bind(e.work_item_id)
                    .bind(e.activation_id)
                    .bind(e.stage_name.as_deref())
                    .bind(e.is_orchestrator_task)
                    .bind(e.execution_backend.as_deref())
                    .bind(e.tool_owner.as_deref())
                    .bind(e.role.as_deref())
                    .bind(actor_type(e))
                    .bind(actor_id(e))
                    .bind(e.actor_name.as_deref())
                    .bind(e.resource_type.as_deref())
                    .bind(e.resource_id.as_deref())
                    .bind(e.resource_name.as_deref());
            }
            query.execute(c).await.map(|r| r.rows_affected())
        },
        postgres: {
            let uuids = |f: fn(&NewLogEntry) -> Option<Uuid>| -> Vec<Option<Uuid>> {
                chunk.iter().map(|r| f(&r.entry)).collect()
            };
            let texts = |f: &dyn Fn(&PreparedLog) -> Option<String>| -> Vec<Option<String>> {
                chunk.iter().map(f).collect()
            };
            sqlx::query(
                "INSERT INTO logs (tenant_id, created_at, trace_id, span_id, parent_span_id, source, \
                 category, level, operation, status, duration_ms, payload, error, workspace_id, \
                 workflow_id, task_id, work_item_id, activation_id, stage_name, is_orchestrator_task, \
                 execution_backend, tool_owner, role, actor_type, actor_id, actor_name, resource_type, \
                 resource_id, resource_name) \
                 SELECT $1, $2, * FROM UNNEST($3::uuid[], $4::uuid[], $5::uuid[], $6::text[], \
                 $7::text[], $8::text[], $9::text[], $10::text[], $11::bigint[], $12::jsonb[], \
                 $13::jsonb[], $14::uuid[], $15::uuid[], $16::uuid[], $17::uuid[], $18::uuid[], \
                 $19::text[], $20::bool[], $21::text[], $22::text[], $23::text[], $24::text[], \
                 $25::text[], $26::text[], $27::text[], $28::text[], $29::text[])",
            )
            .bind(tenant_id)
            .bind(now)
            .bind(uuids(|e| e.trace_id))
            .bind(uuids(|e| e.span_id))
            .bind(uuids(|e| e.parent_span_id))
            .bind(chunk.iter().map(|r| r.source.as_str()).collect::<Vec<_>>())
            .bind(chunk.iter().map(|r| r.entry.category.as_str()).collect::<Vec<_>>())
            .bind(chunk.iter().map(|r| r.level.as_str()).collect::<Vec<_>>())
            .bind(chunk.iter().map(|r| r.entry.operation.trim()).collect::<Vec<_>>())
            .bind(texts(&|r| r.entry.status.map(|s| s.as_str().to_owned())))
            .bind(chunk.iter().map(|r| r.entry.duration_ms).collect::<Vec<_>>())
            .bind(chunk.iter().map(|r| Json(&r.payload)).collect::<Vec<_>>())
            .bind(
                chunk
                    .iter()
                    .map(|r| r.entry.error.as_ref().filter(|v| !v.is_null()).map(Json))
                    .collect::<Vec<_>>(),
            )
            .bind(uuids(|e| e.workspace_id))
            .bind(uuids(|e| e.workflow_id))
            .bind(uuids(|e| e.task_id))
            .bind(uuids(|e| e.work_item_id))
            .bind(uuids(|e| e.activation_id))
            .bind(texts(&|r| r.entry.stage_name.clone()))
            .bind(chunk.iter().map(|r| r.entry.is_orchestrator_task).collect::<Vec<_>>())
            .bind(texts(&|r| r.entry.execution_backend.clone()))
            .bind(texts(&|r| r.entry.tool_owner.clone()))
            .bind(texts(&|r| r.entry.role.clone()))
            .bind(texts(&|r| actor_type(&r.entry)))
            .bind(texts(&|r| actor_id(&r.entry)))
            .bind(texts(&|r| r.entry.actor_name.clone()))
            .bind(texts(&|r| r.entry.resource_type.clone()))
            .bind(texts(&|r| r.entry.resource_id.clone()))
            .bind(texts(&|r| r.entry.resource_name.clone()))
            .execute(c)
            .await
            .map(|r| r.rows_affected())
        })?;
    }
    Ok(inserted)
}

impl ControlPlane {
    /// `POST /logs/ingest`: 1 to 1,000 entries, all or nothing.
    pub async fn ingest_logs(
        &self,
        caller: &Caller,
        entries: Vec<NewLogEntry>,
    ) -> Result<Ingested> {
        if entries.is_empty() || entries.len() > MAX_INGEST_ENTRIES {
            return Err(Error::invalid_field(
                "entries",
                format!("must hold 1 to {MAX_INGEST_ENTRIES} entries"),
            ));
        }
        let mut issues = crate::api::Issues::default();
        let prepared: Vec<PreparedLog> = entries
            .into_iter()
            .enumerate()
            .map(|(i, e)| prepare(i, e, &mut issues))
            .collect();
        if !issues.field_errors.is_empty() {
            return Err(Error::Validation {
                message: "some log entries are not valid; nothing was written".into(),
                issues: Some(issues),
            });
        }
        let mut tx = self.store().begin().await?;
        let inserted = insert_rows(&mut tx, Some(caller), caller.tenant_id, &prepared).await?;
        tx.mark_logs_written();
        tx.commit().await?;
        Ok(Ingested { inserted })
    }
}
