//! The batched worker protocol from the CLI: `orch worker run --batch
//! --concurrency 4` runs four commands at once (their run times overlap and
//! the whole takes about one command's time), and `orch workers
//! claim-batch` / `orch tasks complete-batch` against a real server, and
//! `orch tasks create-batch` from a file.

use orchestrator_client::Client;
use orchestrator_client::api::{
    CreateTask, RegisterWorker, RegisteredWorker, TaskState, WorkerAgentSpec,
};
use orchestrator_tests::TestServer;
use serde_json::Value;
use std::time::{Duration, Instant};
use tokio::process::Command;
use uuid::Uuid;

mod common;

use common::{eventually, json, orch_with};

/// Each task sleeps 2 s and reports when it ran (seconds since the epoch).
const SCRIPT: &str = r#"#!/bin/sh
cat > /dev/null
start=$(date +%s.%N)
sleep 2
end=$(date +%s.%N)
echo "{\"start\": $start, \"end\": $end}"
"#;

async fn create(admin: &Client, title: &str) -> Uuid {
    admin
        .tasks()
        .create(&CreateTask {
            title: title.into(),
            task_type: "code".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .id
}

#[tokio::test]
async fn worker_run_batch_runs_four_commands_at_once() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("task.sh");
    std::fs::write(&script, SCRIPT).unwrap();
    let mut ids = Vec::new();
    for i in 0..4 {
        ids.push(create(&admin, &format!("sleep-{i}")).await);
    }
    let started = Instant::now();
    let _worker = Command::new(common::ORCH)
        .args([
            "worker",
            "run",
            "--name",
            "quad",
            "--concurrency",
            "4",
            "--batch",
        ])
        .arg("--")
        .arg("sh")
        .arg(&script)
        .env("ORCH_URL", &server.url)
        .env("ORCH_API_KEY", &server.admin_key)
        .env("ORCH_CONFIG", "/nonexistent/orch-config.json")
        .kill_on_drop(true)
        .spawn()
        .expect("orch worker run starts");
    eventually("the four tasks complete", async || {
        let mut done = 0;
        for id in &ids {
            if admin.tasks().get(*id).await.unwrap().state == TaskState::Completed {
                done += 1;
            }
        }
        done == ids.len()
    })
    .await;
    let elapsed = started.elapsed();
    let mut spans = Vec::new();
    let mut agents = std::collections::HashSet::new();
    for id in &ids {
        let task = admin.tasks().get(*id).await.unwrap();
        let output = task.output.expect("the command's output");
        let at = |k: &str| {
            output[k]
                .as_f64()
                .unwrap_or_else(|| panic!("{k} in {output}"))
        };
        spans.push((at("start"), at("end")));
        agents.insert(task.assigned_agent_id.expect("an agent"));
    }
    assert_eq!(agents.len(), 4, "one agent each");
    // All four ran at the same moment: the latest start is before the
    // earliest end.
    let latest_start = spans.iter().map(|s| s.0).fold(f64::MIN, f64::max);
    let earliest_end = spans.iter().map(|s| s.1).fold(f64::MAX, f64::min);
    assert!(
        latest_start < earliest_end,
        "the commands did not overlap: {spans:?}"
    );
    assert!(
        elapsed < Duration::from_secs(7),
        "four 2-second commands one after another would take 8 s: {elapsed:?}"
    );
}

async fn worker(admin: &Client, name: &str, agents: usize) -> RegisteredWorker {
    admin
        .workers()
        .register(&RegisterWorker {
            name: name.into(),
            connection_mode: Some("polling".into()),
            agents: Some(
                (0..agents)
                    .map(|i| WorkerAgentSpec {
                        name: format!("{name}-{i}"),
                        routing_tags: None,
                        execution_mode: None,
                    })
                    .collect(),
            ),
            ..Default::default()
        })
        .await
        .unwrap()
}

#[tokio::test]
async fn workers_claim_batch_and_tasks_complete_batch() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let registered = worker(&admin, "cli-batch", 3).await;
    let first = create(&admin, "one").await;
    let second = create(&admin, "two").await;
    let env = [
        ("ORCH_URL", server.url.as_str()),
        ("ORCH_API_KEY", registered.worker_api_key.as_str()),
    ];
    let worker_id = registered.worker_id.to_string();
    let claimed = json(
        &orch_with(
            &[
                "workers",
                "claim-batch",
                &worker_id,
                "--limit",
                "3",
                "--start",
                "-o",
                "json",
            ],
            &env,
        )
        .await,
    );
    let claimed = claimed.as_array().expect("a list");
    assert_eq!(claimed.len(), 2, "{claimed:?}");
    for c in claimed {
        assert_eq!(c["task"]["state"], "in_progress");
    }
    let ids: Vec<String> = claimed
        .iter()
        .map(|c| c["task"]["id"].as_str().unwrap().to_owned())
        .collect();
    assert!(ids.contains(&first.to_string()) && ids.contains(&second.to_string()));

    // Completed by id with one result; an unknown task is refused alone.
    let unknown = Uuid::new_v4().to_string();
    let items = format!(
        r#"[{{"task_id":"{}","output":{{"n":1}}}},{{"task_id":"{unknown}"}}]"#,
        ids[0]
    );
    let answers = json(
        &orch_with(
            &["tasks", "complete-batch", "--items", &items, "-o", "json"],
            &env,
        )
        .await,
    );
    assert_eq!(answers[0]["state"], "completed", "{answers}");
    assert_eq!(answers[1]["error"]["code"], "NOT_FOUND", "{answers}");
    let answers = json(
        &orch_with(
            &[
                "tasks",
                "complete-batch",
                &ids[1],
                "--result",
                r#"{"ok":true}"#,
                "-o",
                "json",
            ],
            &env,
        )
        .await,
    );
    assert_eq!(answers[0]["state"], "completed", "{answers}");
    let task = admin.tasks().get(ids[1].parse().unwrap()).await.unwrap();
    assert_eq!(task.output, Some(serde_json::json!({ "ok": true })));
    // Nothing left: an empty list.
    let none = json(
        &orch_with(
            &[
                "workers",
                "claim-batch",
                &worker_id,
                "--limit",
                "3",
                "-o",
                "json",
            ],
            &env,
        )
        .await,
    );
    assert_eq!(none, Value::Array(Vec::new()));
}

