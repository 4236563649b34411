//! Logs: the structured execution log rows, their ingest request, the query
//! filters and the stats and helper answers.
//!
//! Choices the contract leaves open (see docs/logs-and-events.md):
//! - `level` is one of `debug`, `info`, `warn`, `error`;
//! - a row's `id` is its integer key rendered as a string (`"1234"`); it is
//!   also the SSE `id:` of the row on the log stream, so `Last-Event-ID`
//!   resumes after it;
//! - the list cursor (`meta.next_cursor`) is opaque;
//! - `since` / `until` take an RFC 3339 timestamp or a duration back from now
//!   (`30s`, `10m`, `2h`, `1d`, `1w`).

use super::Timestamp;
use super::wire_enum::wire_enum;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use uuid::Uuid;

/// Largest number of entries one ingest call takes.
pub const MAX_INGEST_ENTRIES: usize = 1000;
/// Largest `per_page` of `GET /logs`.
pub const MAX_LOG_PAGE: u32 = 500;
/// `per_page` of `GET /logs` when none is given.
pub const DEFAULT_LOG_PAGE: u32 = 50;

wire_enum!(
    /// Who wrote a row.
    LogSource {
        /// An agent runtime, through `POST /logs/ingest` (the default).
        Runtime = "runtime",
        /// orch itself (auth and task lifecycle rows).
        Platform = "platform",
        /// A task's command or container (its stdout and stderr lines).
        TaskContainer = "task_container",
    }
);
wire_enum!(
    /// What a row is about.
    LogCategory {
        /// A call to a language model.
        Llm = "llm",
        /// A tool call.
        Tool = "tool",
        /// A step of a task's life (claim, start, complete, fail, ...).
        TaskLifecycle = "task_lifecycle",
        /// Authentication (token exchange, refresh, credential reads).
        Auth = "auth",
    }
);
wire_enum!(
    /// Severity (open in the contract; orch uses these four).
    LogLevel {
        /// Detail for debugging.
        Debug = "debug",
        /// Ordinary progress (the default of an ingested entry).
        Info = "info",
        /// Something unusual that did not stop the work.
        Warn = "warn",
        /// A failure.
        Error = "error",
    }
);
wire_enum!(
    /// Where the operation stands.
    LogStatus {
        /// The operation began.
        Started = "started",
        /// The operation ended well.
        Completed = "completed",
        /// The operation ended in an error.
        Failed = "failed",
    }
);
wire_enum!(
    /// `GET /logs/export` format.
    ExportFormat {
        /// A JSON array of rows.
        Json = "json",
        /// CSV with a header line; `payload` and `error` as JSON text.
        Csv = "csv",
    }
);
wire_enum!(
    /// Sort order of an export.
    SortOrder {
        /// Oldest first.
        Asc = "asc",
        /// Newest first (the default).
        Desc = "desc",
    }
);
wire_enum!(
    /// `detail` of `GET /logs`.
    LogDetail {
        /// Rows as stored (the default).
        Full = "full",
        /// Rows without `payload`, `error` cut to `message`, `code` and
        /// `category`.
        Summary = "summary",
    }
);
wire_enum!(
    /// `group_by` of `GET /logs/stats`.
    LogGroupBy {
        /// Group by the rows' `category`.
        Category = "category",
        /// Group by the rows' `operation`.
        Operation = "operation",
        /// Group by the rows' `level`.
        Level = "level",
        /// Group by the rows' `task_id`.
        TaskId = "task_id",
        /// Group by the rows' `work_item_id`.
        WorkItemId = "work_item_id",
        /// Group by the rows' `stage_name`.
        StageName = "stage_name",
        /// Group by the rows' `activation_id`.
        ActivationId = "activation_id",
        /// Group by the rows' `is_orchestrator_task`.
        IsOrchestratorTask = "is_orchestrator_task",
        /// Group by the rows' `source`.
        Source = "source",
        /// Group by the rows' `execution_backend`.
        ExecutionBackend = "execution_backend",
        /// Group by the rows' `tool_owner`.
        ToolOwner = "tool_owner",
    }
);

