//! Run control on the command line (issue 30): `orch tasks create` with
//! delays, expiry, retries, a lease and a dedupe key; `orch tasks
//! reschedule` (one task or a `--filter`); `orch tasks heartbeat`; and `orch worker run` heartbeating,
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

/// `orch tasks reschedule --filter`: a dry run counts, without `--yes` it
/// asks (and refuses without a terminal), with `--yes` it moves every
/// pending task the filter matches and skips the rest.
#[tokio::test]
async fn reschedule_by_filter_dry_runs_asks_and_applies() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let admin = server.admin();
    let mut ids = Vec::new();
    for i in 0..12 {
        let task = admin
            .tasks()
            .create(&CreateTask {
                title: format!("batch {i}"),
                task_type: "custom".into(),
                ..Default::default()
            })
            .await
            .unwrap();
        ids.push(task.id);
    }
    admin
        .tasks()
        .act(
            ids[0],
            orchestrator_client::TaskOperation::Cancel,
            &Default::default(),
        )
        .await
        .unwrap();
    let run_at = "2031-03-04T05:06:07Z";
    let base = [
        "tasks",
        "reschedule",
        "--filter",
        "type=custom",
        "--run-at",
        run_at,
    ];
    let with = |extra: &[&'static str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        args
    };
    let dry = json(&orch_admin(&server, dir.path(), &with(&["--dry-run", "-o", "json"])).await);
    assert_eq!(dry["counts"]["matched"], 12);
    assert_eq!(dry["dry_run"], true);
    let refused = orch_admin(&server, dir.path(), &with(&[])).await;
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("reschedule 12 tasks"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(admin.tasks().get(ids[1]).await.unwrap().run_at.is_none());
    let done = json(&orch_admin(&server, dir.path(), &with(&["--yes", "-o", "json"])).await);
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["counts"]["succeeded"], 11);
    assert_eq!(done["counts"]["skipped"], 1);
    assert_eq!(done["run_at"], "2031-03-04T05:06:07.000Z");
    for id in &ids[1..] {
        let task = admin.tasks().get(*id).await.unwrap();
        assert_eq!(
            task.run_at.map(|t| t.as_datetime().to_rfc3339()),
            Some("2031-03-04T05:06:07+00:00".to_owned())
        );
    }
    // Neither an id nor a filter; a filter without a time.
    let missing = orch_admin(
        &server,
        dir.path(),
        &["tasks", "reschedule", "--run-at", run_at],
    )
    .await;
    assert!(!missing.status.success());
    let no_time = orch_admin(
        &server,
        dir.path(),
        &["tasks", "reschedule", "--filter", "type=custom", "--yes"],
    )
    .await;
    assert!(!no_time.status.success());
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
