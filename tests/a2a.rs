//! A2A ingress: the agent card (no credential, URLs from the request's
//! host), submission (external id kept as metadata, priority normalised,
//! metadata merged, 422 without a title, `request_id` replay, tenant
//! isolation, scopes) and the status stream (the status mapping,
//! `Last-Event-ID` replay, the end after a terminal status).

use futures_util::StreamExt;
use orchestrator_client::A2aStreamItem;
use orchestrator_client::api::{A2aStatus, A2aTaskInput, CreateTenant, SubmitA2aTask};
use orchestrator_tests::TestServer;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::Duration;
use uuid::Uuid;

const WAIT: Duration = Duration::from_secs(10);

fn submission(title: &str) -> SubmitA2aTask {
    SubmitA2aTask {
        task: A2aTaskInput {
            title: title.into(),
            ..Default::default()
        },
        request_id: None,
    }
}

/// Registers an agent with its own key: (id, key).
async fn agent(server: &TestServer, name: &str) -> (String, String) {
    let response = server
        .http()
        .post(server.at("/api/v1/agents/register"))
        .bearer_auth(&server.admin_key)
        .json(&json!({ "name": name, "issue_api_key": true }))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success());
    let body: Value = response.json().await.unwrap();
    (
        body["data"]["id"].as_str().unwrap().to_owned(),
        body["data"]["api_key"].as_str().unwrap().to_owned(),
    )
}

/// `POST /api/v1<path>` with `key`, asserting success.
async fn post(server: &TestServer, key: &str, path: &str, body: Value) -> Value {
    let response = server
        .http()
        .post(server.at(&format!("/api/v1{path}")))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    assert!(status.is_success(), "POST {path}: {status} {body}");
    body["data"].clone()
}

/// Every item of `stream` until it ends, within [`WAIT`].
async fn drain(
    mut stream: futures_util::stream::BoxStream<
        'static,
        orchestrator_client::Result<A2aStreamItem>,
    >,
) -> Vec<A2aStreamItem> {
    let mut items = Vec::new();
    loop {
        match tokio::time::timeout(WAIT, stream.next())
            .await
            .expect("the stream moves or ends within 10 s")
        {
            Some(item) => items.push(item.expect("no stream error")),
            None => return items,
        }
    }
}

/// The whole body of an SSE response that the server ends, within [`WAIT`].
async fn whole_body(response: reqwest::Response) -> String {
    tokio::time::timeout(WAIT, response.text())
        .await
        .expect("the server ends the stream within 10 s")
        .unwrap()
}

#[tokio::test]
async fn the_agent_card_needs_no_credential_and_names_the_callers_host() {
    let server = TestServer::start().await;
    let card = server.anonymous().a2a().card().await.unwrap();
    assert_eq!(card.protocol, "a2a");
    assert_eq!(card.protocol_version, "0.1");
    assert_eq!(card.authentication.kind, "bearer_api_key");
    assert_eq!(card.authentication.header, "Authorization");
    assert!(card.capabilities.task_submission);
    assert!(card.capabilities.status_query);
    assert!(card.capabilities.streaming_updates);
    assert_eq!(
        card.endpoints.submit_task,
        format!("{}/api/v1/a2a/tasks", server.url)
    );
    assert_eq!(
        card.endpoints.get_task,
        format!("{}/api/v1/a2a/tasks/{{task_id}}", server.url)
    );
    assert_eq!(
        card.endpoints.stream_task,
        format!("{}/api/v1/a2a/tasks/{{task_id}}/events", server.url)
    );

    // Behind a proxy: the forwarded host and scheme.
    let proxied: Value = server
        .http()
        .get(server.at("/.well-known/agent.json"))
        .header("x-forwarded-proto", "https")
        .header("x-forwarded-host", "orch.example.com, inner.local")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        proxied["endpoints"]["get_task"],
        "https://orch.example.com/api/v1/a2a/tasks/{task_id}"
    );
    // A plain Host header, and junk in the forwarded host is ignored.
    let hosted: Value = server
        .http()
        .get(server.at("/.well-known/agent.json"))
        .header("host", "agents.example.org:8443")
        .header("x-forwarded-host", "bad host/\"x")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        hosted["endpoints"]["submit_task"],
        "http://agents.example.org:8443/api/v1/a2a/tasks"
    );
}