/// One public log row.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LogRow {
    /// The row's integer key as a string.
    pub id: String,
    /// When the row was written (for ingested rows, when the server took them).
    pub created_at: Timestamp,
    /// The trace the row belongs to, grouping rows of one piece of work.
    pub trace_id: Option<Uuid>,
    /// The span (one operation) the row records.
    pub span_id: Option<Uuid>,
    /// The span that started this one, if any.
    pub parent_span_id: Option<Uuid>,
    /// Who wrote the row: `runtime` (an agent runtime), `platform` (orch
    /// itself) or `task_container`.
    pub source: LogSource,
    /// What the row is about: `llm`, `tool`, `task_lifecycle` or `auth`.
    pub category: LogCategory,
    /// Severity: `debug`, `info`, `warn` or `error`.
    pub level: LogLevel,
    /// What was done, as a dotted name (`task.claim`, `task.stdout`).
    pub operation: String,
    /// Where the operation stands: `started`, `completed` or `failed`; null for
    /// a row that is not about one.
    pub status: Option<LogStatus>,
    /// How long the operation took, in milliseconds.
    pub duration_ms: Option<i64>,
    /// Absent with `detail=summary`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
    /// What went wrong, for a failed operation (a JSON object, `message`,
    /// `code` and `category` kept by `detail=summary`).
    pub error: Option<Value>,
    /// The workspace the row belongs to.
    pub workspace_id: Option<Uuid>,
    /// The workflow the row belongs to.
    pub workflow_id: Option<Uuid>,
    /// The task the row belongs to.
    pub task_id: Option<Uuid>,
    /// The work item the row belongs to.
    pub work_item_id: Option<Uuid>,
    /// The workflow activation the row belongs to.
    pub activation_id: Option<Uuid>,
    /// The workflow stage the row belongs to.
    pub stage_name: Option<String>,
    /// Whether the row comes from an orchestrator task.
    pub is_orchestrator_task: Option<bool>,
    /// What executed the operation (a runtime's own word).
    pub execution_backend: Option<String>,
    /// Who provides the tool of a `tool` row (a runtime's own word).
    pub tool_owner: Option<String>,
    /// The role the acting agent works in.
    pub role: Option<String>,
    /// Who acted: the caller key's owner type unless given (`agent`, `worker`,
    /// `user`, `service`).
    pub actor_type: Option<String>,
    /// The id of who acted: the caller key's owner unless given.
    pub actor_id: Option<String>,
    /// The name of who acted, for display.
    pub actor_name: Option<String>,
    /// The kind of thing the operation acted on.
    pub resource_type: Option<String>,
    /// The id of the thing the operation acted on.
    pub resource_id: Option<String>,
    /// The name of the thing the operation acted on, for display.
    pub resource_name: Option<String>,
}

/// One entry of `POST /logs/ingest`. `operation` and `category` are required;
/// `source` defaults to `runtime`, `level` to `info`, the actor fields to the
/// caller's key.
// `J`, how `payload` and `error` are held, is explained at [`LogJson`]; the
// doc comment above is the schema's description in the OpenAPI document.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "NewLogEntry"))]
#[serde(
    deny_unknown_fields,
    bound(serialize = "J: Serialize", deserialize = "J: Deserialize<'de>")
)]
pub struct NewLogEntry<J = Value> {
    /// The trace the row belongs to, grouping rows of one piece of work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<Uuid>,
    /// The span (one operation) the row records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_id: Option<Uuid>,
    /// The span that started this one, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_span_id: Option<Uuid>,
    /// Who writes the row: `runtime` (default), `platform` or `task_container`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<LogSource>,
    /// What the row is about: `llm`, `tool`, `task_lifecycle` or `auth`
    /// (required).
    pub category: LogCategory,
    /// Severity (default `info`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<LogLevel>,
    /// What was done, as a dotted name (`task.stdout`; required).
    pub operation: String,
    /// Where the operation stands: `started`, `completed` or `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<LogStatus>,
    /// How long the operation took, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<i64>,
    /// The operation's data; must be a JSON object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<J>,
    /// What went wrong, for a failed operation; must be a JSON object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<J>,
    /// The workspace the row belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<Uuid>,
    /// The workflow the row belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    /// The task the row belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<Uuid>,
    /// The work item the row belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_item_id: Option<Uuid>,
    /// The workflow activation the row belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_id: Option<Uuid>,
    /// The workflow stage the row belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage_name: Option<String>,
    /// Whether the row comes from an orchestrator task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_orchestrator_task: Option<bool>,
    /// What executed the operation (a runtime's own word).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_backend: Option<String>,
    /// Who provides the tool of a `tool` row (a runtime's own word).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_owner: Option<String>,
    /// The role the acting agent works in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Who acted; the caller key's owner type when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor_type: Option<String>,
    /// The id of who acted; the caller key's owner when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor_id: Option<String>,
    /// The name of who acted, for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor_name: Option<String>,
    /// The kind of thing the operation acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_type: Option<String>,
    /// The id of the thing the operation acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_id: Option<String>,
    /// The name of the thing the operation acted on, for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
}

