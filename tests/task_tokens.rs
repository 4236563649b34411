//! Task tokens (issue 11): `POST /tasks/:id/token` gives the assignee a
//! credential for its task's routes only, which stops working when the task
//! leaves that assignment.

use orchestrator_tests::TestServer;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

async fn call(
    server: &TestServer,
    key: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut request = server
        .http()
        .request(method, server.at(path))
        .bearer_auth(key);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let bytes = response.bytes().await.unwrap();
    let value = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).unwrap()
    };
    (status, value)
}

async fn post(server: &TestServer, key: &str, path: &str, body: Value) -> (StatusCode, Value) {
    call(server, key, Method::POST, path, Some(body)).await
}

async fn task(server: &TestServer, title: &str) -> Uuid {
    let (status, body) = post(
        server,
        &server.admin_key,
        "/api/v1/tasks",
        json!({ "title": title, "type": "code" }),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["data"]["id"].as_str().unwrap().parse().unwrap()
}

/// A worker with two agents: (worker id, worker key, agent ids).
async fn worker(server: &TestServer, name: &str) -> (Uuid, String, Vec<Uuid>) {
    let (status, body) = post(
        server,
        &server.admin_key,
        "/api/v1/workers/register",
        json!({ "name": name, "agents": [{ "name": format!("{name}-a") }, { "name": format!("{name}-b") }] }),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let data = &body["data"];
    (
        data["worker_id"].as_str().unwrap().parse().unwrap(),
        data["worker_api_key"].as_str().unwrap().to_owned(),
        data["agents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["id"].as_str().unwrap().parse().unwrap())
            .collect(),
    )
}

async fn claim(server: &TestServer, key: &str, agent: Uuid) -> Uuid {
    let (status, body) = post(
        server,
        key,
        "/api/v1/tasks/claim",
        json!({ "agent_id": agent }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["data"]["id"].as_str().unwrap().parse().unwrap()
}

async fn token(server: &TestServer, key: &str, task: Uuid, agent: Uuid) -> String {
    let (status, body) = post(
        server,
        key,
        &format!("/api/v1/tasks/{task}/token"),
        json!({ "agent_id": agent }),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["data"]["task_id"], json!(task));
    assert_eq!(body["data"]["agent_id"], json!(agent));
    let token = body["data"]["token"].as_str().unwrap().to_owned();
    assert!(token.starts_with("orch_task_"), "{token}");
    token
}

fn assert_refused(status: StatusCode, body: &Value, wanted: StatusCode, code: &str) {
    assert_eq!(status, wanted, "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    assert!(body["error"]["message"].as_str().is_some(), "{body}");
}

#[tokio::test]
async fn a_task_token_works_for_its_task_only_and_ends_with_it() {
    let server = TestServer::start().await;
    let (_, key, agents) = worker(&server, "tok").await;
    let first = task(&server, "first").await;
    let second = task(&server, "second").await;
    assert_eq!(claim(&server, &key, agents[0]).await, first);
    assert_eq!(claim(&server, &key, agents[1]).await, second);
    let tok = token(&server, &key, first, agents[0]).await;

    // Its own task: read, context, start, a handoff, logs of the task.
    let (status, body) = call(
        &server,
        &tok,
        Method::GET,
        &format!("/api/v1/tasks/{first}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = call(
        &server,
        &tok,
        Method::GET,
        &format!("/api/v1/tasks/{first}/context"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = post(
        &server,
        &tok,
        &format!("/api/v1/tasks/{first}/start"),
        json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["state"], "in_progress");
    let (status, body) = post(
        &server,
        &tok,
        &format!("/api/v1/tasks/{first}/handoffs"),
        json!({ "summary": "half way" }),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let entry = |task: Uuid| json!({ "category": "tool", "operation": "task.line", "task_id": task, "payload": { "line": "hi" } });
    let (status, body) = post(
        &server,
        &tok,
        "/api/v1/logs/ingest",
        json!({ "entries": [entry(first)] }),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = post(
        &server,
        &tok,
        &format!("/api/v1/agents/{}/heartbeat", agents[0]),
        json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // Another task, another agent, logs of another task: 403 in the envelope.
    let (status, body) = call(
        &server,
        &tok,
        Method::GET,
        &format!("/api/v1/tasks/{second}"),
        None,
    )
    .await;
    assert_refused(status, &body, StatusCode::FORBIDDEN, "FORBIDDEN");
    let (status, body) = post(
        &server,
        &tok,
        &format!("/api/v1/tasks/{second}/complete"),
        json!({ "output": {} }),
    )
    .await;
    assert_refused(status, &body, StatusCode::FORBIDDEN, "FORBIDDEN");
    let (status, body) = post(
        &server,
        &tok,
        &format!("/api/v1/tasks/{second}/fail"),
        json!({}),
    )
    .await;
    assert_refused(status, &body, StatusCode::FORBIDDEN, "FORBIDDEN");
    let (status, body) = post(
        &server,
        &tok,
        &format!("/api/v1/agents/{}/heartbeat", agents[1]),
        json!({}),
    )
    .await;
    assert_refused(status, &body, StatusCode::FORBIDDEN, "FORBIDDEN");
    let (status, body) = post(
        &server,
        &tok,
        "/api/v1/logs/ingest",
        json!({ "entries": [entry(first), entry(second)] }),
    )
    .await;
    assert_refused(status, &body, StatusCode::FORBIDDEN, "FORBIDDEN");
    let (status, body) = post(
        &server,
        &tok,
        "/api/v1/logs/ingest",
        json!({ "entries": [{ "category": "tool", "operation": "no.task" }] }),
    )
    .await;
    assert_refused(status, &body, StatusCode::FORBIDDEN, "FORBIDDEN");
    // Listing, claiming, new tokens, admin routes: 403.
    for (method, path, body) in [
        (Method::GET, "/api/v1/tasks".to_owned(), None),
        (
            Method::POST,
            "/api/v1/tasks/claim".to_owned(),
            Some(json!({ "agent_id": agents[0] })),
        ),
        (
            Method::POST,
            format!("/api/v1/tasks/{first}/token"),
            Some(json!({})),
        ),
        (
            Method::POST,
            format!("/api/v1/tasks/{first}/cancel"),
            Some(json!({})),
        ),
        (Method::GET, "/api/v1/fleet/workers".to_owned(), None),
        (Method::GET, "/api/v1/api-keys".to_owned(), None),
        (
            Method::POST,
            "/api/v1/execution-environments".to_owned(),
            Some(json!({ "name": "x", "image": "x" })),
        ),
    ] {
        let (status, body) = call(&server, &tok, method, &path, body).await;
        assert_refused(status, &body, StatusCode::FORBIDDEN, "FORBIDDEN");
    }
    // A tampered token: 401.
    let (status, body) = call(
        &server,
        &format!("{tok}x"),
        Method::GET,
        &format!("/api/v1/tasks/{first}"),
        None,
    )
    .await;
    assert_refused(status, &body, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");

    // It completes its task; then it stops working, even for reads.
    let (status, body) = post(
        &server,
        &tok,
        &format!("/api/v1/tasks/{first}/complete"),
        json!({ "output": { "ok": true } }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["state"], "completed");
    let (status, body) = call(
        &server,
        &tok,
        Method::GET,
        &format!("/api/v1/tasks/{first}"),
        None,
    )
    .await;
    assert_refused(status, &body, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
    let (status, body) = post(
        &server,
        &tok,
        "/api/v1/logs/ingest",
        json!({ "entries": [entry(first)] }),
    )
    .await;
    assert_refused(status, &body, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
}

#[tokio::test]
async fn a_task_token_ends_when_the_task_is_cancelled_or_reassigned() {
    let server = TestServer::start().await;
    let (_, key, agents) = worker(&server, "end").await;
    // Cancelled.
    let cancelled = task(&server, "to cancel").await;
    assert_eq!(claim(&server, &key, agents[0]).await, cancelled);
    let tok = token(&server, &key, cancelled, agents[0]).await;
    let (status, _) = call(
        &server,
        &tok,
        Method::GET,
        &format!("/api/v1/tasks/{cancelled}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = post(
        &server,
        &server.admin_key,
        &format!("/api/v1/tasks/{cancelled}/cancel"),
        json!({ "reason": "not needed" }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = post(
        &server,
        &tok,
        &format!("/api/v1/tasks/{cancelled}/fail"),
        json!({}),
    )
    .await;
    assert_refused(status, &body, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");

    // Reassigned and claimed again by the same agent: a new assignment, so
    // the old token is dead while a new one works.
    let moved = task(&server, "to move").await;
    assert_eq!(claim(&server, &key, agents[1]).await, moved);
    let old = token(&server, &key, moved, agents[1]).await;
    let (status, body) = post(
        &server,
        &server.admin_key,
        &format!("/api/v1/tasks/{moved}/reassign"),
        json!({ "reason": "again" }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = call(
        &server,
        &old,
        Method::GET,
        &format!("/api/v1/tasks/{moved}"),
        None,
    )
    .await;
    assert_refused(status, &body, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
    assert_eq!(claim(&server, &key, agents[1]).await, moved);
    let (status, _) = call(
        &server,
        &old,
        Method::GET,
        &format!("/api/v1/tasks/{moved}"),
        None,
    )
    .await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "a token of an earlier assignment stays dead"
    );
    let new = token(&server, &key, moved, agents[1]).await;
    let (status, _) = call(
        &server,
        &new,
        Method::GET,
        &format!("/api/v1/tasks/{moved}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn only_the_assignee_gets_a_task_token() {
    let server = TestServer::start().await;
    let (_, key, agents) = worker(&server, "who").await;
    let (_, other_key, other_agents) = worker(&server, "other").await;
    let pending = task(&server, "pending").await;
    // Not claimed yet: the admin naming an agent is not the assignee.
    let (status, body) = post(
        &server,
        &server.admin_key,
        &format!("/api/v1/tasks/{pending}/token"),
        json!({ "agent_id": agents[0] }),
    )
    .await;
    assert_refused(status, &body, StatusCode::FORBIDDEN, "FORBIDDEN");
    assert_eq!(claim(&server, &key, agents[0]).await, pending);
    // Another worker: 403; the other agent of the same worker is still the
    // same worker, which may act for its agents.
    let (status, body) = post(
        &server,
        &other_key,
        &format!("/api/v1/tasks/{pending}/token"),
        json!({ "agent_id": other_agents[0] }),
    )
    .await;
    assert_refused(status, &body, StatusCode::FORBIDDEN, "FORBIDDEN");
    // Unknown task: 404; not a UUID: 404; unknown field: 422.
    let (status, body) = post(
        &server,
        &key,
        &format!("/api/v1/tasks/{}/token", Uuid::new_v4()),
        json!({}),
    )
    .await;
    assert_refused(status, &body, StatusCode::NOT_FOUND, "NOT_FOUND");
    let (status, body) = post(&server, &key, "/api/v1/tasks/nope/token", json!({})).await;
    assert_refused(status, &body, StatusCode::NOT_FOUND, "NOT_FOUND");
    let (status, body) = post(
        &server,
        &key,
        &format!("/api/v1/tasks/{pending}/token"),
        json!({ "agent": agents[0] }),
    )
    .await;
    assert_refused(
        status,
        &body,
        StatusCode::UNPROCESSABLE_ENTITY,
        "SCHEMA_VALIDATION_FAILED",
    );
    // Through the SDK, the token is a working credential.
    let issued = server
        .client(&key)
        .tasks()
        .token(
            pending,
            &orchestrator_client::api::IssueTaskToken {
                agent_id: Some(agents[0]),
                worker_id: None,
            },
        )
        .await
        .unwrap();
    let scoped = server.client(&issued.token);
    assert_eq!(scoped.tasks().get(pending).await.unwrap().id, pending);
    let refused = scoped.fleet().workers().await.unwrap_err();
    assert_eq!(refused.status(), Some(403));
}
