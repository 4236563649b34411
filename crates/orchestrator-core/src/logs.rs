//! Logs: the structured execution log.
//!
//! Runtimes ingest rows in batches ([`ControlPlane::ingest_logs`], one
//! multi-row INSERT per batch inside one transaction: all or nothing); the
//! platform writes its own rows (source `platform`) through
//! [`write_platform_log`] inside the transaction of the operation it
//! describes (auth events today, task lifecycle operations when tasks land).
//!
//! ## Keyset order and cursors
//!
//! Rows are read by an increasing key. On SQLite the key is the row id: the
//! single writer makes ids commit in order. On PostgreSQL identity values
//! commit out of order, so the key is `(txid, id)`, where `txid` is the
//! writing transaction's id, and readers that follow the log forwards
//! (streams) only read rows with
//! `txid < pg_snapshot_xmin(pg_current_snapshot())`: those transactions have
//! all finished, and any later write gets a larger txid, so nothing can ever
//! appear behind a reader's position. (A transaction held open anywhere in the
//! cluster therefore delays streams until it ends; sessions close idle
//! transactions after 60 s.) `GET /logs` pages backwards (newest first) over
//! the same key, so a row committed after the first page was read is newer
//! than everything already paged and never shows up out of turn.
//!
//! The list cursor is opaque (`base64url("v1:<txid>:<id>")`). A row's public
//! `id` is its integer id as a string; streams use it as the SSE `id:`, and
//! resuming after it looks up that row's `txid`.

use crate::api::logs::{MAX_INGEST_ENTRIES, MAX_LOG_PAGE, parse_time_bound};
use crate::api::{
    Ingested, LogActor, LogCategory, LogDetail, LogFilter, LogGroup, LogGroupBy, LogLevel, LogPage,
    LogRow, LogSource, LogStats, LogStatus, NewLogEntry, Timestamp,
};
use crate::auth::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::store::{Access, Dialect, Tx, on_db};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sqlx::types::Json;
use uuid::Uuid;

/// Columns written per row (everything but `id` and `txid`).
const INSERT_COLUMNS: &str = "tenant_id, created_at, trace_id, span_id, parent_span_id, source, \
    category, level, operation, status, duration_ms, payload, error, workspace_id, workflow_id, \
    task_id, work_item_id, activation_id, stage_name, is_orchestrator_task, execution_backend, \
    tool_owner, role, actor_type, actor_id, actor_name, resource_type, resource_id, resource_name";
const INSERT_COLUMN_COUNT: usize = 29;
/// Columns read (after the key columns).
const SELECT_COLUMNS: &str = "created_at, trace_id, span_id, parent_span_id, source, category, \
    level, operation, status, duration_ms, payload, error, workspace_id, workflow_id, task_id, \
    work_item_id, activation_id, stage_name, is_orchestrator_task, execution_backend, tool_owner, \
    role, actor_type, actor_id, actor_name, resource_type, resource_id, resource_name";
/// Longest free-text linkage, actor or resource field.
const MAX_TEXT: usize = 1000;
/// Groups and helper entries returned at most.
const MAX_GROUPS: i64 = 1000;

/// A position in the keyset order: `(txid, id)`; `txid` is 0 on SQLite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct LogKey {
    pub txid: i64,
    pub id: i64,
}

impl LogKey {
    /// The opaque cursor text.
    pub fn encode(self) -> String {
        URL_SAFE_NO_PAD.encode(format!("v1:{}:{}", self.txid, self.id))
    }

    /// Parses a cursor; `400 VALIDATION_ERROR` when it is not one of ours.
    pub fn decode(text: &str) -> Result<Self> {
        let bad = || Error::invalid_field("cursor", "is not a cursor this server issued");
        let raw = URL_SAFE_NO_PAD.decode(text.trim()).map_err(|_| bad())?;
        let raw = String::from_utf8(raw).map_err(|_| bad())?;
        let mut parts = raw.split(':');
        match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some("v1"), Some(txid), Some(id), None) => Ok(Self {
                txid: txid.parse().map_err(|_| bad())?,
                id: id.parse().map_err(|_| bad())?,
            }),
            _ => Err(bad()),
        }
    }
}

