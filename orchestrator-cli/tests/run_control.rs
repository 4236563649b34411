//! Run control on the command line (issue 30): `orch tasks create` with
//! delays, expiry, retries, a lease and a dedupe key; `orch tasks
//! reschedule`; `orch tasks heartbeat`; and `orch worker run` heartbeating,
//! forwarding `ORCH_PROGRESS` lines and stopping its command when
//! cancellation is requested.

use orchestrator_client::api::{ClaimTask, CreateTask, TaskState};
use orchestrator_tests::TestServer;
use serde_json::json;
use tokio::process::Command;

mod common;

use common::{eventually, json, orch_admin, orch_with};

#[tokio::test]
async fn create_reschedule_and_heartbeat_from_the_command_line() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "tasks",
        "create",
        "--title",
        "nightly",
        "--delay",
        "3600",
        "--ttl",
        "7200",
        "--retry-max",
        "3",
        "--retry-backoff",
        "5",
        "--heartbeat-timeout",
        "30",
        "--dedupe-key",
        "nightly-1",
        "-o",
        "json",
    ];
    let created = json(&orch_admin(&server, dir.path(), &args).await);
    assert_eq!(created["retry_policy"]["max_attempts"], 3);
    assert_eq!(created["retry_policy"]["initial_interval_seconds"], 5);
    assert_eq!(created["heartbeat_timeout_seconds"], 30);
    assert_eq!(created["dedupe_key"], "nightly-1");
    assert!(created["run_at"].is_string() && created["expires_at"].is_string());
    let again = json(&orch_admin(&server, dir.path(), &args).await);
    assert_eq!(
        again["id"], created["id"],
        "the dedupe key found the live task"
    );

    let id = created["id"].as_str().unwrap();
    // `tasks list --delayed`: only tasks whose run_at is still ahead.
    let delayed = ["tasks", "list", "--delayed", "-o", "json"];
    let listed = orch_admin(&server, dir.path(), &delayed).await;
    assert!(String::from_utf8_lossy(&listed.stdout).contains(id));
    let moved = json(
        &orch_admin(
            &server,
            dir.path(),
            &["tasks", "reschedule", id, "--delay", "0", "-o", "json"],
        )
        .await,
    );
    assert!(moved["run_at"].is_null(), "{moved}");
    let listed = orch_admin(&server, dir.path(), &delayed).await;
    assert!(listed.status.success());
    assert!(!String::from_utf8_lossy(&listed.stdout).contains(id));

    // The holder heartbeats with its own key.
    let agent = server
        .admin()
        .agents()
        .register(&orchestrator_client::api::RegisterAgent {
            name: "cli-holder".into(),
            issue_api_key: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    let key = agent.api_key.clone().unwrap();
    let holder = server.client(&key);
    let claimed = holder
        .tasks()
        .claim(&ClaimTask {
            agent_id: agent.id,
            ..Default::default()
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claimed.id.to_string(), id);
    let env = [
        ("ORCH_URL", server.url.as_str()),
        ("ORCH_API_KEY", key.as_str()),
    ];
    let beat = [
        "tasks",
        "heartbeat",
        id,
        "--attempt",
        "1",
        "--progress",
        r#"{"pct":5}"#,
        "-o",
        "json",
    ];
    let ack = json(&orch_with(&beat, &env).await);
    assert_eq!(ack["ack"], true);
    assert_eq!(ack["cancel_requested"], false);
    assert!(ack["lease_expires_at"].is_string());
    let stale = ["tasks", "heartbeat", id, "--attempt", "2"];
    let refused = orch_with(&stale, &env).await;
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("LEASE_LOST"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let task = server.admin().tasks().get(claimed.id).await.unwrap();
    assert_eq!(task.progress, Some(json!({ "pct": 5 })));
}

const SCRIPT: &str = r#"#!/bin/sh
trap 'echo "stopping on TERM" >&2; exit 7' TERM
echo 'ORCH_PROGRESS {"pct": 10}' >&2
while true; do sleep 0.2; done
"#;

#[tokio::test]
async fn worker_run_reports_progress_and_stops_its_command_when_cancelled() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("task.sh");
    std::fs::write(&script, SCRIPT).unwrap();
    let _worker = Command::new(common::ORCH)
        .args([
            "worker",
            "run",
            "--name",
            "lease-box",
            "--tag",
            "role:lease",
            "--",
        ])
        .arg("sh")
        .arg(&script)
        .env("ORCH_URL", &server.url)
        .env("ORCH_API_KEY", &server.admin_key)
        .env("ORCH_CONFIG", "/nonexistent/orch-config.json")
        .kill_on_drop(true)
        .spawn()
        .expect("orch worker run starts");
    let admin = server.admin();
    let task = admin
        .tasks()
        .create(&CreateTask {
            title: "leased".into(),
            task_type: "code".into(),
            role: Some("lease".into()),
            heartbeat_timeout_seconds: Some(6),
            ..Default::default()
        })
        .await
        .unwrap();
    eventually("the progress line reaches the task", async || {
        let task = admin.tasks().get(task.id).await.unwrap();
        task.progress == Some(json!({ "pct": 10 }))
    })
    .await;
    let cancel = orchestrator_client::api::TaskAction::default();
    let asked = admin
        .tasks()
        .act(task.id, orchestrator_client::TaskOperation::Cancel, &cancel)
        .await
        .unwrap();
    assert!(asked.cancel_requested);
    assert_eq!(asked.state, TaskState::InProgress);
    eventually(
        "the worker stops the command and the task ends cancelled",
        async || admin.tasks().get(task.id).await.unwrap().state == TaskState::Cancelled,
    )
    .await;
}
