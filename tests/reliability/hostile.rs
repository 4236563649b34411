//! A walk over the whole route table with hostile input: no answer is a
//! 5xx, every error carries the envelope, and the server is healthy after.

use crate::fixtures::World;
use crate::raw::send;
use futures_util::StreamExt;
use orchestrator_tests::TestServer;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use uuid::Uuid;

/// `path` with its parameters filled: `{id}` (and the second id) by `ids`,
/// free-text keys by `k`.
pub fn fill(path: &str, id: &str, second: &str) -> String {
    path.replace("{id}", id)
        .replace("{work_item_id}", second)
        .replace("{file_id}", second)
        .replace("{key}", "k")
}

/// The real id a route's `{id}` names in `world` (a random one where the
/// world has none of that resource).
pub fn real_id(path: &str, world: &World) -> (String, String) {
    let id = if path.starts_with("/api/v1/agents/") {
        world.agent
    } else if path.starts_with("/api/v1/workers/") {
        world.worker
    } else if path.starts_with("/api/v1/tasks/") {
        world.task
    } else if path.starts_with("/api/v1/workflows/") || path.starts_with("/api/v1/operations/") {
        world.workflow
    } else if path.starts_with("/api/v1/workspaces/") {
        world.workspace
    } else if path.starts_with("/api/v1/playbooks/") {
        world.playbook
    } else {
        Uuid::new_v4()
    };
    let second = if path.contains("{work_item_id}") {
        world.work_item
    } else {
        Uuid::new_v4()
    };
    (id.to_string(), second.to_string())
}

/// Whether a route streams (its 200 never ends).
pub fn streams(path: &str) -> bool {
    path.ends_with("/stream")
}

/// The walk's rule for one answer: no 5xx, and an error has the envelope
/// (or, where the contract names one, its plain error object: a `GET
/// /logs/:id` miss, a task that is not streaming).
fn fault(what: &str, status: StatusCode, body: &Value) -> Option<String> {
    if status.is_server_error() {
        return Some(format!("{what}: {status} {body}"));
    }
    let envelope = body["error"]["code"].is_string()
        && body["error"]["message"].is_string()
        && body["meta"]["request_id"].is_string();
    let contract_plain =
        body["error"].is_string() && (what.contains("/api/v1/logs/") || what.contains("/stream"));
    (status.is_client_error() && !envelope && !contract_plain)
        .then(|| format!("{what}: {status} without the envelope: {body}"))
}

fn nested(depth: usize) -> String {
    format!("{{\"a\": {}1{}}}", "[".repeat(depth), "]".repeat(depth))
}

#[tokio::test]
async fn hostile_input_on_every_route_never_answers_5xx() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let world = crate::fixtures::world(&admin).await;
    let huge = format!(r#"{{"name": "{0}", "title": "{0}"}}"#, "x".repeat(1 << 20));
    let bodies: Vec<String> = vec![
        "{\"name\": ".into(),
        "[\"title\", \"code\"]".into(),
        r#"{"name": 7, "title": false, "agent_id": {}, "type": [], "payload": "x", "scope": 1}"#
            .into(),
        r#"{"zz_unknown_field": 1}"#.into(),
        r#"{"name": "a\u0000b", "title": "\u0000", "reason": "\u0000"}"#.into(),
        huge,
        nested(10_000),
        "null".into(),
    ];
    let mut requests: Vec<(Method, String, Option<String>)> = Vec::new();
    for (method, path) in orchestrator_server::route_list() {
        let has_ids = path.contains('{');
        let writes = method != Method::GET && method != Method::DELETE;
        if has_ids {
            for bad in ["not-a-uuid", "00000000-0000-0000-0000-00000000000g"] {
                requests.push((method.clone(), fill(path, bad, bad), None));
            }
            let unknown = Uuid::new_v4().to_string();
            requests.push((
                method.clone(),
                fill(path, &unknown, &unknown),
                writes.then(|| "{}".into()),
            ));
        }
        let (id, second) = real_id(path, &world);
        let target = fill(path, &id, &second);
        if writes {
            for body in &bodies {
                requests.push((method.clone(), target.clone(), Some(body.clone())));
            }
        } else if method == Method::GET && !streams(path) {
            for query in [
                "page=0",
                "page=-1&per_page=abc",
                "per_page=100000",
                "cursor=%%%garbage",
                "after=-5&limit=abc",
                "q=%00",
            ] {
                requests.push((Method::GET, format!("{target}?{query}"), None));
            }
        }
    }
    let total = requests.len();
    let answers: Vec<_> = futures_util::stream::iter(requests)
        .map(|(method, path, body)| {
            let server = &server;
            async move {
                let started = std::time::Instant::now();
                let what = format!(
                    "{method} {path} {}",
                    body.as_deref().map_or("", |b| &b[..b.len().min(60)])
                );
                let (status, answer) = send(server, method, &path, &server.admin_key, body).await;
                let slow = started.elapsed() > std::time::Duration::from_millis(500);
                (what, status, answer, slow)
            }
        })
        .buffer_unordered(8)
        .collect()
        .await;
    assert_eq!(answers.len(), total);
    let faults: Vec<String> = answers
        .iter()
        .filter_map(|(what, status, body, _)| fault(what, *status, body))
        .collect();
    assert!(
        faults.is_empty(),
        "{} faults:\n{}",
        faults.len(),
        faults.join("\n")
    );
    let slow: Vec<&String> = answers.iter().filter(|a| a.3).map(|a| &a.0).collect();
    eprintln!("{total} requests; slow: {slow:?}");
    let (status, _) = crate::raw::get(&server, "/readyz").await;
    assert_eq!(
        status,
        StatusCode::OK,
        "healthy after {total} hostile requests"
    );
    admin
        .tasks()
        .get(world.task)
        .await
        .expect("the server still answers");
}