impl<J> NewLogEntry<J> {
    /// An entry with only the required fields set.
    pub fn new(category: LogCategory, operation: impl Into<String>) -> Self {
        Self {
            trace_id: None,
            span_id: None,
            parent_span_id: None,
            source: None,
            category,
            level: None,
            operation: operation.into(),
            status: None,
            duration_ms: None,
            payload: None,
            error: None,
            workspace_id: None,
            workflow_id: None,
            task_id: None,
            work_item_id: None,
            activation_id: None,
            stage_name: None,
            is_orchestrator_task: None,
            execution_backend: None,
            tool_owner: None,
            role: None,
            actor_type: None,
            actor_id: None,
            actor_name: None,
            resource_type: None,
            resource_id: None,
            resource_name: None,
        }
    }

    /// The same entry with `payload` and `error` converted by `f`.
    pub fn map_json<K>(self, mut f: impl FnMut(J) -> K) -> NewLogEntry<K> {
        NewLogEntry {
            trace_id: self.trace_id,
            span_id: self.span_id,
            parent_span_id: self.parent_span_id,
            source: self.source,
            category: self.category,
            level: self.level,
            operation: self.operation,
            status: self.status,
            duration_ms: self.duration_ms,
            payload: self.payload.map(&mut f),
            error: self.error.map(&mut f),
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
        }
    }
}

/// `POST /logs/ingest` body.
// `J` as in [`NewLogEntry`].
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "IngestLogs"))]
#[serde(
    deny_unknown_fields,
    bound(serialize = "J: Serialize", deserialize = "J: Deserialize<'de>")
)]
pub struct IngestLogs<J = Value> {
    /// The entries to write: 1 to [`MAX_INGEST_ENTRIES`], all or none.
    pub entries: Vec<NewLogEntry<J>>,
}

/// What an entry's `payload` and `error` may be held as ([`NewLogEntry`]'s
/// `J`): a [`Value`] tree for programs that build entries, or the JSON text
/// they arrived in (`Box<RawValue>`) for the server, which then stores them
/// without building a tree and writing it out again (BENCHMARKS.md, item 11).
pub trait LogJson: Serialize {
    /// Whether the value is a JSON object.
    fn is_object(&self) -> bool;
    /// Whether the value is JSON `null`.
    fn is_null(&self) -> bool;
    /// The value as JSON text.
    fn into_raw(self) -> serde_json::Result<Box<RawValue>>;
}

impl LogJson for Value {
    fn is_object(&self) -> bool {
        Value::is_object(self)
    }

    fn is_null(&self) -> bool {
        Value::is_null(self)
    }

    fn into_raw(self) -> serde_json::Result<Box<RawValue>> {
        serde_json::value::to_raw_value(&self)
    }
}

/// The text as it arrived when it is already compact, otherwise rewritten
/// compact: stored rows then read the same whichever way an entry came, and a
/// `search` of the logs matches a payload's text, not its spacing or escapes.
impl LogJson for Box<RawValue> {
    fn is_object(&self) -> bool {
        self.get().trim_start().starts_with('{')
    }

    fn is_null(&self) -> bool {
        self.get().trim() == "null"
    }

    fn into_raw(self) -> serde_json::Result<Box<RawValue>> {
        if is_compact(self.get()) {
            Ok(self)
        } else {
            serde_json::from_str::<Value>(self.get())?.into_raw()
        }
    }
}

/// Whether JSON `text` has no whitespace between its tokens and no escape
/// that `serde_json` would not write (`\uXXXX` of a printable character,
/// `\/`), checked in one pass without parsing: most runtimes send compact
/// JSON, which is then stored without building a tree. A `\u` escape that
/// serde would keep (a control character) only costs the rewrite.
fn is_compact(text: &str) -> bool {
    let mut bytes = text.bytes();
    let mut in_string = false;
    while let Some(b) = bytes.next() {
        match (in_string, b) {
            (_, b'"') => in_string = !in_string,
            (true, b'\\') => {
                if matches!(bytes.next(), Some(b'u' | b'/')) {
                    return false;
                }
            }
            (false, b' ' | b'\n' | b'\r' | b'\t') => return false,
            _ => {}
        }
    }
    true
}