#[tokio::test]
async fn submission_keeps_the_external_id_as_metadata_and_normalises_priority() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let mut request = submission("Summarise the report");
    request.task.id = Some("ext-42".into());
    request.task.priority = Some("urgent".into());
    request.task.description = Some("three lines".into());
    request.task.input = Some(json!({ "doc": "r.pdf" }));
    request.task.metadata = Some(json!({ "source": "partner", "external_task_id": "spoof" }));
    let task = admin.a2a().submit(&request).await.unwrap();
    assert_eq!(task.status, A2aStatus::Submitted);
    assert_eq!(task.title, "Summarise the report");
    assert_ne!(task.id.to_string(), "ext-42");
    assert_eq!(task.result, None);
    let ingress = &task.metadata["protocol_ingress"];
    assert_eq!(ingress["external_task_id"], "ext-42");
    assert_eq!(ingress["source"], "partner");
    assert_eq!(ingress["protocol"], "a2a");
    assert_eq!(task.metadata["task_id"], json!(task.id));

    // The platform task is an ordinary task.
    let platform = admin.tasks().get(task.id).await.unwrap();
    assert_eq!(platform.priority.as_str(), "normal");
    assert_eq!(platform.state.as_str(), "pending");
    assert_eq!(platform.input, json!({ "doc": "r.pdf" }));
    assert_eq!(
        platform.metadata["protocol_ingress"]["external_task_id"],
        "ext-42"
    );

    // A known priority is kept.
    let mut high = submission("High");
    high.task.priority = Some("HIGH".into());
    let high = admin.a2a().submit(&high).await.unwrap();
    assert_eq!(
        admin.tasks().get(high.id).await.unwrap().priority.as_str(),
        "high"
    );
    // No external id: null.
    assert_eq!(
        high.metadata["protocol_ingress"]["external_task_id"],
        Value::Null
    );

    // GET answers the same view.
    let read = admin.a2a().get(task.id).await.unwrap();
    assert_eq!(read.id, task.id);
    assert_eq!(read.status, A2aStatus::Submitted);
    assert_eq!(read.metadata, task.metadata);
}

#[tokio::test]
async fn submission_validates_replays_and_stays_in_its_tenant() {
    let server = TestServer::start().await;
    let http = server.http();
    let submit = |body: Value, key: Option<String>| {
        let mut request = http.post(server.at("/api/v1/a2a/tasks")).json(&body);
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        request.send()
    };
    let admin_key = Some(server.admin_key.clone());
    for (body, code) in [
        (
            json!({ "task": { "description": "no title" } }),
            "SCHEMA_VALIDATION_FAILED",
        ),
        (
            json!({ "task": { "title": 7 } }),
            "SCHEMA_VALIDATION_FAILED",
        ),
        (json!({}), "SCHEMA_VALIDATION_FAILED"),
        (
            json!({ "task": { "title": "t", "bogus": 1 } }),
            "SCHEMA_VALIDATION_FAILED",
        ),
        (
            json!({ "task": { "title": "t", "workflow_id": "nope" } }),
            "SCHEMA_VALIDATION_FAILED",
        ),
    ] {
        let response = submit(body.clone(), admin_key.clone()).await.unwrap();
        assert_eq!(
            response.status(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}"
        );
        let value: Value = response.json().await.unwrap();
        assert_eq!(value["error"]["code"], code, "{body}");
    }
    for body in [
        json!({ "task": { "title": "  " } }),
        json!({ "task": { "title": "t", "metadata": [1] } }),
    ] {
        let response = submit(body.clone(), admin_key.clone()).await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
    }
    let response = submit(json!({ "task": { "title": "t" } }), None)
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    // Nothing above created a task.
    let admin = server.admin();
    let tasks = admin
        .tasks()
        .list(&Default::default(), Default::default())
        .await
        .unwrap();
    assert_eq!(tasks.total, 0);

    // request_id replays the first answer; the same id with another body conflicts.
    let mut request = submission("Once");
    request.request_id = Some("a2a-once".into());
    let first = admin.a2a().submit(&request).await.unwrap();
    let again = admin.a2a().submit(&request).await.unwrap();
    assert_eq!(first.id, again.id);
    request.task.title = "Twice".into();
    assert_eq!(
        admin.a2a().submit(&request).await.unwrap_err().status(),
        Some(409)
    );

    // Another tenant sees none of it.
    let other = server
        .service()
        .tenants()
        .create(&CreateTenant {
            name: "Other".into(),
            slug: None,
            request_id: None,
        })
        .await
        .unwrap();
    let theirs = server.client(&other.admin_key.api_key);
    assert_eq!(
        theirs.a2a().get(first.id).await.unwrap_err().status(),
        Some(404)
    );
    let stream = http
        .get(server.at(&format!("/api/v1/a2a/tasks/{}/events", first.id)))
        .bearer_auth(&other.admin_key.api_key)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        admin.a2a().get(Uuid::new_v4()).await.unwrap_err().status(),
        Some(404)
    );
}

