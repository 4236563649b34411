//! Keys on every path that creates tasks besides `POST /tasks`: the
//! orchestrator tasks of activations (keys from the playbook definition),
//! A2A submit, and schedules (a task target's keys checked at create and
//! patch, as a task create checks them).

use super::{agents, claim};
use orchestrator_client::api::{ExecutionMode, RegisterAgent};
use orchestrator_tests::TestServer;
use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

async fn call(server: &TestServer, method: &str, path: &str, body: Value) -> (StatusCode, Value) {
    let url = server.at(&format!("/api/v1{path}"));
    let http = server.http();
    let request = match method {
        "GET" => http.get(url),
        "PUT" => http.put(url).json(&body),
        "PATCH" => http.patch(url).json(&body),
        _ => http.post(url).json(&body),
    };
    let response = request.bearer_auth(&server.admin_key).send().await.unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// The one field error of a refused answer, by its field.
fn field_of(answer: &Value) -> String {
    answer.to_string()
}

/// A playbook whose definition names default keys (`extra` is merged into
/// the definition); its id.
async fn playbook(server: &TestServer, name: &str, extra: Value) -> (StatusCode, Value) {
    let mut definition = json!({ "stages": [{ "name": "build" }] });
    definition
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    call(
        server,
        "POST",
        "/playbooks",
        json!({ "name": name, "outcome": "done", "definition": definition }),
    )
    .await
}

/// Launches a workflow of `playbook` and answers its tasks (the
/// orchestrator task of its `workflow.created` activation).
async fn launch(server: &TestServer, playbook: &Value, workspace: Uuid, name: &str) -> Vec<Value> {
    let (got, workflow) = call(
        server,
        "POST",
        "/workflows",
        json!({ "playbook_id": playbook["data"]["id"], "workspace_id": workspace, "name": name }),
    )
    .await;
    assert_eq!(got, StatusCode::CREATED, "{workflow}");
    let id = workflow["data"]["id"].as_str().unwrap().to_owned();
    let (_, tasks) = call(
        server,
        "GET",
        &format!("/tasks?workflow_id={id}"),
        Value::Null,
    )
    .await;
    tasks["data"].as_array().unwrap().clone()
}

#[tokio::test]
async fn activation_tasks_carry_the_playbook_keys() {
    let server = TestServer::start().await;
    let admin = server.admin();
    admin.limits().set_rate("llm", 5, 60).await.unwrap();

    // Keys are checked when the playbook is saved.
    let long = "k".repeat(201);
    for (extra, field) in [
        (
            json!({ "concurrency_key": long }),
            "definition.concurrency_key",
        ),
        (json!({ "rate_limit_key": "" }), "definition.rate_limit_key"),
        (
            json!({ "concurrency_key": 7 }),
            "definition.concurrency_key",
        ),
    ] {
        let (got, answer) = playbook(&server, "bad", extra.clone()).await;
        assert_eq!(got, StatusCode::UNPROCESSABLE_ENTITY, "{extra}: {answer}");
        assert!(field_of(&answer).contains(field), "{extra}: {answer}");
    }

    let (got, keyed) = playbook(
        &server,
        "keyed",
        json!({ "concurrency_key": "orchestrate", "rate_limit_key": "llm" }),
    )
    .await;
    assert_eq!(got, StatusCode::CREATED, "{keyed}");
    assert_eq!(
        keyed["data"]["definition"]["concurrency_key"],
        "orchestrate"
    );
    let workspace = admin
        .workspaces()
        .create(&orchestrator_client::api::workspaces::CreateWorkspace {
            name: "ws".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .id;

    // Each workflow's first activation makes an orchestrator task with the
    // playbook's keys.
    let mut orchestration = Vec::new();
    for name in ["one", "two"] {
        let tasks = launch(&server, &keyed, workspace, name).await;
        assert_eq!(tasks.len(), 1, "{tasks:?}");
        let task = &tasks[0];
        assert_eq!(task["is_orchestrator_task"], true, "{task}");
        assert_eq!(task["concurrency_key"], "orchestrate", "{task}");
        assert_eq!(task["rate_limit_key"], "llm", "{task}");
        orchestration.push(task["id"].as_str().unwrap().parse::<Uuid>().unwrap());
    }

    // And the limit holds: the key has no limit set (limit 1), so one
    // orchestrator claims and the other waits.
    let mut orchestrators = Vec::new();
    for i in 0..2 {
        let agent = admin
            .agents()
            .register(&RegisterAgent {
                name: format!("orchestrator-{i}"),
                execution_mode: Some(ExecutionMode::Orchestrator),
                ..Default::default()
            })
            .await
            .unwrap();
        orchestrators.push(agent.id);
    }
    let first = claim(&admin, orchestrators[0]).await.expect("one turn");
    assert!(orchestration.contains(&first.id));
    assert!(
        claim(&admin, orchestrators[1]).await.is_none(),
        "the playbook's key holds the second turn back"
    );
    let key = admin.limits().get_concurrency("orchestrate").await.unwrap();
    assert_eq!((key.limit, key.held, key.pending), (1, 1, 1));
    let rate = admin.limits().get_rate("llm").await.unwrap();
    assert_eq!((rate.claimed_in_window, rate.pending), (1, 1));

    // A task of the workflow that names its own key keeps it; the key it
    // does not name comes from the playbook.
    let workflow_id = first.workflow_id.unwrap();
    let (got, own) = call(
        &server,
        "POST",
        "/tasks",
        json!({ "title": "own key", "type": "code", "workflow_id": workflow_id, "concurrency_key": "mine" }),
    )
    .await;
    assert_eq!(got, StatusCode::CREATED, "{own}");
    assert_eq!(own["data"]["concurrency_key"], "mine");
    assert_eq!(own["data"]["rate_limit_key"], "llm");

    // A playbook rate key with no limit set does not fail the workflow:
    // its tasks carry the key and are not held back.
    let (got, unset) = playbook(&server, "unset", json!({ "rate_limit_key": "later" })).await;
    assert_eq!(got, StatusCode::CREATED, "{unset}");
    let tasks = launch(&server, &unset, workspace, "three").await;
    assert_eq!(tasks[0]["rate_limit_key"], "later");
    assert_eq!(tasks[0]["concurrency_key"], Value::Null);
    let third = claim(&admin, orchestrators[1])
        .await
        .expect("not held back");
    assert_eq!(third.id.to_string(), tasks[0]["id"].as_str().unwrap());
}

#[tokio::test]
async fn a2a_submit_carries_the_keys() {
    let server = TestServer::start().await;
    let admin = server.admin();
    admin.limits().set_concurrency("repo", 1).await.unwrap();
    admin.limits().set_rate("llm", 5, 60).await.unwrap();
    let submit = |title: &str, keys: Value| {
        let mut task = json!({ "title": title });
        task.as_object_mut()
            .unwrap()
            .extend(keys.as_object().unwrap().clone());
        json!({ "task": task })
    };
    let mut ids = Vec::new();
    for title in ["a", "b"] {
        let (got, made) = call(
            &server,
            "POST",
            "/a2a/tasks",
            submit(
                title,
                json!({ "concurrency_key": "repo", "rate_limit_key": "llm" }),
            ),
        )
        .await;
        assert_eq!(got, StatusCode::CREATED, "{made}");
        ids.push(
            made["data"]["id"]
                .as_str()
                .unwrap()
                .parse::<Uuid>()
                .unwrap(),
        );
    }
    let task = admin.tasks().get(ids[0]).await.unwrap();
    assert_eq!(task.concurrency_key.as_deref(), Some("repo"));
    assert_eq!(task.rate_limit_key.as_deref(), Some("llm"));
    let claimers = agents(&admin, "a2a", 2).await;
    assert!(claim(&admin, claimers[0]).await.is_some());
    assert!(
        claim(&admin, claimers[1]).await.is_none(),
        "the second submitted task waits on its key"
    );

    // Checked as a task create checks them; nothing is created.
    let long = "k".repeat(201);
    for (keys, status, field) in [
        (json!({ "rate_limit_key": "unset" }), 400, "rate_limit_key"),
        (json!({ "concurrency_key": long }), 422, "concurrency_key"),
    ] {
        let (got, answer) = call(&server, "POST", "/a2a/tasks", submit("bad", keys.clone())).await;
        assert_eq!(got.as_u16(), status, "{keys}: {answer}");
        assert!(field_of(&answer).contains(field), "{keys}: {answer}");
    }
    let (_, tasks) = call(&server, "GET", "/tasks", Value::Null).await;
    assert_eq!(tasks["data"].as_array().unwrap().len(), 2);
}

/// A schedule body with a task target carrying `keys`.
fn schedule(name: &str, keys: Value) -> Value {
    let mut task = json!({ "title": "scheduled", "type": "code" });
    task.as_object_mut()
        .unwrap()
        .extend(keys.as_object().unwrap().clone());
    json!({
        "name": name, "every_seconds": 3600, "paused": true,
        "target": { "kind": "task", "task": task },
    })
}

#[tokio::test]
async fn schedule_task_keys_are_checked_at_create_and_patch() {
    let server = TestServer::start().await;
    let long = "k".repeat(201);
    let cases = [
        (
            json!({ "rate_limit_key": "unset" }),
            400,
            "target.task.rate_limit_key",
        ),
        (
            json!({ "rate_limit_key": long }),
            422,
            "target.task.rate_limit_key",
        ),
        (
            json!({ "concurrency_key": long }),
            422,
            "target.task.concurrency_key",
        ),
        (
            json!({ "concurrency_key": "" }),
            422,
            "target.task.concurrency_key",
        ),
    ];
    for (keys, status, field) in &cases {
        let (got, answer) =
            call(&server, "POST", "/schedules", schedule("bad", keys.clone())).await;
        assert_eq!(got.as_u16(), *status, "{keys}: {answer}");
        assert!(
            field_of(&answer).contains(field),
            "{keys} names {field}: {answer}"
        );
    }
    let (_, listed) = call(&server, "GET", "/schedules", Value::Null).await;
    assert_eq!(listed["data"], json!([]), "no schedule was created");
    let (_, keys) = call(&server, "GET", "/concurrency-limits", Value::Null).await;
    assert_eq!(keys["data"], json!([]), "no key row was left behind");

    // A good one, then patches with each bad target: refused, unchanged.
    call(
        &server,
        "PUT",
        "/rate-limits/llm",
        json!({ "limit": 2, "period_seconds": 60 }),
    )
    .await;
    let good = json!({ "concurrency_key": "repo", "rate_limit_key": "llm" });
    let (got, made) = call(&server, "POST", "/schedules", schedule("good", good)).await;
    assert_eq!(got, StatusCode::CREATED, "{made}");
    let id = made["data"]["id"].as_str().unwrap().to_owned();
    for (keys, status, field) in &cases {
        let body = json!({ "target": schedule("good", keys.clone())["target"] });
        let (got, answer) = call(&server, "PATCH", &format!("/schedules/{id}"), body).await;
        assert_eq!(got.as_u16(), *status, "patch {keys}: {answer}");
        assert!(
            field_of(&answer).contains(field),
            "patch {keys} names {field}: {answer}"
        );
    }
    let (_, now) = call(&server, "GET", &format!("/schedules/{id}"), Value::Null).await;
    assert_eq!(now["data"]["target"], made["data"]["target"], "unchanged");

    // Fired, the task carries the keys.
    let (got, run) = call(
        &server,
        "POST",
        &format!("/schedules/{id}/trigger"),
        json!({}),
    )
    .await;
    assert_eq!(got, StatusCode::CREATED, "{run}");
    let task_id: Uuid = run["data"]["task_id"].as_str().unwrap().parse().unwrap();
    let task = server.admin().tasks().get(task_id).await.unwrap();
    assert_eq!(task.concurrency_key.as_deref(), Some("repo"));
    assert_eq!(task.rate_limit_key.as_deref(), Some("llm"));
}
