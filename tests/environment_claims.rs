//! Claims and execution environments (issue 11): a task that names an
//! environment goes only to a claimer that declares it (routing tag
//! `env:<id or name>`, inherited from its worker) or to a claim that asks
//! for it (`execution_environment_id`); such a claim gets only that
//! environment's tasks; bad ids are refused; concurrent claimers never share
//! a task and an agent never holds two.

use orchestrator_tests::TestServer;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::Arc;
use uuid::Uuid;

async fn post(server: &TestServer, key: &str, path: &str, body: Value) -> (StatusCode, Value) {
    let response = server
        .http()
        .post(server.at(path))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    let bytes = response.bytes().await.unwrap();
    let value = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).unwrap()
    };
    (status, value)
}

async fn environment(server: &TestServer, name: &str) -> Uuid {
    let (status, body) = post(
        server,
        &server.admin_key,
        "/api/v1/execution-environments",
        json!({ "name": name, "image": format!("{}:latest", name.to_lowercase()) }),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["data"]["id"].as_str().unwrap().parse().unwrap()
}

async fn task(server: &TestServer, title: &str, environment: Option<Uuid>) -> Uuid {
    let mut body = json!({ "title": title, "type": "code" });
    if let Some(id) = environment {
        body["execution_environment_id"] = json!(id);
    }
    let (status, body) = post(server, &server.admin_key, "/api/v1/tasks", body).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["data"]["id"].as_str().unwrap().parse().unwrap()
}

/// Registers a worker with one agent per name; answers (worker id, worker
/// key, agent ids).
async fn worker(
    server: &TestServer,
    name: &str,
    tags: &[&str],
    agents: usize,
) -> (Uuid, String, Vec<Uuid>) {
    let specs: Vec<Value> = (0..agents)
        .map(|i| json!({ "name": format!("{name}-{i}") }))
        .collect();
    let (status, body) = post(
        server,
        &server.admin_key,
        "/api/v1/workers/register",
        json!({ "name": name, "routing_tags": tags, "agents": specs }),
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

async fn claim(server: &TestServer, key: &str, body: Value) -> (StatusCode, Option<Uuid>, Value) {
    let (status, body) = post(server, key, "/api/v1/tasks/claim", body).await;
    let id = body["data"]["id"].as_str().map(|s| s.parse().unwrap());
    (status, id, body)
}

#[tokio::test]
async fn an_environment_task_goes_only_to_a_claimer_that_can_run_it() {
    let server = TestServer::start().await;
    let python = environment(&server, "Python").await;
    let node = environment(&server, "Node").await;
    let py_task = task(&server, "needs python", Some(python)).await;

    // A worker without the environment gets nothing (the task is the only one).
    let (_, plain_key, plain) = worker(&server, "plain", &[], 1).await;
    let (status, got, _) = claim(&server, &plain_key, json!({ "agent_id": plain[0] })).await;
    assert_eq!((status, got), (StatusCode::NO_CONTENT, None));
    // Nor does one that runs another environment.
    let (node_worker, node_key, node_agents) =
        worker(&server, "node-box", &[&format!("env:{node}")], 1).await;
    let (status, _) = post(
        &server,
        &node_key,
        &format!("/api/v1/workers/{node_worker}/next"),
        json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, got, _) = claim(&server, &node_key, json!({ "agent_id": node_agents[0] })).await;
    assert_eq!((status, got), (StatusCode::NO_CONTENT, None));

    // A plain task still goes to everyone.
    let plain_task = task(&server, "anywhere", None).await;
    let (status, got, _) = claim(&server, &plain_key, json!({ "agent_id": plain[0] })).await;
    assert_eq!((status, got), (StatusCode::OK, Some(plain_task)));

    // A worker that declares the environment by name (any case) gets it.
    let (_, py_key, py_agents) = worker(&server, "py-box", &["env:PYTHON"], 1).await;
    let (status, got, body) = claim(&server, &py_key, json!({ "agent_id": py_agents[0] })).await;
    assert_eq!((status, got), (StatusCode::OK, Some(py_task)), "{body}");
    assert_eq!(body["data"]["execution_environment"]["id"], json!(python));

    // Declared by id, through /workers/:id/next.
    let by_id = task(&server, "python again", Some(python)).await;
    let (py2, py2_key, _) = worker(&server, "py-id", &[&format!("env:{python}")], 1).await;
    let (status, body) = post(
        &server,
        &py2_key,
        &format!("/api/v1/workers/{py2}/next"),
        json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["id"], json!(by_id));

    // The fleet shows what each worker can run.
    let response = server
        .http()
        .get(server.at("/api/v1/fleet/workers"))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap();
    let fleet: Value = response.json().await.unwrap();
    let envs_of = |name: &str| -> Vec<String> {
        fleet["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["name"] == name)
            .unwrap()["environments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(envs_of("py-box"), vec!["Python"]);
    assert_eq!(envs_of("py-id"), vec!["Python"]);
    assert_eq!(envs_of("node-box"), vec!["Node"]);
    assert!(envs_of("plain").is_empty());
}

#[tokio::test]
async fn a_claim_filtered_on_an_environment_gets_only_its_tasks() {
    let server = TestServer::start().await;
    let rust = environment(&server, "Rust").await;
    let other = environment(&server, "Other").await;
    // Older, higher in the queue: tasks of no or another environment.
    task(&server, "plain first", None).await;
    let other_task = task(&server, "other first", Some(other)).await;
    let rust_a = task(&server, "rust a", Some(rust)).await;
    let rust_b = task(&server, "rust b", Some(rust)).await;

    // Two agents without any env tag: asking for the environment is enough.
    let (worker_id, key, agents) = worker(&server, "filter", &[], 2).await;
    let (status, got, body) = claim(
        &server,
        &key,
        json!({ "agent_id": agents[0], "execution_environment_id": rust }),
    )
    .await;
    assert_eq!((status, got), (StatusCode::OK, Some(rust_a)), "{body}");
    let (status, body) = post(
        &server,
        &key,
        &format!("/api/v1/workers/{worker_id}/next"),
        json!({ "agent_id": agents[1], "execution_environment_id": rust }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["id"], json!(rust_b));
    // Nothing of that environment left: 204, though other tasks are pending.
    let (_, _, spare) = worker(&server, "spare", &[], 1).await;
    let (status, got, _) = claim(
        &server,
        &server.admin_key,
        json!({ "agent_id": spare[0], "execution_environment_id": rust }),
    )
    .await;
    assert_eq!((status, got), (StatusCode::NO_CONTENT, None));
    // The other environment's task is still pending and untouched.
    let response = server
        .http()
        .get(server.at(&format!("/api/v1/tasks/{other_task}")))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap();
    let other_read: Value = response.json().await.unwrap();
    assert_eq!(other_read["data"]["state"], "pending");
}

#[tokio::test]
async fn bad_environment_ids_in_a_claim_are_refused() {
    let server = TestServer::start().await;
    let (worker_id, key, agents) = worker(&server, "bad", &[], 1).await;
    task(&server, "bait", None).await;
    // Not a UUID: 422 with the field.
    let (status, body) = post(
        &server,
        &key,
        "/api/v1/tasks/claim",
        json!({ "agent_id": agents[0], "execution_environment_id": "python" }),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["code"], "SCHEMA_VALIDATION_FAILED");
    assert!(
        body.to_string().contains("execution_environment_id"),
        "{body}"
    );
    let (status, body) = post(
        &server,
        &key,
        &format!("/api/v1/workers/{worker_id}/next"),
        json!({ "execution_environment_id": 7 }),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    // A UUID that names no environment: 400 on the field, nothing claimed.
    let unknown = Uuid::new_v4();
    for (path, body) in [
        (
            "/api/v1/tasks/claim".to_owned(),
            json!({ "agent_id": agents[0], "execution_environment_id": unknown }),
        ),
        (
            format!("/api/v1/workers/{worker_id}/next"),
            json!({ "execution_environment_id": unknown }),
        ),
    ] {
        let (status, body) = post(&server, &key, &path, body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(body["error"]["code"], "VALIDATION_ERROR");
        assert!(
            body.to_string().contains("execution_environment_id"),
            "{body}"
        );
    }
    // The bait is still pending: the refused claims changed nothing.
    let (status, got, _) = claim(&server, &key, json!({ "agent_id": agents[0] })).await;
    assert_eq!(status, StatusCode::OK);
    assert!(got.is_some());
}

#[tokio::test]
async fn concurrent_environment_claims_never_share_a_task() {
    let server = Arc::new(TestServer::start().await);
    let env = environment(&server, "Shared").await;
    let mut expected = HashSet::new();
    for i in 0..60 {
        let id = task(
            &server,
            &format!("t{i}"),
            if i % 2 == 0 { Some(env) } else { None },
        )
        .await;
        expected.insert(id);
    }
    // 8 workers x 2 agents: half declare the environment, half filter on it
    // or take anything; each agent claims and completes until nothing is left.
    let mut handles = Vec::new();
    for w in 0..8 {
        let tags: Vec<String> = if w % 2 == 0 {
            vec![format!("env:{env}")]
        } else {
            vec![]
        };
        let tag_refs: Vec<&str> = tags.iter().map(String::as_str).collect();
        let (_, key, agents) = worker(&server, &format!("w{w}"), &tag_refs, 2).await;
        for (i, agent) in agents.into_iter().enumerate() {
            let server = Arc::clone(&server);
            let key = key.clone();
            let filter = w % 4 == 1 && i == 0;
            handles.push(tokio::spawn(async move {
                let mut mine = Vec::new();
                loop {
                    let mut body = json!({ "agent_id": agent });
                    if filter {
                        body["execution_environment_id"] = json!(env);
                    }
                    let (status, got, body) = claim(&server, &key, body).await;
                    let Some(id) = got else {
                        assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
                        break;
                    };
                    let needs = body["data"]["execution_environment"]["id"]
                        .as_str()
                        .is_some();
                    assert!(
                        !needs || w % 2 == 0 || filter,
                        "an agent that cannot run the environment got {id}"
                    );
                    mine.push(id);
                    let (status, body) = post(
                        &server,
                        &key,
                        &format!("/api/v1/tasks/{id}/complete"),
                        json!({ "agent_id": agent, "output": {} }),
                    )
                    .await;
                    assert_eq!(status, StatusCode::OK, "{body}");
                }
                mine
            }));
        }
    }
    let mut seen = HashSet::new();
    for handle in handles {
        for id in handle.await.unwrap() {
            assert!(seen.insert(id), "task {id} was claimed twice");
        }
    }
    assert_eq!(seen, expected, "every task was claimed exactly once");
}