/// Which way a read walks the keyset order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Oldest first; on PostgreSQL only rows below the safe high-water mark
    /// (for followers, which must never miss a row).
    Forward,
    /// Oldest first over every committed row (one-shot reads: exports).
    ForwardCommitted,
    /// Newest first.
    Backward,
}

/// A validated filter: the wire filter with its time bounds resolved.
#[derive(Debug, Clone, Default)]
pub struct ResolvedFilter {
    filter: LogFilter,
    since: Option<DateTime<Utc>>,
    until: Option<DateTime<Utc>>,
}

impl ResolvedFilter {
    /// Checks the filter; bad `since`/`until` is `400 VALIDATION_ERROR`.
    pub fn new(filter: LogFilter) -> Result<Self> {
        let now = Timestamp::now();
        let bound = |field: &str, text: &Option<String>| -> Result<Option<DateTime<Utc>>> {
            text.as_deref()
                .map(|t| {
                    parse_time_bound(t, now).map(|t| t.as_datetime()).ok_or_else(|| {
                        Error::invalid_field(
                            field,
                            "must be an RFC 3339 timestamp or a duration such as 30s, 10m, 2h, 1d",
                        )
                    })
                })
                .transpose()
        };
        let since = bound("since", &filter.since)?;
        let until = bound("until", &filter.until)?;
        Ok(Self {
            filter,
            since,
            until,
        })
    }

    /// The filter's lower time bound (streams start there when given).
    pub fn since(&self) -> Option<DateTime<Utc>> {
        self.since
    }
}

/// A value bound into dynamic SQL.
#[derive(Debug, Clone)]
enum Bind {
    Uuid(Uuid),
    Text(String),
    Int(i64),
    Time(DateTime<Utc>),
}

/// Dynamic SQL with `$n` parameters.
#[derive(Debug, Default)]
struct Sql {
    text: String,
    binds: Vec<Bind>,
}

impl Sql {
    fn param(&mut self, bind: Bind) -> String {
        self.binds.push(bind);
        format!("${}", self.binds.len())
    }

    fn push(&mut self, text: &str) {
        self.text.push_str(text);
    }
}

/// Binds `sql.binds` onto a query of either backend.
macro_rules! bind_all {
    ($query:expr, $binds:expr) => {{
        let mut query = $query;
        for bind in $binds {
            query = match bind {
                Bind::Uuid(v) => query.bind(*v),
                Bind::Text(v) => query.bind(v.as_str()),
                Bind::Int(v) => query.bind(*v),
                Bind::Time(v) => query.bind(*v),
            };
        }
        query
    }};
}

/// Appends ` AND ...` for every filter (the tenant condition comes first).
fn push_filter(sql: &mut Sql, dialect: Dialect, tenant_id: Uuid, filter: &ResolvedFilter) {
    let p = sql.param(Bind::Uuid(tenant_id));
    sql.push(&format!(" WHERE tenant_id = {p}"));
    let f = &filter.filter;
    let uuids = [
        ("workspace_id", f.workspace_id),
        ("workflow_id", f.workflow_id),
        ("task_id", f.task_id),
        ("work_item_id", f.work_item_id),
        ("activation_id", f.activation_id),
        ("trace_id", f.trace_id),
    ];
    for (column, value) in uuids {
        if let Some(value) = value {
            let p = sql.param(Bind::Uuid(value));
            sql.push(&format!(" AND {column} = {p}"));
        }
    }
    let texts = [
        ("stage_name", f.stage_name.clone()),
        ("source", f.source.map(|v| v.as_str().to_owned())),
        ("category", f.category.map(|v| v.as_str().to_owned())),
        ("level", f.level.map(|v| v.as_str().to_owned())),
        ("operation", f.operation.clone()),
        ("status", f.status.map(|v| v.as_str().to_owned())),
        ("role", f.role.clone()),
    ];
    for (column, value) in texts {
        if let Some(value) = value {
            let p = sql.param(Bind::Text(value));
            sql.push(&format!(" AND {column} = {p}"));
        }
    }
    if let Some(since) = filter.since {
        let p = sql.param(Bind::Time(since));
        sql.push(&format!(" AND created_at >= {p}"));
    }
    if let Some(until) = filter.until {
        let p = sql.param(Bind::Time(until));
        sql.push(&format!(" AND created_at < {p}"));
    }
    if let Some(search) = f.search.as_deref().filter(|s| !s.is_empty()) {
        let escaped = search
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        let p = sql.param(Bind::Text(format!("%{escaped}%")));
        match dialect {
            Dialect::Sqlite => sql.push(&format!(
                " AND (operation LIKE {p} ESCAPE '\\' OR payload LIKE {p} ESCAPE '\\')"
            )),
            Dialect::Postgres => sql.push(&format!(
                " AND (operation ILIKE {p} ESCAPE '\\' OR payload::text ILIKE {p} ESCAPE '\\')"
            )),
        }
    }
}

