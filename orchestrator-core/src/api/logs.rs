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
    LogSource { Runtime = "runtime", Platform = "platform", TaskContainer = "task_container" }
);
wire_enum!(
    /// What a row is about.
    LogCategory { Llm = "llm", Tool = "tool", TaskLifecycle = "task_lifecycle", Auth = "auth" }
);
wire_enum!(
    /// Severity (open in the contract; orch uses these four).
    LogLevel { Debug = "debug", Info = "info", Warn = "warn", Error = "error" }
);
wire_enum!(
    /// Where the operation stands.
    LogStatus { Started = "started", Completed = "completed", Failed = "failed" }
);
wire_enum!(
    /// `GET /logs/export` format.
    ExportFormat { Json = "json", Csv = "csv" }
);
wire_enum!(
    /// Sort order of an export.
    SortOrder { Asc = "asc", Desc = "desc" }
);
wire_enum!(
    /// `detail` of `GET /logs`.
    LogDetail { Full = "full", Summary = "summary" }
);
wire_enum!(
    /// `group_by` of `GET /logs/stats`.
    LogGroupBy {
        Category = "category",
        Operation = "operation",
        Level = "level",
        TaskId = "task_id",
        WorkItemId = "work_item_id",
        StageName = "stage_name",
        ActivationId = "activation_id",
        IsOrchestratorTask = "is_orchestrator_task",
        Source = "source",
        ExecutionBackend = "execution_backend",
        ToolOwner = "tool_owner",
    }
);

/// One public log row.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LogRow {
    /// The row's integer key as a string.
    pub id: String,
    pub created_at: Timestamp,
    pub trace_id: Option<Uuid>,
    pub span_id: Option<Uuid>,
    pub parent_span_id: Option<Uuid>,
    pub source: LogSource,
    pub category: LogCategory,
    pub level: LogLevel,
    pub operation: String,
    pub status: Option<LogStatus>,
    pub duration_ms: Option<i64>,
    /// Absent with `detail=summary`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
    pub error: Option<Value>,
    pub workspace_id: Option<Uuid>,
    pub workflow_id: Option<Uuid>,
    pub task_id: Option<Uuid>,
    pub work_item_id: Option<Uuid>,
    pub activation_id: Option<Uuid>,
    pub stage_name: Option<String>,
    pub is_orchestrator_task: Option<bool>,
    pub execution_backend: Option<String>,
    pub tool_owner: Option<String>,
    pub role: Option<String>,
    pub actor_type: Option<String>,
    pub actor_id: Option<String>,
    pub actor_name: Option<String>,
    pub resource_type: Option<String>,
    pub resource_id: Option<String>,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_span_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<LogSource>,
    pub category: LogCategory,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<LogLevel>,
    pub operation: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<LogStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<J>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<J>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_item_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_orchestrator_task: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_backend: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_owner: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_id: Option<String>,
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
    pub inserted: u64,
}

/// The filters every log route takes (query, stream, export, stats).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LogFilter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_item_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<LogSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<LogCategory>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<LogLevel>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<LogStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<Uuid>,
    /// RFC 3339 or a duration back from now (`10m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
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
    #[serde(flatten)]
    pub filter: LogFilter,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<LogDetail>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_page: Option<u32>,
}

/// One page of `GET /logs`, newest first.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LogPage {
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
    pub count: u64,
}

/// `GET /logs/stats` answer: counts per value of `group_by`, largest first.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LogStats {
    pub group_by: LogGroupBy,
    pub total: u64,
    pub groups: Vec<LogGroup>,
}

/// One entry of `GET /logs/actors`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LogActor {
    pub actor_type: Option<String>,
    pub actor_id: Option<String>,
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
