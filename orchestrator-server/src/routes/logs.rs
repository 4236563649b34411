//! `/logs`: ingest, query, get, stream (SSE), export, stats and the dropdown
//! helpers.

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use crate::sse::{self, Sender};
use http::{HeaderValue, StatusCode, header};
use orchestrator_core::api::logs::{DEFAULT_LOG_PAGE, MAX_LOG_PAGE};
use orchestrator_core::api::{
    ExportFormat, IngestLogs, LogDetail, LogFilter, LogGroupBy, LogRow, SortOrder, Timestamp,
};
use orchestrator_core::logs::{Direction, LogKey, ResolvedFilter, StreamStart};
use orchestrator_core::store::Topic;
use orchestrator_core::{Caller, ControlPlane, Error};
use serde_json::json;
use serde_json::value::RawValue;
use std::sync::Arc;

/// Body limit of `POST /logs/ingest` (1,000 entries with room for payloads).
pub(crate) const INGEST_BODY_LIMIT: usize = 16 * 1024 * 1024;
/// Rows read per query by an export.
const EXPORT_PAGE: u32 = 1000;

/// The entries' `payload` and `error` stay the JSON text they arrived in:
/// parsing them into trees only to write them out again was most of the
/// server's work for a batch (BENCHMARKS.md, item 11).
pub(crate) async fn ingest(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: IngestLogs<Box<RawValue>> = req.json()?;
    let ingested = app.core.ingest_logs(req.caller()?, body.entries).await?;
    Ok(req.created(&ingested))
}

fn filter(req: &Req) -> Result<LogFilter, ApiError> {
    req.query::<LogFilter>()
}

fn parsed<T: std::str::FromStr<Err = String>>(
    req: &Req,
    name: &str,
) -> Result<Option<T>, ApiError> {
    req.query_value(name)
        .map(|v| {
            v.parse::<T>()
                .map_err(|e| Error::invalid_field(name, e).into())
        })
        .transpose()
}

pub(crate) async fn query(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let filter = filter(&req)?;
    let detail = parsed::<LogDetail>(&req, "detail")?.unwrap_or(LogDetail::Full);
    let per_page = match req.query_value("per_page") {
        None => DEFAULT_LOG_PAGE,
        Some(raw) => match raw.trim().parse::<i64>() {
            Ok(n) if n >= 1 => n.min(i64::from(MAX_LOG_PAGE)) as u32,
            _ => {
                return Err(Error::invalid_field("per_page", "must be a positive integer").into());
            }
        },
    };
    let cursor = req.query_value("cursor").filter(|c| !c.is_empty());
    let page = app
        .core
        .query_logs(req.caller()?, filter, detail, cursor.as_deref(), per_page)
        .await?;
    Ok(req.ok_with_meta(
        &page.items,
        &json!({ "next_cursor": page.next_cursor, "per_page": per_page }),
    ))
}

pub(crate) async fn get(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let id = req.param("id").unwrap_or_default().to_owned();
    match app.core.get_log(req.caller()?, &id).await? {
        Some(row) => Ok(req.ok(&row)),
        None => Ok(Reply::plain(
            StatusCode::NOT_FOUND,
            &json!({ "error": "Not found" }),
        )),
    }
}

/// `GET /logs/stream`: replays rows after `Last-Event-ID` (a row id),
/// `cursor` or `after`, or from `since`, else starts at the newest row; then
/// follows live. `event: log` frames carry the full row with `id:` = row id;
/// `event: heartbeat` frames carry `{ts}`.
pub(crate) async fn stream(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let caller = req.caller()?.clone();
    let filter = ResolvedFilter::new(filter(&req)?, app.core.now())?;
    let start = if let Some(id) = sse::resume_id(req.header("last-event-id"), None) {
        StreamStart::AfterRow(id)
    } else if let Some(cursor) = req.query_value("cursor").filter(|c| !c.is_empty()) {
        StreamStart::Cursor(LogKey::decode(&cursor)?)
    } else if let Some(id) = sse::resume_id(None, req.query_value("after").as_deref()) {
        StreamStart::AfterRow(id)
    } else if filter.since().is_some() {
        StreamStart::Beginning
    } else {
        StreamStart::Now
    };
    let key = app.core.log_stream_start(&caller, &filter, start).await?;
    let (sender, body) = sse::sse_channel(&app)?;
    let core = app.core.clone();
    let read = move |key: LogKey| {
        let (core, caller, filter) = (core.clone(), caller.clone(), filter.clone());
        async move {
            let rows = core
                .read_logs_forward(&caller, &filter, key, sse::STREAM_BATCH, LogDetail::Full)
                .await?;
            Ok(rows
                .into_iter()
                .map(|(key, row)| (key, sse::frame(Some(&row.id), "log", &row)))
                .collect())
        }
    };
    let feed = sse::Feed {
        topic: Topic::Logs,
        key,
        read,
        heartbeat: || sse::frame(None, "heartbeat", &json!({"ts": Timestamp::now()})),
        ends: |_| false,
    };
    sse::spawn_follow(&app, &req, feed, sender);
    Ok(sse::reply(body))
}