/// `POST /logs/ingest` answer.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Ingested {
    /// How many rows were written (all the entries).
    pub inserted: u64,
}

/// The filters every log route takes (query, stream, export, stats).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LogFilter {
    /// Only rows of this workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<Uuid>,
    /// Only rows of this workflow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    /// Only rows of this task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<Uuid>,
    /// Only rows of this work item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_item_id: Option<Uuid>,
    /// Only rows of this workflow stage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage_name: Option<String>,
    /// Only rows of this workflow activation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_id: Option<Uuid>,
    /// Only rows from this source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<LogSource>,
    /// Only rows of this category.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<LogCategory>,
    /// Only rows of this level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<LogLevel>,
    /// Only rows of this operation (exact name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// Only rows in this status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<LogStatus>,
    /// Only rows of this role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Only rows of this trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<Uuid>,
    /// RFC 3339 or a duration back from now (`10m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// Only rows written before this time: RFC 3339 or a duration back from now
    /// (`10m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// Substring of the operation or the payload text (case-insensitive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<String>,
}

/// `GET /logs` query: the filters plus paging.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LogQuery {
    /// The row filters.
    #[serde(flatten)]
    pub filter: LogFilter,
    /// `full` (default) or `summary`: without `payload`, with `error` cut to
    /// its `message`, `code` and `category`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<LogDetail>,
    /// The opaque `meta.next_cursor` of the previous page; the newest rows when
    /// absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Rows per page, at most [`MAX_LOG_PAGE`] (default [`DEFAULT_LOG_PAGE`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_page: Option<u32>,
}

/// One page of `GET /logs`, newest first.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LogPage {
    /// The rows, newest first.
    pub items: Vec<LogRow>,
    /// Pass as `cursor` for the next (older) page; `None` at the end.
    pub next_cursor: Option<String>,
}

/// One group of `GET /logs/stats`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LogGroup {
    /// The grouped field's value (string, UUID, boolean or null).
    pub value: Value,
    /// How many rows have the value.
    pub count: u64,
}

/// `GET /logs/stats` answer: counts per value of `group_by`, largest first.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LogStats {
    /// The field the rows were grouped by.
    pub group_by: LogGroupBy,
    /// How many rows matched the filters.
    pub total: u64,
    /// One group per value, largest first.
    pub groups: Vec<LogGroup>,
}

/// One entry of `GET /logs/actors`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LogActor {
    /// The actor's type, as written on the rows (`agent`, `worker`, `user`,
    /// ...).
    pub actor_type: Option<String>,
    /// The actor's id, as written on the rows.
    pub actor_id: Option<String>,
    /// The actor's name, as written on the rows.
    pub actor_name: Option<String>,
}

/// Parses `since`/`until`: RFC 3339, or a duration back from `now` made of a
/// positive integer and one of `s`, `m`, `h`, `d`, `w`.
pub fn parse_time_bound(text: &str, now: Timestamp) -> Option<Timestamp> {
    let text = text.trim();
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) {
        return Some(Timestamp::from(t.with_timezone(&chrono::Utc)));
    }
    let unit = text.chars().last()?;
    let amount: i64 = text[..text.len() - unit.len_utf8()].parse().ok()?;
    if amount < 0 {
        return None;
    }
    let seconds = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        'w' => 604_800,
        _ => return None,
    };
    let back = chrono::Duration::try_seconds(amount.checked_mul(seconds)?)?;
    now.as_datetime()
        .checked_sub_signed(back)
        .map(Timestamp::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_bounds_take_rfc3339_and_durations() {
        let now: Timestamp = chrono::DateTime::parse_from_rfc3339("2026-11-21T12:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc)
            .into();
        assert_eq!(
            parse_time_bound("10m", now).unwrap().to_string(),
            "2026-11-21T11:50:00.000Z"
        );
        assert_eq!(
            parse_time_bound("1d", now).unwrap().to_string(),
            "2026-11-20T12:00:00.000Z"
        );
        assert_eq!(
            parse_time_bound("2026-11-01T00:00:00+01:00", now)
                .unwrap()
                .to_string(),
            "2026-10-31T23:00:00.000Z"
        );
        assert!(parse_time_bound("ten minutes", now).is_none());
        assert!(parse_time_bound("5y", now).is_none());
    }
}
