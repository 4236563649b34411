//! Limits and streamed answers: 413 closes the connection, the log export
//! refuses bad filters before its status line and sends whole documents,
//! and `trace_id` lookups are indexed.

use crate::raw::get;
use orchestrator_client::api::{LogCategory, NewLogEntry, Scope};
use orchestrator_tests::{TestServer, key_request};
use reqwest::StatusCode;
use serde_json::Value;
use sqlx::Connection;
use uuid::Uuid;

/// A body past the route's limit is 413 with the envelope and
/// `Connection: close` (the rest of the body is never read as a request).
#[tokio::test]
async fn an_oversized_body_is_413_and_closes_the_connection() {
    let server = TestServer::start().await;
    let body = format!(r#"{{"title": "{}", "type": "code"}}"#, "x".repeat(2 << 20));
    let response = server
        .http()
        .post(server.at("/api/v1/tasks"))
        .bearer_auth(&server.admin_key)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(
        response
            .headers()
            .get("connection")
            .and_then(|v| v.to_str().ok()),
        Some("close")
    );
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "PAYLOAD_TOO_LARGE");
    let (status, _) = get(&server, "/readyz").await;
    assert_eq!(status, StatusCode::OK);
}

/// Bad filters are refused with an error answer (never a 200 that breaks
/// off); a multi-page export is one whole JSON document or CSV file.
#[tokio::test]
async fn log_export_checks_before_its_status_line_and_sends_whole_documents() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let worker_key = admin
        .api_keys()
        .create(&key_request(Scope::Worker, "runtime"))
        .await
        .unwrap();
    let worker = server.client(&worker_key.api_key);
    for batch in 0..2 {
        let entries: Vec<NewLogEntry> = (0..750)
            .map(|i| NewLogEntry::new(LogCategory::Tool, format!("op.{batch}.{i}")))
            .collect();
        worker.logs().ingest(entries).await.unwrap();
    }
    let long = "y".repeat(600);
    for query in [
        format!("search={long}"),
        "search=%00".into(),
        "order=sideways".into(),
        "since=yesterday-ish".into(),
    ] {
        let (status, body) = get(&server, &format!("/api/v1/logs/export?{query}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {body}");
        assert_eq!(body["error"]["code"], "VALIDATION_ERROR");
    }
    let (status, rows) = get(&server, "/api/v1/logs/export?category=tool").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        rows.as_array().map(Vec::len),
        Some(1500),
        "a whole JSON array"
    );
    let csv = server
        .http()
        .get(server.at("/api/v1/logs/export?category=tool&format=csv&order=asc"))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(csv.lines().count(), 1501, "header and every row");
}

/// `GET /logs?trace_id=` reads an index, not the tenant's whole log.
#[tokio::test]
async fn trace_lookups_are_indexed() {
    let server = TestServer::start().await;
    let url = server.database_url();
    if orchestrator_tests::backend() == "sqlite" {
        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
        let plan: Vec<(i64, i64, i64, String)> = sqlx::query_as(
            "EXPLAIN QUERY PLAN SELECT id FROM logs WHERE tenant_id = $1 AND trace_id = $2 \
             ORDER BY id DESC LIMIT 50",
        )
        .bind(Uuid::new_v4())
        .bind(Uuid::new_v4())
        .fetch_all(&mut conn)
        .await
        .unwrap();
        assert!(
            plan.iter()
                .any(|(_, _, _, step)| step.contains("logs_trace")),
            "{plan:?}"
        );
    } else {
        let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
        let (definition,): (String,) =
            sqlx::query_as("SELECT indexdef FROM pg_indexes WHERE indexname = 'logs_trace'")
                .fetch_one(&mut conn)
                .await
                .unwrap();
        assert!(definition.contains("trace_id"), "{definition}");
    }
    let (status, body) = get(
        &server,
        &format!("/api/v1/logs?trace_id={}", Uuid::new_v4()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// PostgreSQL: the hot tables are analyzed when the server starts and carry
/// their own autovacuum settings (issue 33, defect 9).
#[tokio::test]
async fn hot_tables_are_analyzed_and_tuned_on_postgres() {
    let server = TestServer::start().await;
    let url = server.database_url();
    if !url.starts_with("postgres") {
        return;
    }
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    let analyzed: Vec<(String,)> = sqlx::query_as(
        "SELECT relname::text FROM pg_stat_user_tables \
         WHERE relname IN ('tasks', 'events', 'logs') AND last_analyze IS NOT NULL",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(analyzed.len(), 3, "{analyzed:?}");
    for table in ["tasks", "events", "logs"] {
        let (options,): (Option<Vec<String>>,) =
            sqlx::query_as("SELECT reloptions FROM pg_class WHERE relname = $1")
                .bind(table)
                .fetch_one(&mut conn)
                .await
                .unwrap();
        let options = options.unwrap_or_default();
        assert!(
            options
                .iter()
                .any(|o| o.starts_with("autovacuum_analyze_scale_factor")),
            "{table}: {options:?}"
        );
    }
}
