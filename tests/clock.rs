//! Time is given, not read: every stamp the control plane writes (records,
//! events, platform and runtime log rows) and every expiry it checks (access
//! tokens, API keys) comes from its clock. Each test runs a server on a
//! manual clock set years after the machine's time, drives it over HTTP,
//! and checks the times it answers: one read of the system clock anywhere
//! shows up as a date years too early. On SQLite and PostgreSQL.

use chrono::{DateTime, Duration, Utc};
use orchestrator_core::clock::ManualClock;
use orchestrator_tests::TestServer;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::sync::Arc;

/// The manual clock's start: far enough ahead of any machine running the
/// suite that a system-clock stamp can never pass for it.
fn start() -> DateTime<Utc> {
    "2031-02-03T04:05:06.789Z".parse().unwrap()
}

async fn on_manual_clock() -> (TestServer, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(start()));
    let given = clock.clone();
    let server = TestServer::start_with(move |c| c.core.clock = given).await;
    (server, clock)
}

fn now(clock: &ManualClock) -> DateTime<Utc> {
    use orchestrator_core::clock::Clock;
    clock.now()
}

/// `method path` with `key`: (status, body).
async fn call(
    server: &TestServer,
    method: &str,
    path: &str,
    key: &str,
    body: Value,
) -> (StatusCode, Value) {
    let url = server.at(&format!("/api/v1{path}"));
    let request = match method {
        "GET" => server.http().get(url),
        _ => server.http().post(url).json(&body),
    };
    let response = request.bearer_auth(key).send().await.unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// [`call`] that must succeed; answers `data`.
async fn ok(server: &TestServer, method: &str, path: &str, key: &str, body: Value) -> Value {
    let (status, value) = call(server, method, path, key, body).await;
    assert!(status.is_success(), "{method} {path}: {status} {value}");
    value["data"].clone()
}

fn time(value: &Value) -> DateTime<Utc> {
    value
        .as_str()
        .unwrap_or_else(|| panic!("a time, got {value}"))
        .parse()
        .unwrap_or_else(|e| panic!("a time, got {value}: {e}"))
}

/// Every wire timestamp in `value` (outside the envelope's `meta`, which
/// the HTTP layer stamps), with the path it was found at.
fn timestamps(value: &Value, path: &str, found: &mut Vec<(String, DateTime<Utc>)>) {
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                if key != "meta" {
                    timestamps(item, &format!("{path}.{key}"), found);
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                timestamps(item, &format!("{path}[{i}]"), found);
            }
        }
        Value::String(text) if is_wire_time(text) => {
            found.push((path.to_owned(), text.parse().unwrap()));
        }
        _ => {}
    }
}

/// `2031-02-03T04:05:06.789Z`: the wire's one time format.
fn is_wire_time(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 24
        && b[4] == b'-'
        && b[10] == b'T'
        && b[19] == b'.'
        && b[23] == b'Z'
        && text.parse::<DateTime<Utc>>().is_ok()
}