#[tokio::test]
async fn the_status_stream_follows_the_task_and_ends_after_it_completes() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let task = admin.a2a().submit(&submission("Stream me")).await.unwrap();
    let stream = admin.a2a().events(task.id, None);
    // The stream is lazy: start reading, then move the task.
    let reader = tokio::spawn(drain(stream));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let worker = agent(&server, "a2a-runner").await;
    let claimed = post(
        &server,
        &worker.1,
        "/tasks/claim",
        json!({ "agent_id": worker.0 }),
    )
    .await;
    assert_eq!(claimed["id"], json!(task.id));
    let path = format!("/tasks/{}", task.id);
    post(&server, &worker.1, &format!("{path}/start"), json!({})).await;
    post(
        &server,
        &worker.1,
        &format!("{path}/complete"),
        json!({ "output": { "summary": "done" } }),
    )
    .await;
    let items = reader.await.unwrap();
    let statuses: Vec<A2aStatus> = items.iter().map(|i| i.event.status).collect();
    assert_eq!(
        statuses,
        [
            A2aStatus::Submitted,
            A2aStatus::Working,
            A2aStatus::Working,
            A2aStatus::Completed
        ]
    );
    assert!(items.iter().all(|i| i.event.task_id == task.id));
    let done = admin.a2a().get(task.id).await.unwrap();
    assert_eq!(done.status, A2aStatus::Completed);
    assert_eq!(done.result, Some(json!({ "summary": "done" })));

    // The raw frames, replayed after the first event; the server ends the body.
    let first_id = items[0].id.clone().unwrap();
    let response = server
        .http()
        .get(server.at(&format!("/api/v1/a2a/tasks/{}/events", task.id)))
        .bearer_auth(&server.admin_key)
        .header("last-event-id", &first_id)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    let body = whole_body(response).await;
    let frames: Vec<&str> = body.split("\n\n").filter(|f| !f.is_empty()).collect();
    assert_eq!(frames.len(), 3, "{body}");
    for (frame, item) in frames.iter().zip(&items[1..]) {
        let lines: Vec<&str> = frame.lines().collect();
        assert_eq!(lines[0], format!("id: {}", item.id.as_deref().unwrap()));
        assert_eq!(lines[1], "event: task.state_changed");
        let data: Value = serde_json::from_str(lines[2].strip_prefix("data: ").unwrap()).unwrap();
        assert_eq!(data["task_id"], json!(task.id));
        assert_eq!(data["status"], json!(item.event.status));
        assert!(data["created_at"].is_string());
    }

    // Resuming after the terminal frame: nothing more, and the stream ends.
    let last_id = items.last().unwrap().id.clone();
    assert!(drain(admin.a2a().events(task.id, last_id)).await.is_empty());
}

#[tokio::test]
async fn escalation_asks_for_input_and_cancellation_ends_the_stream() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let task = admin.a2a().submit(&submission("Cancel me")).await.unwrap();
    let worker = agent(&server, "a2a-escalator").await;
    post(
        &server,
        &worker.1,
        "/tasks/claim",
        json!({ "agent_id": worker.0 }),
    )
    .await;
    let path = format!("/tasks/{}", task.id);
    post(
        &server,
        &server.admin_key,
        &format!("{path}/escalate"),
        json!({ "reason": "need a human" }),
    )
    .await;
    assert_eq!(
        admin.a2a().get(task.id).await.unwrap().status,
        A2aStatus::InputRequired
    );
    post(
        &server,
        &server.admin_key,
        &format!("{path}/cancel"),
        json!({ "reason": "stop" }),
    )
    .await;
    let statuses: Vec<A2aStatus> = drain(admin.a2a().events(task.id, None))
        .await
        .into_iter()
        .map(|i| i.event.status)
        .collect();
    assert_eq!(
        statuses,
        [
            A2aStatus::Submitted,
            A2aStatus::Working,
            A2aStatus::InputRequired,
            A2aStatus::Canceled
        ]
    );
    // A stream on a task that is not over stays open (an agent key may read it).
    let open = server.client(&worker.1);
    let other = admin.a2a().submit(&submission("Open")).await.unwrap();
    let mut stream = open.a2a().events(other.id, None);
    let first = tokio::time::timeout(WAIT, stream.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(first.event.status, A2aStatus::Submitted);
    assert!(
        tokio::time::timeout(Duration::from_millis(500), stream.next())
            .await
            .is_err(),
        "an open task's stream waits"
    );
}
