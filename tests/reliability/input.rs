//! Hostile and odd input at the edge: NUL characters, long and wildcard
//! searches, array bodies, type faults, closed enums.

use crate::raw::{assert_field_error, get, post};
use orchestrator_client::api::workspaces::CreateWorkspace;
use orchestrator_tests::TestServer;
use reqwest::StatusCode;

/// NUL (`\u0000`) cannot be stored by PostgreSQL; both backends refuse it at
/// the edge: 422 naming the field in a body, 400 naming the parameter in a
/// query string; nothing is written.
#[tokio::test]
async fn nul_characters_are_refused_naming_the_field() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let workspace = admin
        .workspaces()
        .create(&CreateWorkspace {
            name: "ws".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let cases = [
        (
            "/api/v1/tasks",
            r#"{"title": "a\u0000b", "type": "code"}"#,
            "title",
        ),
        (
            "/api/v1/tasks",
            r#"{"title": "t", "type": "code", "input": {"k": ["x", "\u0000"]}}"#,
            "input.k[1]",
        ),
        ("/api/v1/workspaces", r#"{"name": "\u0000"}"#, "name"),
        (
            "/api/v1/agents/register",
            r#"{"name": "a", "routing_tags": ["role:\u0000"]}"#,
            "routing_tags[0]",
        ),
    ];
    for (path, body, field) in cases {
        let answer = post(&server, path, body).await;
        assert_field_error(
            &answer,
            StatusCode::UNPROCESSABLE_ENTITY,
            "SCHEMA_VALIDATION_FAILED",
            field,
        );
    }
    let queries = [
        ("/api/v1/workspaces?q=a%00".to_owned(), "q"),
        ("/api/v1/logs?search=%00".to_owned(), "search"),
        ("/api/v1/tasks?role=dev%00".to_owned(), "role"),
        (
            "/api/v1/operations/workflows/rail?search=%00".to_owned(),
            "search",
        ),
        (
            format!("/api/v1/workspaces/{}/artifacts?q=%00", workspace.id),
            "q",
        ),
    ];
    for (path, field) in queries {
        let answer = get(&server, &path).await;
        assert_field_error(&answer, StatusCode::BAD_REQUEST, "VALIDATION_ERROR", field);
    }
    // The log export refuses it before its status line, too.
    let answer = get(&server, "/api/v1/logs/export?search=%00").await;
    assert_eq!(answer.0, StatusCode::BAD_REQUEST, "{}", answer.1);
    // Nothing was written.
    let tasks = admin
        .tasks()
        .list(&Default::default(), Default::default())
        .await
        .unwrap();
    assert_eq!(tasks.total, 0);
    assert_eq!(
        admin
            .workspaces()
            .list(&Default::default(), Default::default())
            .await
            .unwrap()
            .total,
        1
    );
}

/// Searches longer than 512 characters are 400 (SQLite refused long `LIKE`
/// patterns with a 500); `%` and `_` match themselves, not any text.
#[tokio::test]
async fn searches_are_capped_and_literal() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let mut ids = Vec::new();
    for name in ["100% done", "plain", "snake_case"] {
        ids.push(
            admin
                .workspaces()
                .create(&CreateWorkspace {
                    name: name.into(),
                    ..Default::default()
                })
                .await
                .unwrap()
                .id,
        );
    }
    let long = "x".repeat(50_000);
    let at_cap = "x".repeat(512);
    let over_cap = "x".repeat(513);
    let workspace = ids[0];
    for (path, field) in [
        ("/api/v1/workspaces?q=", "q"),
        ("/api/v1/logs?search=", "search"),
        ("/api/v1/operations/workflows/rail?search=", "search"),
        (
            &*format!("/api/v1/workspaces/{workspace}/artifacts?q="),
            "q",
        ),
    ] {
        for text in [&long, &over_cap] {
            let answer = get(&server, &format!("{path}{text}")).await;
            assert_field_error(&answer, StatusCode::BAD_REQUEST, "VALIDATION_ERROR", field);
        }
        let (status, body) = get(&server, &format!("{path}{at_cap}")).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
    }
    // `%` and `_` are literal characters.
    for (q, expected) in [("%25", 1), ("_", 1), ("%25%25", 0), ("e_c", 1), ("n_", 0)] {
        let (status, body) = get(&server, &format!("/api/v1/workspaces?q={q}")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(
            body["data"].as_array().unwrap().len(),
            expected,
            "q={q}: {body}"
        );
    }
}

/// Every type or format fault in a body is 422 with the field named: a
/// non-object where an object is due, a malformed URL, a word outside a
/// closed enum (task `type`, worker `connection_mode`); an array body is
/// refused, never mapped onto fields by position. Nothing is written.
#[tokio::test]
async fn type_faults_closed_enums_and_array_bodies_are_422() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let world = crate::fixtures::world(&admin).await;
    let tasks_before = admin
        .tasks()
        .list(&Default::default(), Default::default())
        .await
        .unwrap()
        .total;
    let activations = format!("/api/v1/workflows/{}/activations", world.workflow);
    let cases: [(&str, &str, &str); 8] = [
        (
            "/api/v1/tasks",
            r#"{"title": "t", "type": "code", "input": "x"}"#,
            "input",
        ),
        (
            "/api/v1/tasks",
            r#"{"title": "t", "type": "poetry"}"#,
            "type",
        ),
        (
            "/api/v1/tasks",
            r#"{"title": "t", "type": "code", "metadata": [1]}"#,
            "metadata",
        ),
        (
            &activations,
            r#"{"event_type": "tick", "payload": "x"}"#,
            "payload",
        ),
        (
            "/api/v1/workspaces",
            r#"{"name": "w2", "repository_url": "not a url"}"#,
            "repository_url",
        ),
        (
            "/api/v1/workspaces",
            r#"{"name": "w3", "settings": "x"}"#,
            "settings",
        ),
        (
            "/api/v1/workers/register",
            r#"{"name": "w", "connection_mode": "carrier-pigeon"}"#,
            "connection_mode",
        ),
        (
            "/api/v1/agents/register",
            r#"{"name": "a", "metadata": 3}"#,
            "metadata",
        ),
    ];
    for (path, body, field) in cases {
        let answer = post(&server, path, body).await;
        assert_field_error(
            &answer,
            StatusCode::UNPROCESSABLE_ENTITY,
            "SCHEMA_VALIDATION_FAILED",
            field,
        );
    }
    for mode in ["websocket", "sse", "polling"] {
        let body = format!(r#"{{"name": "w-{mode}", "connection_mode": "{mode}"}}"#);
        let (status, body) = post(&server, "/api/v1/workers/register", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    for task_type in [
        "analysis",
        "code",
        "assessment",
        "test",
        "docs",
        "orchestration",
        "custom",
    ] {
        let body = format!(r#"{{"title": "t", "type": "{task_type}"}}"#);
        let (status, body) = post(&server, "/api/v1/tasks", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    for (path, body) in [
        ("/api/v1/tasks", r#"["title", "code"]"#),
        ("/api/v1/workspaces", r#"["w4"]"#),
        ("/api/v1/tasks", "7"),
    ] {
        let (status, body) = post(&server, path, body).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["error"]["code"], "SCHEMA_VALIDATION_FAILED");
    }
    let tasks_after = admin
        .tasks()
        .list(&Default::default(), Default::default())
        .await
        .unwrap()
        .total;
    assert_eq!(
        tasks_after,
        tasks_before + 7,
        "only the valid tasks were created"
    );
}

/// `meta.next_after` of `GET /workflows/:id/events` and `GET /events` is
/// always a string: the last id on the page, or the `after` given (`"0"`
/// when none) on an empty page.
#[tokio::test]
async fn event_feeds_always_name_where_to_resume() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let world = crate::fixtures::world(&admin).await;
    let feed = format!("/api/v1/workflows/{}/events", world.workflow);
    let (status, all) = get(&server, &format!("{feed}?limit=500")).await;
    assert_eq!(status, StatusCode::OK, "{all}");
    let events = all["data"].as_array().unwrap();
    assert!(!events.is_empty());
    let last = events.last().unwrap()["id"].to_string();
    assert_eq!(all["meta"]["has_more"], false);
    assert_eq!(all["meta"]["next_after"], last.as_str(), "{all}");
    let (_, empty) = get(&server, &format!("{feed}?after={last}")).await;
    assert!(empty["data"].as_array().unwrap().is_empty());
    assert_eq!(empty["meta"]["next_after"], last.as_str(), "{empty}");
    let (_, global) = get(&server, "/api/v1/events?after=999999999").await;
    assert!(global["data"].as_array().unwrap().is_empty(), "{global}");
    assert_eq!(global["meta"]["next_after"], "999999999", "{global}");
}