/// A stored row.
#[derive(Debug, sqlx::FromRow)]
struct Row {
    id: i64,
    txid: i64,
    created_at: DateTime<Utc>,
    trace_id: Option<Uuid>,
    span_id: Option<Uuid>,
    parent_span_id: Option<Uuid>,
    source: String,
    category: String,
    level: String,
    operation: String,
    status: Option<String>,
    duration_ms: Option<i64>,
    payload: Json<Value>,
    error: Option<Json<Value>>,
    workspace_id: Option<Uuid>,
    workflow_id: Option<Uuid>,
    task_id: Option<Uuid>,
    work_item_id: Option<Uuid>,
    activation_id: Option<Uuid>,
    stage_name: Option<String>,
    is_orchestrator_task: Option<bool>,
    execution_backend: Option<String>,
    tool_owner: Option<String>,
    role: Option<String>,
    actor_type: Option<String>,
    actor_id: Option<String>,
    actor_name: Option<String>,
    resource_type: Option<String>,
    resource_id: Option<String>,
    resource_name: Option<String>,
}

impl Row {
    fn key(&self) -> LogKey {
        LogKey {
            txid: self.txid,
            id: self.id,
        }
    }

    fn into_api(self, detail: LogDetail) -> Result<LogRow> {
        let parse = |field: &str, text: &str| -> Error {
            Error::internal(format!("stored log {field} `{text}` is not valid"))
        };
        let (payload, error) = match detail {
            LogDetail::Full => (Some(self.payload.0), self.error.map(|e| e.0)),
            LogDetail::Summary => (None, self.error.map(|e| summarize_error(&e.0))),
        };
        Ok(LogRow {
            id: self.id.to_string(),
            created_at: self.created_at.into(),
            trace_id: self.trace_id,
            span_id: self.span_id,
            parent_span_id: self.parent_span_id,
            source: self
                .source
                .parse::<LogSource>()
                .map_err(|_| parse("source", &self.source))?,
            category: self
                .category
                .parse::<LogCategory>()
                .map_err(|_| parse("category", &self.category))?,
            level: self
                .level
                .parse::<LogLevel>()
                .map_err(|_| parse("level", &self.level))?,
            operation: self.operation,
            status: self
                .status
                .as_deref()
                .map(|s| s.parse::<LogStatus>().map_err(|_| parse("status", s)))
                .transpose()?,
            duration_ms: self.duration_ms,
            payload,
            error,
            workspace_id: self.workspace_id,
            workflow_id: self.workflow_id,
            task_id: self.task_id,
            work_item_id: self.work_item_id,
            activation_id: self.activation_id,
            stage_name: self.stage_name,
            is_orchestrator_task: self.is_orchestrator_task,
            execution_backend: self.execution_backend,
            tool_owner: self.tool_owner,
            role: self.role,
            actor_type: self.actor_type,
            actor_id: self.actor_id,
            actor_name: self.actor_name,
            resource_type: self.resource_type,
            resource_id: self.resource_id,
            resource_name: self.resource_name,
        })
    }
}

