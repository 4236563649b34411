//! Deeply nested JSON: refused where it would be stored (422 naming the
//! field), and a stored row too deep to parse reads as a marker instead of
//! failing the whole page or export.

use crate::raw::{assert_field_error, get, post, send};
use orchestrator_tests::TestServer;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::Connection;

/// `levels` nested arrays around a number.
fn nested(levels: usize) -> String {
    format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
}

#[tokio::test]
async fn deep_json_is_refused_everywhere_it_would_be_stored() {
    let server = TestServer::start().await;
    let (status, workspace) = post(&server, "/api/v1/workspaces", r#"{"name": "ws"}"#).await;
    assert_eq!(status, StatusCode::CREATED, "{workspace}");
    let workspace = workspace["data"]["id"].as_str().unwrap().to_owned();
    let deep = nested(200);
    let cases = [
        (
            Method::POST,
            "/api/v1/logs/ingest".to_owned(),
            format!(
                r#"{{"entries": [{{"category": "tool", "operation": "x", "payload": {{"a": {deep}}}}}]}}"#
            ),
            "entries[0].payload",
        ),
        (
            Method::POST,
            "/api/v1/tasks".to_owned(),
            format!(r#"{{"title": "t", "type": "code", "input": {{"a": {deep}}}}}"#),
            "input.a[0]",
        ),
        (
            Method::POST,
            "/api/v1/tasks".to_owned(),
            format!(r#"{{"title": "t", "type": "code", "metadata": {deep}}}"#),
            "metadata[0][0]",
        ),
        (
            Method::PATCH,
            format!("/api/v1/workspaces/{workspace}/memory"),
            format!(r#"{{"key": "k", "value": {deep}}}"#),
            "value[0][0]",
        ),
    ];
    for (method, path, body, field) in cases {
        let answer = send(&server, method, &path, &server.admin_key, Some(body)).await;
        assert_field_error(
            &answer,
            StatusCode::UNPROCESSABLE_ENTITY,
            "SCHEMA_VALIDATION_FAILED",
            field,
        );
    }
    // Nothing was written; a payload of ordinary depth still goes in.
    let (_, logs) = get(&server, "/api/v1/logs?category=tool").await;
    assert_eq!(logs["data"].as_array().unwrap().len(), 0, "{logs}");
    let (_, tasks) = get(&server, "/api/v1/tasks").await;
    assert_eq!(tasks["data"].as_array().unwrap().len(), 0, "{tasks}");
    let fine = format!(
        r#"{{"entries": [{{"category": "tool", "operation": "x", "payload": {{"a": {}}}}}]}}"#,
        nested(40)
    );
    let (status, body) = post(&server, "/api/v1/logs/ingest", &fine).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

/// A log row whose payload is nested past what the server's JSON parser
/// reads (written straight into the database, as an older server let it in)
/// reads as a marker; the page and the export around it answer 200.
#[tokio::test]
async fn a_row_too_deep_to_read_does_not_break_the_page_or_export() {
    let server = TestServer::start().await;
    let ingest = r#"{"entries": [
        {"category": "tool", "operation": "deep.one", "payload": {"n": 1}},
        {"category": "tool", "operation": "plain.one", "payload": {"n": 2}}
    ]}"#;
    let (status, body) = post(&server, "/api/v1/logs/ingest", ingest).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let deep = format!(r#"{{"a": {}}}"#, nested(300));
    let url = server.database_url();
    if url.starts_with("postgres") {
        let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
        sqlx::query("UPDATE logs SET payload = $1::jsonb WHERE operation = 'deep.one'")
            .bind(&deep)
            .execute(&mut conn)
            .await
            .unwrap();
    } else {
        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
        sqlx::query("UPDATE logs SET payload = $1 WHERE operation = 'deep.one'")
            .bind(&deep)
            .execute(&mut conn)
            .await
            .unwrap();
    }

    let (status, page) = get(&server, "/api/v1/logs?category=tool&detail=full").await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let rows = page["data"].as_array().unwrap();
    let payload_of = |operation: &str| -> Value {
        rows.iter()
            .find(|r| r["operation"] == operation)
            .unwrap_or_else(|| panic!("no {operation} in {page}"))["payload"]
            .clone()
    };
    assert!(
        payload_of("deep.one")["orch_unreadable"].is_string(),
        "{}",
        payload_of("deep.one")
    );
    assert_eq!(payload_of("plain.one"), json!({"n": 2}));

    let id = rows.iter().find(|r| r["operation"] == "deep.one").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, one) = get(&server, &format!("/api/v1/logs/{id}")).await;
    assert_eq!(status, StatusCode::OK, "{one}");

    let export = server
        .http()
        .get(server.at("/api/v1/logs/export?category=tool&format=json"))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap();
    assert_eq!(export.status(), StatusCode::OK);
    let text = export.text().await.unwrap();
    assert!(
        text.contains("orch_unreadable") && text.contains("plain.one"),
        "{text}"
    );
}
