//! Writing log rows: runtime batches (`POST /logs/ingest`, one multi-row
//! INSERT per batch, all or nothing) and the platform's own rows, written in
//! the transaction of the operation they describe.

use crate::api::logs::MAX_INGEST_ENTRIES;
use crate::api::{Ingested, LogCategory, LogJson, LogLevel, LogSource, LogStatus, NewLogEntry};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::store::{Access, DeferKind, Tx, WithParts, arg_count, on_db, push_arg};
use chrono::{DateTime, Utc};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use sqlx::postgres::PgArguments;
use sqlx::types::Json;
use std::any::Any;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use uuid::Uuid;

/// Longest free-text linkage, actor or resource field.
pub(crate) const MAX_TEXT: usize = 1000;

/// A row ready to insert (validated, defaults resolved). Its `payload` and
/// `error` are JSON text, bound as they are: an ingested entry's as it
/// arrived, a platform row's written once.
#[derive(Debug, Clone)]
pub(crate) struct PreparedLog {
    entry: NewLogEntry<Box<RawValue>>,
    source: LogSource,
    level: LogLevel,
    payload: Box<RawValue>,
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
    entry.error = (log.error.filter(|e| !e.is_null()))
        .map(LogJson::into_raw)
        .transpose()
        .map_err(Error::internal)?;
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
        payload: log.payload.into_raw().map_err(Error::internal)?,
        entry,
    };
    // The actor is resolved now: the batch writes rows of several callers.
    let (actor_type, actor_id) = caller_actor(Some(caller));
    let entry = &mut prepared.entry;
    entry.actor_type = entry.actor_type.take().or(actor_type);
    entry.actor_id = entry.actor_id.take().or(actor_id);
    let now = tx.now().as_datetime();
    tx.defer(&PLATFORM_LOGS, (tenant_id, now, prepared));
    tx.mark_logs_written();
    Ok(())
}

/// The platform log rows of one tenant in one write batch, stamped with
/// the latest time (by the control plane's clock) its requests deferred
/// one: the rows become visible together at the batch's commit, and one
/// time for the run keeps it bound once per statement.
struct TenantRun {
    tenant_id: Uuid,
    created_at: DateTime<Utc>,
    rows: Vec<PreparedLog>,
}

/// The platform log rows one write batch deferred, in runs of one tenant.
fn tenant_runs(rows: Vec<Box<dyn Any + Send>>) -> Vec<TenantRun> {
    let mut runs: Vec<TenantRun> = Vec::new();
    for (tenant_id, at, row) in rows.into_iter().filter_map(|row| {
        row.downcast::<(Uuid, DateTime<Utc>, PreparedLog)>()
            .ok()
            .map(|row| *row)
    }) {
        match runs.last_mut() {
            Some(run) if run.tenant_id == tenant_id => {
                run.created_at = run.created_at.max(at);
                run.rows.push(row);
            }
            _ => runs.push(TenantRun {
                tenant_id,
                created_at: at,
                rows: vec![row],
            }),
        }
    }
    runs
}

/// Writes the platform log rows the requests of one write batch deferred
/// (`store::deferred::FlushFn`): one insert per run of rows of one tenant.
fn flush_platform_logs(
    db: &mut dyn Access,
    rows: Vec<Box<dyn Any + Send>>,
    _parts: Option<WithParts>,
) -> Pin<Box<dyn Future<Output = Result<Vec<crate::api::Event>>> + Send + '_>> {
    let runs = tenant_runs(rows);
    Box::pin(async move {
        for run in runs {
            insert_rows(db, None, run.tenant_id, run.created_at, &run.rows).await?;
        }
        Ok(Vec::new())
    })
}