/// The lighter error of `detail=summary`: `code`, `category` and a message cut
/// to 200 characters; a non-object error becomes its text as the message.
fn summarize_error(error: &Value) -> Value {
    let text = |v: Option<&Value>| {
        v.map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    };
    let (message, code, category) = match error {
        Value::Object(map) => (
            text(map.get("message")),
            map.get("code").cloned(),
            map.get("category").cloned(),
        ),
        Value::Null => return Value::Null,
        other => (text(Some(other)), None, None),
    };
    let message = message.map(|m| m.chars().take(200).collect::<String>());
    let mut out = serde_json::Map::new();
    out.insert("message".into(), message.map_or(Value::Null, Value::String));
    if let Some(code) = code {
        out.insert("code".into(), code);
    }
    if let Some(category) = category {
        out.insert("category".into(), category);
    }
    Value::Object(out)
}

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
    let prepared = PreparedLog {
        source: LogSource::Platform,
        level: log.level,
        payload: log.payload,
        entry,
    };
    insert_rows(tx, Some(caller), tenant_id, &[prepared]).await?;
    Ok(())
}

/// Validates one ingest entry, adding the caller's actor fields when absent.
fn prepare(index: usize, entry: NewLogEntry, issues: &mut crate::api::Issues) -> PreparedLog {
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
async fn insert_rows(
    tx: &mut Tx,
    caller: Option<&Caller>,
    tenant_id: Uuid,
    rows: &[PreparedLog],
) -> Result<u64> {
    let now = Timestamp::now().as_datetime();
    let (default_actor_type, default_actor_id) = match caller {
        Some(c) => (
            Some(c.owner_type.clone()),
            Some(c.owner_id.unwrap_or(c.key_id).to_string()),
        ),
        None => (None, None),
    };
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
    tx.mark_logs_written();
    Ok(inserted)
}

/// The select list: the key columns, then the rest.
fn select_list(dialect: Dialect) -> String {
    match dialect {
        Dialect::Sqlite => format!("SELECT id, 0 AS txid, {SELECT_COLUMNS} FROM logs"),
        Dialect::Postgres => format!("SELECT id, txid, {SELECT_COLUMNS} FROM logs"),
    }
}

/// Reads up to `limit` rows after `from` (exclusive) in `direction`.
async fn read_rows(
    access: &mut impl Access,
    dialect: Dialect,
    tenant_id: Uuid,
    filter: &ResolvedFilter,
    from: Option<LogKey>,
    direction: Direction,
    limit: i64,
) -> Result<Vec<Row>> {
    let mut sql = Sql {
        text: select_list(dialect),
        binds: Vec::new(),
    };
    push_filter(&mut sql, dialect, tenant_id, filter);
    let (cmp, order) = match direction {
        Direction::Forward | Direction::ForwardCommitted => (">", "ASC"),
        Direction::Backward => ("<", "DESC"),
    };
    if let Some(from) = from {
        match dialect {
            Dialect::Sqlite => {
                let p = sql.param(Bind::Int(from.id));
                sql.push(&format!(" AND id {cmp} {p}"));
            }
            Dialect::Postgres => {
                let t = sql.param(Bind::Int(from.txid));
                let i = sql.param(Bind::Int(from.id));
                sql.push(&format!(" AND (txid, id) {cmp} ({t}, {i})"));
            }
        }
    }
    if dialect == Dialect::Postgres && direction == Direction::Forward {
        sql.push(" AND txid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint");
    }
    match dialect {
        Dialect::Sqlite => sql.push(&format!(" ORDER BY id {order}")),
        Dialect::Postgres => sql.push(&format!(" ORDER BY txid {order}, id {order}")),
    }
    let p = sql.param(Bind::Int(limit));
    sql.push(&format!(" LIMIT {p}"));
    let rows: Vec<Row> = on_db!(access, c => bind_all!(
        sqlx::query_as::<_, Row>(sqlx::AssertSqlSafe(sql.text.clone())),
        &sql.binds
    ).fetch_all(c).await)?;
    Ok(rows)
}

/// The key of row `id` in the tenant (for resuming after a row id). A row
/// that no longer exists resumes after the newest row at or below its id.
async fn key_of_row(
    access: &mut impl Access,
    dialect: Dialect,
    tenant_id: Uuid,
    id: i64,
) -> Result<LogKey> {
    if dialect == Dialect::Sqlite {
        return Ok(LogKey { txid: 0, id });
    }
    let found: Option<(i64,)> = on_db!(access, c => sqlx::query_as(
        "SELECT txid FROM logs WHERE tenant_id = $1 AND id <= $2 ORDER BY id DESC LIMIT 1"
    )
    .bind(tenant_id)
    .bind(id)
    .fetch_optional(c)
    .await)?;
    Ok(LogKey {
        txid: found.map_or(0, |(t,)| t),
        id,
    })
}

/// The newest committed key now: where a live stream without a resume point
/// starts ("rows committed from now on"; rows of transactions that were
/// already running and commit later with a smaller txid are not part of it).
async fn head_key(access: &mut impl Access, tenant_id: Uuid) -> Result<LogKey> {
    let found: Option<(i64, i64)> = on_db!(access, c => sqlite: sqlx::query_as(
        "SELECT 0, id FROM logs WHERE tenant_id = $1 ORDER BY id DESC LIMIT 1"
    )
    .bind(tenant_id)
    .fetch_optional(c)
    .await,
    postgres: sqlx::query_as(
        "SELECT txid, id FROM logs WHERE tenant_id = $1 \
         ORDER BY txid DESC, id DESC LIMIT 1"
    )
    .bind(tenant_id)
    .fetch_optional(c)
    .await)?;
    Ok(found.map_or(LogKey { txid: 0, id: 0 }, |(txid, id)| LogKey { txid, id }))
}

/// Where a stream or tail starts.
#[derive(Debug, Clone)]
pub enum StreamStart {
    /// After this cursor (from `cursor`).
    Cursor(LogKey),
    /// After this row id (from `Last-Event-ID` or `after`).
    AfterRow(i64),
    /// At the oldest row matching the filter (`since` given).
    Beginning,
    /// Only rows written from now on.
    Now,
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
        tx.commit().await?;
        Ok(Ingested { inserted })
    }

    /// `GET /logs`: newest first, keyset pages of up to 500 rows.
    pub async fn query_logs(
        &self,
        caller: &Caller,
        filter: LogFilter,
        detail: LogDetail,
        cursor: Option<&str>,
        per_page: u32,
    ) -> Result<LogPage> {
        let filter = ResolvedFilter::new(filter)?;
        let from = cursor.map(LogKey::decode).transpose()?;
        let per_page = per_page.clamp(1, MAX_LOG_PAGE);
        let mut conn = self.store().read().await?;
        let mut rows = read_rows(
            &mut conn,
            self.store().dialect(),
            caller.tenant_id,
            &filter,
            from,
            Direction::Backward,
            i64::from(per_page) + 1,
        )
        .await?;
        let more = rows.len() > per_page as usize;
        rows.truncate(per_page as usize);
        let next_cursor = more
            .then(|| rows.last().map(|r| r.key().encode()))
            .flatten();
        let items = rows
            .into_iter()
            .map(|r| r.into_api(detail))
            .collect::<Result<Vec<_>>>()?;
        Ok(LogPage { items, next_cursor })
    }

    /// `GET /logs/:id` (the integer id as text); `None` when there is no
    /// such row in the caller's tenant.
    pub async fn get_log(&self, caller: &Caller, id: &str) -> Result<Option<LogRow>> {
        let Ok(id) = id.trim().parse::<i64>() else {
            return Ok(None);
        };
        let mut conn = self.store().read().await?;
        let sql = format!(
            "{} WHERE tenant_id = $1 AND id = $2",
            select_list(self.store().dialect())
        );
        let row: Option<Row> = on_db!(&mut conn, c => sqlx::query_as(sqlx::AssertSqlSafe(sql.clone()))
            .bind(caller.tenant_id)
            .bind(id)
            .fetch_optional(c)
            .await)?;
        row.map(|r| r.into_api(LogDetail::Full)).transpose()
    }

    /// Resolves where a stream starts into a key.
    pub async fn log_stream_start(
        &self,
        caller: &Caller,
        filter: &ResolvedFilter,
        start: StreamStart,
    ) -> Result<LogKey> {
        let dialect = self.store().dialect();
        let mut conn = self.store().read().await?;
        match start {
            StreamStart::Cursor(key) => Ok(key),
            StreamStart::AfterRow(id) => key_of_row(&mut conn, dialect, caller.tenant_id, id).await,
            StreamStart::Beginning if filter.since.is_some() => Ok(LogKey { txid: 0, id: 0 }),
            StreamStart::Beginning | StreamStart::Now => {
                head_key(&mut conn, caller.tenant_id).await
            }
        }
    }

    /// Forward read for streams and ascending exports: up to `limit` rows
    /// after `from`, with the key of each. Holds a connection only while the
    /// query runs.
    pub async fn read_logs_forward(
        &self,
        caller: &Caller,
        filter: &ResolvedFilter,
        from: LogKey,
        limit: u32,
        detail: LogDetail,
    ) -> Result<Vec<(LogKey, LogRow)>> {
        let mut conn = self.store().read().await?;
        let rows = read_rows(
            &mut conn,
            self.store().dialect(),
            caller.tenant_id,
            filter,
            Some(from),
            Direction::Forward,
            i64::from(limit),
        )
        .await?;
        drop(conn);
        rows.into_iter()
            .map(|r| {
                let key = r.key();
                r.into_api(detail).map(|row| (key, row))
            })
            .collect()
    }

    /// Read for exports: every committed row after `from` (`None` = from
    /// the start) in `direction` (`ForwardCommitted` or `Backward`).
    pub async fn read_logs_page(
        &self,
        caller: &Caller,
        filter: &ResolvedFilter,
        from: Option<LogKey>,
        direction: Direction,
        limit: u32,
    ) -> Result<Vec<(LogKey, LogRow)>> {
        let mut conn = self.store().read().await?;
        let rows = read_rows(
            &mut conn,
            self.store().dialect(),
            caller.tenant_id,
            filter,
            from,
            direction,
            i64::from(limit),
        )
        .await?;
        drop(conn);
        rows.into_iter()
            .map(|r| {
                let key = r.key();
                r.into_api(LogDetail::Full).map(|row| (key, row))
            })
            .collect()
    }

    /// `GET /logs/stats`: counts per value of `group_by` under the filters,
    /// largest first (at most 1,000 groups).
    pub async fn log_stats(
        &self,
        caller: &Caller,
        filter: LogFilter,
        group_by: LogGroupBy,
    ) -> Result<LogStats> {
        let filter = ResolvedFilter::new(filter)?;
        let dialect = self.store().dialect();
        let column = group_by.as_str();
        let mut sql = Sql {
            text: format!("SELECT {column} AS value, COUNT(*) AS n FROM logs"),
            binds: Vec::new(),
        };
        push_filter(&mut sql, dialect, caller.tenant_id, &filter);
        sql.push(&format!(
            " GROUP BY {column} ORDER BY n DESC, {column} LIMIT {MAX_GROUPS}"
        ));
        let mut conn = self.store().read().await?;
        let groups: Vec<LogGroup> = match group_by {
            LogGroupBy::TaskId | LogGroupBy::WorkItemId | LogGroupBy::ActivationId => {
                let rows: Vec<(Option<Uuid>, i64)> = on_db!(&mut conn, c => bind_all!(
                    sqlx::query_as::<_, (Option<Uuid>, i64)>(sqlx::AssertSqlSafe(sql.text.clone())),
                    &sql.binds
                ).fetch_all(c).await)?;
                rows.into_iter()
                    .map(|(v, n)| LogGroup {
                        value: v.map_or(Value::Null, |v| Value::String(v.to_string())),
                        count: n as u64,
                    })
                    .collect()
            }
            LogGroupBy::IsOrchestratorTask => {
                let rows: Vec<(Option<bool>, i64)> = on_db!(&mut conn, c => bind_all!(
                    sqlx::query_as::<_, (Option<bool>, i64)>(sqlx::AssertSqlSafe(sql.text.clone())),
                    &sql.binds
                ).fetch_all(c).await)?;
                rows.into_iter()
                    .map(|(v, n)| LogGroup {
                        value: v.map_or(Value::Null, Value::Bool),
                        count: n as u64,
                    })
                    .collect()
            }
            _ => {
                let rows: Vec<(Option<String>, i64)> = on_db!(&mut conn, c => bind_all!(
                    sqlx::query_as::<_, (Option<String>, i64)>(sqlx::AssertSqlSafe(sql.text.clone())),
                    &sql.binds
                ).fetch_all(c).await)?;
                rows.into_iter()
                    .map(|(v, n)| LogGroup {
                        value: v.map_or(Value::Null, Value::String),
                        count: n as u64,
                    })
                    .collect()
            }
        };
        Ok(LogStats {
            group_by,
            total: groups.iter().map(|g| g.count).sum(),
            groups,
        })
    }

    /// `GET /logs/operations` or `/logs/roles`: the distinct values seen,
    /// sorted (at most 1,000).
    pub async fn log_distinct(&self, caller: &Caller, field: &'static str) -> Result<Vec<String>> {
        debug_assert!(matches!(field, "operation" | "role"));
        let sql = format!(
            "SELECT DISTINCT {field} FROM logs WHERE tenant_id = $1 AND {field} IS NOT NULL \
             ORDER BY {field} LIMIT {MAX_GROUPS}"
        );
        let mut conn = self.store().read().await?;
        let rows: Vec<(String,)> = on_db!(&mut conn, c => sqlx::query_as(sqlx::AssertSqlSafe(sql.clone()))
            .bind(caller.tenant_id)
            .fetch_all(c)
            .await)?;
        Ok(rows.into_iter().map(|(v,)| v).collect())
    }

    /// `GET /logs/actors`: the distinct actors seen (at most 1,000).
    pub async fn log_actors(&self, caller: &Caller) -> Result<Vec<LogActor>> {
        let mut conn = self.store().read().await?;
        let rows: Vec<(Option<String>, Option<String>, Option<String>)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT DISTINCT actor_type, actor_id, actor_name FROM logs WHERE tenant_id = $1 \
             AND (actor_type IS NOT NULL OR actor_id IS NOT NULL) \
             ORDER BY actor_type, actor_id, actor_name LIMIT 1000"
        )
        .bind(caller.tenant_id)
        .fetch_all(c)
        .await)?;
        Ok(rows
            .into_iter()
            .map(|(actor_type, actor_id, actor_name)| LogActor {
                actor_type,
                actor_id,
                actor_name,
            })
            .collect())
    }

    /// `GET /logs/workflows`: the workflow ids that have log rows, most
    /// recently logged first (at most 1,000).
    pub async fn log_workflows(&self, caller: &Caller) -> Result<Vec<Uuid>> {
        let mut conn = self.store().read().await?;
        let rows: Vec<(Uuid, i64)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT workflow_id, MAX(id) AS last FROM logs WHERE tenant_id = $1 \
             AND workflow_id IS NOT NULL GROUP BY workflow_id ORDER BY last DESC LIMIT 1000"
        )
        .bind(caller.tenant_id)
        .fetch_all(c)
        .await)?;
        Ok(rows.into_iter().map(|(id, _)| id).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_garbage() {
        let key = LogKey { txid: 77, id: 12 };
        assert_eq!(LogKey::decode(&key.encode()).unwrap(), key);
        assert!(LogKey::decode("nope").is_err());
        assert!(LogKey::decode(&URL_SAFE_NO_PAD.encode("v1:x:1")).is_err());
    }

    #[test]
    fn summary_errors_keep_code_and_a_short_message() {
        let long = "x".repeat(500);
        let e = summarize_error(&json!({"message": long, "code": "E1", "stack": "..."}));
        assert_eq!(e["code"], "E1");
        assert_eq!(e["message"].as_str().unwrap().len(), 200);
        assert!(e.get("stack").is_none());
    }
}