/// `GET /logs/export`: every row matching the filters, streamed page by
/// page (memory stays flat), as a JSON array or CSV with a header row.
///
/// Everything is validated and the first page read before the status line
/// is sent, so a bad filter or a failing query is an ordinary error answer.
/// A later page that fails is logged and aborts the body (no final chunk):
/// clients see a broken transfer, the JSON document lacks its closing `]`,
/// and a CSV is never silently short.
pub(crate) async fn export(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let caller = req.caller()?.clone();
    let filter = ResolvedFilter::new(filter(&req)?, app.core.now())?;
    let format = parsed::<ExportFormat>(&req, "format")?.unwrap_or(ExportFormat::Json);
    let order = parsed::<SortOrder>(&req, "order")?.unwrap_or(SortOrder::Desc);
    let direction = match order {
        SortOrder::Asc => Direction::ForwardCommitted,
        SortOrder::Desc => Direction::Backward,
    };
    let first_page = app
        .core
        .read_logs_page(&caller, &filter, None, direction, EXPORT_PAGE)
        .await?;
    let (content_type, ext) = match format {
        ExportFormat::Json => ("application/json", "json"),
        ExportFormat::Csv => ("text/csv; charset=utf-8", "csv"),
    };
    let date = Timestamp::now().as_datetime().format("%Y-%m-%d");
    let disposition = format!("attachment; filename=logs-{date}.{ext}");
    let (sender, body) = sse::channel(4, app.core.config().stream_slow_consumer_timeout);
    tokio::spawn(export_rows(
        app.core.clone(),
        Export {
            caller,
            filter,
            format,
            direction,
        },
        first_page,
        sender,
    ));
    Ok(Reply::typed_stream(content_type, body).with_header(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_str(&disposition).map_err(Error::internal)?,
    ))
}

/// The CSV columns, in order (payload and error as JSON text).
pub(crate) const CSV_COLUMNS: [&str; 29] = [
    "id",
    "created_at",
    "trace_id",
    "span_id",
    "parent_span_id",
    "source",
    "category",
    "level",
    "operation",
    "status",
    "duration_ms",
    "payload",
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

fn csv_record(row: &LogRow) -> Vec<String> {
    let value = serde_json::to_value(row).unwrap_or_default();
    CSV_COLUMNS
        .iter()
        .map(|column| match value.get(*column) {
            None | Some(serde_json::Value::Null) => String::new(),
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        })
        .collect()
}

/// What an export reads.
struct Export {
    caller: Caller,
    filter: ResolvedFilter,
    format: ExportFormat,
    direction: Direction,
}

async fn export_rows(
    core: ControlPlane,
    export: Export,
    first_page: Vec<(LogKey, LogRow)>,
    mut sender: Sender,
) {
    let Export {
        caller,
        filter,
        format,
        direction,
    } = export;
    let mut first = true;
    let mut rows = first_page;
    let opening = match format {
        ExportFormat::Json => b"[".to_vec(),
        ExportFormat::Csv => {
            let mut writer = csv::Writer::from_writer(Vec::new());
            let _ = writer.write_record(CSV_COLUMNS);
            writer.into_inner().unwrap_or_default()
        }
    };
    if !sender.send(opening).await {
        return;
    }
    loop {
        let count = rows.len();
        let mut chunk = Vec::with_capacity(count * 256);
        match format {
            ExportFormat::Json => {
                for (_, row) in &rows {
                    if !first {
                        chunk.push(b',');
                    }
                    first = false;
                    chunk.push(b'\n');
                    if serde_json::to_writer(&mut chunk, row).is_err() {
                        sender.fail("a row did not serialize".into()).await;
                        return;
                    }
                }
            }
            ExportFormat::Csv => {
                let mut writer = csv::Writer::from_writer(chunk);
                for (_, row) in &rows {
                    if writer.write_record(csv_record(row)).is_err() {
                        sender.fail("a row did not serialize".into()).await;
                        return;
                    }
                }
                chunk = writer.into_inner().unwrap_or_default();
            }
        }
        let key = rows.last().map(|(last, _)| *last);
        if !chunk.is_empty() && !sender.send(chunk).await {
            return;
        }
        if count < EXPORT_PAGE as usize {
            break;
        }
        rows = match core
            .read_logs_page(&caller, &filter, key, direction, EXPORT_PAGE)
            .await
        {
            Ok(rows) => rows,
            Err(e) => {
                tracing::error!(error = %e, "log export failed after its first page; the body is aborted");
                sender.fail(format!("export failed: {e}")).await;
                return;
            }
        };
    }
    if format == ExportFormat::Json {
        let _ = sender.send(&b"\n]\n"[..]).await;
    }
}

pub(crate) async fn stats(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let group_by = parsed::<LogGroupBy>(&req, "group_by")?
        .ok_or_else(|| Error::invalid_field("group_by", "is required"))?;
    let stats = app
        .core
        .log_stats(req.caller()?, filter(&req)?, group_by)
        .await?;
    Ok(req.ok(&stats))
}

pub(crate) async fn operations(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let values = app.core.log_distinct(req.caller()?, "operation").await?;
    Ok(req.ok(&values))
}

pub(crate) async fn roles(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let values = app.core.log_distinct(req.caller()?, "role").await?;
    Ok(req.ok(&values))
}

pub(crate) async fn actors(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let values = app.core.log_actors(req.caller()?).await?;
    Ok(req.ok(&values))
}

pub(crate) async fn workflows(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let values = app.core.log_workflows(req.caller()?).await?;
    Ok(req.ok(&values))
}