#[tokio::test]
async fn tasks_create_batch_creates_each_item_of_a_file_on_its_own() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.json");
    std::fs::write(
        &path,
        r#"[{"title":"first","type":"code","input":{"n":1}},
            {"title":"refused","type":"bogus"},
            {"title":"second","type":"analysis","priority":"high"}]"#,
    )
    .unwrap();
    let env = [
        ("ORCH_URL", server.url.as_str()),
        ("ORCH_API_KEY", server.admin_key.as_str()),
    ];
    let answers = json(
        &orch_with(
            &[
                "tasks",
                "create-batch",
                path.to_str().unwrap(),
                "-o",
                "json",
            ],
            &env,
        )
        .await,
    );
    let answers = answers.as_array().expect("a list");
    assert_eq!(answers.len(), 3, "{answers:?}");
    assert_eq!(answers[0]["task"]["title"], "first");
    assert_eq!(answers[0]["task"]["state"], "pending");
    assert_eq!(answers[1]["error"]["code"], "SCHEMA_VALIDATION_FAILED");
    assert!(answers[1].get("task").is_none());
    assert_eq!(answers[2]["task"]["priority"], "high");
    for i in [0, 2] {
        let id: Uuid = answers[i]["task"]["id"].as_str().unwrap().parse().unwrap();
        assert_eq!(
            admin.tasks().get(id).await.unwrap().state,
            TaskState::Pending
        );
    }
    // Not a list of task bodies: a usage error before any request.
    std::fs::write(&path, r#"{"title":"x"}"#).unwrap();
    let out = orch_with(&["tasks", "create-batch", path.to_str().unwrap()], &env).await;
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a JSON array"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
