//! Logs: each route's input and output types.

use super::describe::*;
use http::Method as M;
use http::StatusCode;
use orchestrator_core::api::*;

/// Logs.
pub(super) fn docs() -> Vec<Doc> {
    vec![
        op(M::POST, "/api/v1/logs/ingest", "Ingest log entries", created::<Ingested>()).body::<IngestLogs>(),
        op(M::GET, "/api/v1/logs", "Query logs (cursor list)", Success::Cursor(schema::<LogRow>, LOG_CURSOR))
            .query::<LogFilter>()
            .query_enum::<LogDetail>("detail", "How much of each row")
            .param("cursor", TEXT, "The previous page's next_cursor")
            .param("per_page", r#"{"type": "integer", "minimum": 1}"#, "Rows per page (clamped)"),
        op(M::GET, "/api/v1/logs/stream", "Follow logs", Success::Events(schema::<LogRow>, "`event: log` frames carry one log row (`id:` is the row id); `event: heartbeat` frames carry `{ts}`."))
            .query::<LogFilter>()
            .param("cursor", TEXT, "Start after this cursor")
            .param("after", TEXT, "Start after this row id"),
        op(M::GET, "/api/v1/logs/export", "Export logs as JSON or CSV (a download)", Success::Export(schema::<LogRow>))
            .query::<LogFilter>()
            .query_enum::<ExportFormat>("format", "json (default) or csv")
            .query_enum::<SortOrder>("order", "desc (default) or asc"),
        op(M::GET, "/api/v1/logs/stats", "Log counts grouped by a field", ok::<LogStats>())
            .query::<LogFilter>()
            .query_enum_required::<LogGroupBy>("group_by", "The grouping"),
        op(M::GET, "/api/v1/logs/operations", "Distinct log operations", ok::<Vec<String>>()),
        op(M::GET, "/api/v1/logs/roles", "Distinct log roles", ok::<Vec<String>>()),
        op(M::GET, "/api/v1/logs/actors", "Distinct log actors", ok::<Vec<LogActor>>()),
        op(M::GET, "/api/v1/logs/workflows", "Workflows that have logs", ok::<Vec<uuid::Uuid>>()),
        op(M::GET, "/api/v1/logs/{id}", "One log row", ok::<LogRow>())
            .text_params(&["id"])
            .plain_error(StatusCode::NOT_FOUND, r#"{"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}}"#),
    ]
}
