//! Reading stored rows: the selected columns, the row type and its wire
//! form (with a short error summary for list views).

use crate::api::{LogCategory, LogDetail, LogLevel, LogRow, LogSource, LogStatus};
use crate::error::{Error, Result};
use crate::store::StoredJson;
use crate::store::{Access, Dialect, on_db};
use chrono::{DateTime, Utc};
use serde_json::Value;
use uuid::Uuid;

use super::cursor::{Direction, LogKey};
use super::filter::{Bind, ResolvedFilter, Sql, bind_all, push_filter};

/// Columns read (after the key columns).
pub(crate) const SELECT_COLUMNS: &str = "created_at, trace_id, span_id, parent_span_id, source, category, \
    level, operation, status, duration_ms, payload, error, workspace_id, workflow_id, task_id, \
    work_item_id, activation_id, stage_name, is_orchestrator_task, execution_backend, tool_owner, \
    role, actor_type, actor_id, actor_name, resource_type, resource_id, resource_name";

/// A stored row.
#[derive(Debug, sqlx::FromRow)]
pub(crate) struct Row {
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
    payload: StoredJson,
    error: Option<StoredJson>,
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
    pub(crate) fn key(&self) -> LogKey {
        LogKey {
            txid: self.txid,
            id: self.id,
        }
    }

    pub(crate) fn into_api(self, detail: LogDetail) -> Result<LogRow> {
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
pub(crate) fn summarize_error(error: &Value) -> Value {
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

/// The select list: the key columns, then the rest.
pub(crate) fn select_list(dialect: Dialect) -> String {
    match dialect {
        Dialect::Sqlite => format!("SELECT id, 0 AS txid, {SELECT_COLUMNS} FROM logs"),
        Dialect::Postgres => format!("SELECT id, txid, {SELECT_COLUMNS} FROM logs"),
    }
}

/// Reads up to `limit` rows after `from` (exclusive) in `direction`.
pub(crate) async fn read_rows(
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summary_errors_keep_code_and_a_short_message() {
        let long = "x".repeat(500);
        let e = summarize_error(&json!({"message": long, "code": "E1", "stack": "..."}));
        assert_eq!(e["code"], "E1");
        assert_eq!(e["message"].as_str().unwrap().len(), 200);
        assert!(e.get("stack").is_none());
    }
}