/// The platform log rows of one write batch as `WITH` parts of the batch's
/// event insert on PostgreSQL (`store::deferred::WithPartFn`): the statements
/// of [`insert_rows`], one per run of one tenant (and chunk).
fn platform_logs_part(
    rows: Vec<Box<dyn Any + Send>>,
    args: &mut PgArguments,
) -> Result<Vec<String>> {
    let mut statements = Vec::new();
    for TenantRun {
        tenant_id,
        created_at,
        rows: run,
    } in tenant_runs(rows)
    {
        for chunk in run.chunks(MAX_INGEST_ENTRIES) {
            // Platform rows carry their actor already (`write_platform_log`).
            let cells: Vec<[Cell<'_>; COLUMNS.len()]> = chunk
                .iter()
                .map(|row| {
                    cells(
                        row,
                        row.entry.actor_type.as_deref(),
                        row.entry.actor_id.as_deref(),
                    )
                })
                .collect();
            let (columns, names) = filled_columns(&cells);
            statements.push(
                pg_insert(args, tenant_id, created_at, &cells, &columns, &names)
                    .map_err(Error::internal)?,
            );
        }
    }
    Ok(statements)
}

/// Platform log rows, deferred to their batch's commit; on PostgreSQL
/// written by the batch's event statement ([`DeferKind`]).
static PLATFORM_LOGS: DeferKind = DeferKind {
    name: "platform log",
    flush: flush_platform_logs,
    with_part: Some(platform_logs_part),
    hosts: false,
};

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
pub(crate) fn prepare<J: LogJson>(
    index: usize,
    entry: NewLogEntry<J>,
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
    // Text a value cannot be written as (a `Value` never fails) is refused.
    let mut unwritable = None;
    let mut entry = entry.map_json(|json| {
        json.into_raw().unwrap_or_else(|e| {
            unwritable = Some(e.to_string());
            RawValue::NULL.to_owned()
        })
    });
    if let Some(message) = unwritable {
        issue("payload", &message);
    }
    entry.error = entry.error.filter(|e| !e.is_null());
    PreparedLog {
        source: entry.source.unwrap_or(LogSource::Runtime),
        level: entry.level.unwrap_or(LogLevel::Info),
        payload: entry.payload.take().unwrap_or_else(empty_object),
        entry,
    }
}

/// `{}`, the payload of an entry that has none.
fn empty_object() -> Box<RawValue> {
    RawValue::from_string("{}".to_owned()).unwrap_or_else(|_| RawValue::NULL.to_owned())
}

/// Inserts rows in `tx`, one statement per chunk of up to
/// [`MAX_INGEST_ENTRIES`] rows.
///
/// The statement names only the columns some row of the chunk fills: of
/// the 22 optional ones, a runtime's tool-call rows fill four, and binding
/// all 29 columns a row made 18 of every 29 values a NULL, most of the
/// writer's work for a batch (BENCHMARKS.md, item 8). The tenant and the
/// time, the same for every row, are bound once. On SQLite that is `INSERT ... SELECT ?, ?, * FROM
/// (VALUES ...)` with positional `?` parameters (1,000 rows x 27 columns
/// stays under SQLite's 32,766; numbered `$n` names would make every bind a
/// linear name lookup), on PostgreSQL a binary `COPY` of the chunk
/// ([`pg_copy`]). The platform rows a write batch defers go into its event
/// statement instead ([`pg_insert`]).
pub(crate) async fn insert_rows(
    tx: &mut (impl Access + ?Sized),
    caller: Option<&Caller>,
    tenant_id: Uuid,
    now: DateTime<Utc>,
    rows: &[PreparedLog],
) -> Result<u64> {
    let (default_actor_type, default_actor_id) = caller_actor(caller);
    let actors: Vec<(Option<&str>, Option<&str>)> = rows
        .iter()
        .map(|row| {
            let e = &row.entry;
            (
                e.actor_type.as_deref().or(default_actor_type.as_deref()),
                e.actor_id.as_deref().or(default_actor_id.as_deref()),
            )
        })
        .collect();
    let mut inserted = 0;
    for (chunk, actors) in rows
        .chunks(MAX_INGEST_ENTRIES)
        .zip(actors.chunks(MAX_INGEST_ENTRIES))
    {
        let cells: Vec<[Cell<'_>; COLUMNS.len()]> = chunk
            .iter()
            .zip(actors)
            .map(|(row, &(actor_type, actor_id))| cells(row, actor_type, actor_id))
            .collect();
        // Required columns always; an optional one when some row fills it.
        let (columns, names) = filled_columns(&cells);
        inserted += on_db!(tx, c => sqlite: {
            let one = format!("({})", vec!["?"; columns.len()].join(","));
            let mut sql = format!("INSERT INTO logs (tenant_id, created_at, {names}) SELECT ?, ?, * FROM (VALUES ");
            sql.reserve(cells.len() * (one.len() + 1) + 1);
            for i in 0..cells.len() {
                if i > 0 {
                    sql.push(',');
                }
                sql.push_str(&one);
            }
            sql.push(')');
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(tenant_id).bind(now);
            // sqlx copies a bound `&str` into a new `Arc<String>` (two
            // allocations, freed on SQLite's worker thread), while an
            // `Arc<str>` is bound as it is. A batch's rows repeat a few
            // texts (the enum values, operation names, the caller's actor),
            // so each distinct one is copied once per statement.
            let mut shared: HashMap<&str, Arc<str>> = HashMap::new();
            for row in &cells {
                for &c in &columns {
                    query = match row[c] {
                        Cell::Uuid(v) => query.bind(v),
                        Cell::Text(v) => query.bind(v.map(|text| {
                            shared.entry(text).or_insert_with(|| Arc::from(text)).clone()
                        })),
                        Cell::Int(v) => query.bind(v),
                        Cell::Bool(v) => query.bind(v),
                        Cell::Json(v) => query.bind(v.map(|raw| Arc::<str>::from(raw.get()))),
                    };
                }
            }
            query.execute(c).await.map(|r| r.rows_affected())
        },
        postgres: pg_copy(c, tenant_id, now, &cells, &columns, &names).await)?;
    }
    Ok(inserted)
}

/// The PostgreSQL write of one ingest chunk: `COPY logs (...) FROM STDIN`
/// in the binary format, the rows encoded here. Against the `UNNEST`
/// insert of [`pg_insert`] the server neither builds one array per column
/// nor runs an `INSERT ... SELECT` over them: it reads each row straight
/// into the table and its indexes (BENCHMARKS.md, "Log ingest on
/// PostgreSQL"). Two round trips: the `COPY` statement, then the rows and
/// their end.
async fn pg_copy(
    conn: &mut sqlx::PgConnection,
    tenant_id: Uuid,
    now: DateTime<Utc>,
    cells: &[[Cell<'_>; COLUMNS.len()]],
    columns: &[usize],
    names: &str,
) -> sqlx::Result<u64> {
    let rows = copy_rows(tenant_id, now, cells, columns);
    let mut copy = conn
        .copy_in_raw(&format!(
            "COPY logs (tenant_id, created_at, {names}) FROM STDIN (FORMAT binary)"
        ))
        .await?;
    if let Err(e) = copy.send(rows).await {
        copy.abort("the rows could not be sent").await.ok();
        return Err(e);
    }
    copy.finish().await
}

/// `cells` in PostgreSQL's binary `COPY` format: a signature and two empty
/// header words, then per row its field count and each field as a length
/// (-1 for NULL) and the type's binary form, then -1 as the end.
fn copy_rows(
    tenant_id: Uuid,
    now: DateTime<Utc>,
    cells: &[[Cell<'_>; COLUMNS.len()]],
    columns: &[usize],
) -> Vec<u8> {
    fn field(out: &mut Vec<u8>, bytes: &[u8]) {
        out.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
        out.extend_from_slice(bytes);
    }
    // timestamptz: microseconds since 2000-01-01 00:00 UTC.
    const PG_EPOCH_MICROS: i64 = 946_684_800_000_000;
    let micros = now.timestamp_micros() - PG_EPOCH_MICROS;
    let mut out = Vec::with_capacity(19 + cells.len() * (40 + columns.len() * 24));
    out.extend_from_slice(b"PGCOPY\n\xff\r\n\0");
    out.extend_from_slice(&0i32.to_be_bytes());
    out.extend_from_slice(&0i32.to_be_bytes());
    let count = (2 + columns.len()) as i16;
    for row in cells {
        out.extend_from_slice(&count.to_be_bytes());
        field(&mut out, tenant_id.as_bytes());
        field(&mut out, &micros.to_be_bytes());
        for &c in columns {
            match row[c] {
                Cell::Uuid(Some(v)) => field(&mut out, v.as_bytes()),
                Cell::Text(Some(v)) => field(&mut out, v.as_bytes()),
                Cell::Int(Some(v)) => field(&mut out, &v.to_be_bytes()),
                Cell::Bool(Some(v)) => field(&mut out, &[u8::from(v)]),
                // jsonb: a version byte (1), then the JSON text.
                Cell::Json(Some(v)) => {
                    let text = v.get().as_bytes();
                    out.extend_from_slice(&(text.len() as i32 + 1).to_be_bytes());
                    out.push(1);
                    out.extend_from_slice(text);
                }
                _ => out.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
    }
    out.extend_from_slice(&(-1i16).to_be_bytes());
    out
}

/// The PostgreSQL insert of one chunk's `cells` (the `columns` named
/// `names`): `INSERT ... SELECT <tenant>, <time>, * FROM UNNEST(<one array
/// per column>)`, its values bound into `args` after those already there.
fn pg_insert(
    args: &mut PgArguments,
    tenant_id: Uuid,
    now: DateTime<Utc>,
    cells: &[[Cell<'_>; COLUMNS.len()]],
    columns: &[usize],
    names: &str,
) -> std::result::Result<String, sqlx::error::BoxDynError> {
    let first = arg_count(args) + 1;
    push_arg(args, tenant_id)?;
    push_arg(args, now)?;
    let arrays = columns
        .iter()
        .enumerate()
        .map(|(i, &c)| format!("${}::{}[]", first + 2 + i, cells[0][c].pg_type()))
        .collect::<Vec<_>>()
        .join(", ");
    for &c in columns {
        let column = cells.iter().map(|row| row[c]);
        match cells[0][c] {
            Cell::Uuid(_) => push_arg(args, column.map(|v| v.uuid()).collect::<Vec<_>>())?,
            Cell::Text(_) => push_arg(args, column.map(|v| v.text()).collect::<Vec<_>>())?,
            Cell::Int(_) => push_arg(args, column.map(|v| v.int()).collect::<Vec<_>>())?,
            Cell::Bool(_) => push_arg(args, column.map(|v| v.bool()).collect::<Vec<_>>())?,
            Cell::Json(_) => {
                push_arg(args, column.map(|v| v.json().map(Json)).collect::<Vec<_>>())?
            }
        }
    }
    Ok(format!(
        "INSERT INTO logs (tenant_id, created_at, {names}) SELECT ${first}, ${}, * FROM UNNEST({arrays})",
        first + 1
    ))
}

/// The columns some row of `cells` fills (the required ones always), and
/// their names for the statement.
fn filled_columns(cells: &[[Cell<'_>; COLUMNS.len()]]) -> (Vec<usize>, String) {
    let columns: Vec<usize> = (0..COLUMNS.len())
        .filter(|&c| c < REQUIRED || cells.iter().any(|row| !row[c].is_null()))
        .collect();
    let names = columns
        .iter()
        .map(|&c| COLUMNS[c])
        .collect::<Vec<_>>()
        .join(", ");
    (columns, names)
}

/// The columns of a log row that a batch writes besides `tenant_id` and
/// `created_at`: the [`REQUIRED`] ones first, then the optional ones, in the
/// order of [`cells`].
const COLUMNS: [&str; 27] = [
    "source",
    "category",
    "level",
    "operation",
    "payload",
    "trace_id",
    "span_id",
    "parent_span_id",
    "status",
    "duration_ms",
    "error",
    "workspace_id",
    "workflow_id",
    "task_id",
    "work_item_id",
    "activation_id",
    "stage_name",
    "is_orchestrator_task",
    "execution_backend",
    "tool_owner",
    "role",
    "actor_type",
    "actor_id",
    "actor_name",
    "resource_type",
    "resource_id",
    "resource_name",
];

/// How many of [`COLUMNS`] every row fills.
const REQUIRED: usize = 5;

/// One value of a row, typed for binding.
#[derive(Debug, Clone, Copy)]
enum Cell<'a> {
    Uuid(Option<Uuid>),
    Text(Option<&'a str>),
    Int(Option<i64>),
    Bool(Option<bool>),
    Json(Option<&'a RawValue>),
}

impl<'a> Cell<'a> {
    fn is_null(&self) -> bool {
        match self {
            Cell::Uuid(v) => v.is_none(),
            Cell::Text(v) => v.is_none(),
            Cell::Int(v) => v.is_none(),
            Cell::Bool(v) => v.is_none(),
            Cell::Json(v) => v.is_none(),
        }
    }

    /// The PostgreSQL type of the column's array.
    fn pg_type(&self) -> &'static str {
        match self {
            Cell::Uuid(_) => "uuid",
            Cell::Text(_) => "text",
            Cell::Int(_) => "bigint",
            Cell::Bool(_) => "bool",
            Cell::Json(_) => "jsonb",
        }
    }

    // One accessor per kind: a column's cells all have its kind (`cells`).
    fn uuid(self) -> Option<Uuid> {
        if let Cell::Uuid(v) = self { v } else { None }
    }

    fn text(self) -> Option<&'a str> {
        if let Cell::Text(v) = self { v } else { None }
    }

    fn int(self) -> Option<i64> {
        if let Cell::Int(v) = self { v } else { None }
    }

    fn bool(self) -> Option<bool> {
        if let Cell::Bool(v) = self { v } else { None }
    }

    fn json(self) -> Option<&'a RawValue> {
        if let Cell::Json(v) = self { v } else { None }
    }
}

/// A row's values in the order of [`COLUMNS`], the actor resolved.
fn cells<'a>(
    row: &'a PreparedLog,
    actor_type: Option<&'a str>,
    actor_id: Option<&'a str>,
) -> [Cell<'a>; COLUMNS.len()] {
    let e = &row.entry;
    let text = |v: &'a Option<String>| Cell::Text(v.as_deref());
    [
        Cell::Text(Some(row.source.as_str())),
        Cell::Text(Some(e.category.as_str())),
        Cell::Text(Some(row.level.as_str())),
        Cell::Text(Some(e.operation.trim())),
        Cell::Json(Some(&row.payload)),
        Cell::Uuid(e.trace_id),
        Cell::Uuid(e.span_id),
        Cell::Uuid(e.parent_span_id),
        Cell::Text(e.status.map(|s| s.as_str())),
        Cell::Int(e.duration_ms),
        Cell::Json(e.error.as_deref()),
        Cell::Uuid(e.workspace_id),
        Cell::Uuid(e.workflow_id),
        Cell::Uuid(e.task_id),
        Cell::Uuid(e.work_item_id),
        Cell::Uuid(e.activation_id),
        text(&e.stage_name),
        Cell::Bool(e.is_orchestrator_task),
        text(&e.execution_backend),
        text(&e.tool_owner),
        text(&e.role),
        Cell::Text(actor_type),
        Cell::Text(actor_id),
        text(&e.actor_name),
        text(&e.resource_type),
        text(&e.resource_id),
        text(&e.resource_name),
    ]
}

impl ControlPlane {
    /// `POST /logs/ingest`: 1 to 1,000 entries, all or nothing. The entries'
    /// `payload` and `error` may be [`Value`]s or the JSON text they arrived
    /// in ([`NewLogEntry`]).
    pub async fn ingest_logs<J: LogJson>(
        &self,
        caller: &Caller,
        entries: Vec<NewLogEntry<J>>,
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
        // The batch's statement is built and bound where it runs
        // (store::writer_thread).
        let this = self.clone();
        let caller = caller.clone();
        self.store()
            .on_writer(async move {
                let mut tx = this.store().begin_append().await?;
                let now = tx.now().as_datetime();
                let inserted =
                    insert_rows(&mut tx, Some(&caller), caller.tenant_id, now, &prepared).await?;
                tx.mark_logs_written();
                tx.commit().await?;
                Ok(Ingested { inserted })
            })
            .await
    }
}