#[tokio::test]
async fn records_events_and_log_rows_are_stamped_by_the_clock() {
    let (server, clock) = on_manual_clock().await;
    let admin = server.admin_key.clone();
    let t0 = now(&clock);

    let workflow_id = server.launch_workflow("clock").await;
    let workflow = ok(
        &server,
        "GET",
        &format!("/workflows/{workflow_id}"),
        &admin,
        json!({}),
    )
    .await;
    assert_eq!(time(&workflow["created_at"]), t0);

    clock.advance(Duration::seconds(2));
    let t1 = now(&clock);
    let agent = ok(
        &server,
        "POST",
        "/agents/register",
        &admin,
        json!({ "name": "clockwork", "issue_api_key": true }),
    )
    .await;
    let (agent_id, agent_key) = (
        agent["id"].as_str().unwrap().to_owned(),
        agent["api_key"].as_str().unwrap().to_owned(),
    );
    let task = ok(
        &server,
        "POST",
        "/tasks",
        &admin,
        json!({ "title": "tick", "type": "code" }),
    )
    .await;
    let task_id = task["id"].as_str().unwrap().to_owned();
    assert_eq!(time(&task["created_at"]), t1);

    clock.advance(Duration::seconds(2));
    let t2 = now(&clock);
    let claimed = ok(
        &server,
        "POST",
        "/tasks/claim",
        &agent_key,
        json!({ "agent_id": agent_id }),
    )
    .await;
    assert_eq!(claimed["id"], task_id.as_str(), "the agent claims our task");
    assert_eq!(time(&claimed["claimed_at"]), t2);

    clock.advance(Duration::seconds(2));
    let t3 = now(&clock);
    let path = format!("/tasks/{task_id}");
    ok(
        &server,
        "POST",
        &format!("{path}/start"),
        &agent_key,
        json!({}),
    )
    .await;
    let done = ok(
        &server,
        "POST",
        &format!("{path}/complete"),
        &agent_key,
        json!({}),
    )
    .await;
    assert_eq!(time(&done["completed_at"]), t3);
    assert_eq!(time(&done["updated_at"]), t3);
    ok(
        &server,
        "POST",
        "/logs/ingest",
        &admin,
        json!({ "entries": [{ "category": "tool", "operation": "clock.tick", "payload": {} }] }),
    )
    .await;
    let key = ok(
        &server,
        "POST",
        "/api-keys",
        &admin,
        json!({ "scope": "agent", "name": "stamped" }),
    )
    .await;
    assert_eq!(time(&key["created_at"]), t3);

    // Events: each at the step that wrote it.
    let events = ok(&server, "GET", "/events?limit=500", &admin, json!({})).await;
    let at = |kind: &str, to_state: &str| -> Vec<DateTime<Utc>> {
        events
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["type"] == kind && e["entity_id"] == task_id.as_str())
            .filter(|e| e["data"]["to_state"] == to_state)
            .map(|e| time(&e["created_at"]))
            .collect()
    };
    assert_eq!(at("task.created", "pending"), vec![t1], "{events}");
    assert_eq!(at("task.state_changed", "claimed"), vec![t2], "{events}");
    assert_eq!(
        at("task.state_changed", "in_progress"),
        vec![t3],
        "{events}"
    );
    assert_eq!(at("task.state_changed", "completed"), vec![t3], "{events}");

    // Log rows: the platform's row of the completion and the runtime's row.
    let logs = ok(&server, "GET", "/logs?limit=500", &admin, json!({})).await;
    let logged = |operation: &str| -> Vec<DateTime<Utc>> {
        logs.as_array()
            .unwrap()
            .iter()
            .filter(|row| row["operation"] == operation)
            .filter(|row| operation == "clock.tick" || row["task_id"] == task_id.as_str())
            .map(|row| time(&row["created_at"]))
            .collect()
    };
    assert_eq!(logged("task.complete"), vec![t3], "{logs}");
    assert_eq!(logged("clock.tick"), vec![t3], "{logs}");

    // A relative bound counts back from the clock: 30 seconds after t3,
    // `until=20s` still reaches the row written at t3.
    clock.advance(Duration::seconds(30));
    let until = ok(
        &server,
        "GET",
        "/logs?operation=clock.tick&until=20s",
        &admin,
        json!({}),
    )
    .await;
    assert_eq!(until.as_array().unwrap().len(), 1, "{until}");

    // And nothing anywhere carries the machine's date.
    let mut found = Vec::new();
    for (name, value) in [
        (
            "workflow",
            ok(
                &server,
                "GET",
                &format!("/workflows/{workflow_id}"),
                &admin,
                json!({}),
            )
            .await,
        ),
        ("task", ok(&server, "GET", &path, &admin, json!({})).await),
        (
            "agent",
            ok(
                &server,
                "GET",
                &format!("/agents/{agent_id}"),
                &admin,
                json!({}),
            )
            .await,
        ),
        (
            "api keys",
            ok(&server, "GET", "/api-keys", &admin, json!({})).await,
        ),
        ("events", events.clone()),
        ("logs", logs.clone()),
    ] {
        timestamps(&value, name, &mut found);
    }
    assert!(
        found.len() > 20,
        "the walk found the answers' times: {found:?}"
    );
    let latest = now(&clock) + Duration::days(366);
    let strays: Vec<_> = found
        .iter()
        .filter(|(_, at)| *at < t0 || *at > latest)
        .collect();
    assert!(
        strays.is_empty(),
        "stamped outside the clock's time: {strays:?}"
    );
}

#[tokio::test]
async fn access_tokens_and_api_keys_expire_by_the_clock() {
    let (server, clock) = on_manual_clock().await;
    let admin = server.admin_key.clone();

    // An access token lives an hour of the clock's time (the default TTL).
    let session = server
        .http()
        .post(server.at("/api/v1/auth/token"))
        .json(&json!({ "api_key": admin }))
        .send()
        .await
        .unwrap();
    assert_eq!(session.status(), StatusCode::OK);
    let session: Value = session.json().await.unwrap();
    let token = session["data"]["token"].as_str().unwrap().to_owned();
    assert_eq!(
        time(&session["data"]["expires_at"]),
        now(&clock) + Duration::hours(1)
    );
    let (status, _) = call(&server, "GET", "/auth/me", &token, json!({})).await;
    assert_eq!(status, StatusCode::OK);
    clock.advance(Duration::minutes(61));
    let (status, body) = call(&server, "GET", "/auth/me", &token, json!({})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");

    // An expiry already past by the clock is refused (it is years ahead of
    // the machine's time).
    let past = now(&clock) - Duration::hours(1);
    let (status, body) = call(
        &server,
        "POST",
        "/api-keys",
        &admin,
        json!({ "scope": "agent", "name": "stale", "expires_at": past.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string() }),
    )
    .await;
    assert!(status.is_client_error(), "{status} {body}");

    // A key valid for a day works until the clock passes its expiry.
    let until = now(&clock) + Duration::days(1);
    let key = ok(
        &server,
        "POST",
        "/api-keys",
        &admin,
        json!({ "scope": "agent", "name": "day", "expires_at": until.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string() }),
    )
    .await;
    let raw = key["api_key"].as_str().unwrap().to_owned();
    let (status, body) = call(&server, "GET", "/auth/me", &raw, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    clock.advance(Duration::days(2));
    let (status, body) = call(&server, "GET", "/auth/me", &raw, json!({})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
}
