//! `orch webhooks ...` and the bulk forms of `orch tasks cancel|retry` and
//! `orch workflows cancel|pause|resume` against a real server.

use orchestrator_client::api::{CreateTask, PageRequest, TaskFilter, TaskState};
use orchestrator_tests::TestServer;
use std::process::Output;

mod common;

use common::{json, orch_with};

async fn orch(server: &TestServer, args: &[&str]) -> Output {
    let env = [
        ("ORCH_URL", server.url.as_str()),
        ("ORCH_API_KEY", server.admin_key.as_str()),
    ];
    orch_with(args, &env).await
}

#[tokio::test]
async fn webhooks_through_the_binary_show_the_secret_once() {
    let server = TestServer::start().await;
    let created = json(
        &orch(
            &server,
            &[
                "webhooks",
                "create",
                "http://127.0.0.1:9/hook",
                "--event",
                "task.*",
                "-o",
                "json",
            ],
        )
        .await,
    );
    let secret = created["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("whsec_"));
    let id = created["id"].as_str().unwrap().to_owned();
    let listed = orch(&server, &["webhooks", "list"]).await;
    assert!(listed.status.success());
    assert!(String::from_utf8_lossy(&listed.stdout).contains(&id));
    let got = orch(&server, &["webhooks", "get", &id, "-o", "json"]).await;
    let text = String::from_utf8_lossy(&got.stdout).into_owned();
    assert!(!text.contains(&secret) && !text.contains("\"secret\""));
    let updated = json(
        &orch(
            &server,
            &["webhooks", "update", &id, "--disable", "-o", "json"],
        )
        .await,
    );
    assert_eq!(updated["enabled"], false);
    let rotated = json(&orch(&server, &["webhooks", "rotate-secret", &id, "-o", "json"]).await);
    assert_ne!(rotated["secret"], created["secret"]);
    let test = json(&orch(&server, &["webhooks", "test", &id, "-o", "json"]).await);
    assert_eq!(test[0]["status"], "failed");
    let log = json(&orch(&server, &["webhooks", "deliveries", &id, "-o", "json"]).await);
    assert_eq!(log.as_array().unwrap().len(), 1);
    let delivery = log[0]["id"].as_str().unwrap();
    let again = json(
        &orch(
            &server,
            &["webhooks", "redeliver", &id, delivery, "-o", "json"],
        )
        .await,
    );
    assert_eq!(again[0]["attempt"], 2);
    let refused = orch(&server, &["webhooks", "delete", &id]).await;
    assert!(!refused.status.success(), "delete asks without --yes");
    let deleted = json(&orch(&server, &["webhooks", "delete", &id, "--yes", "-o", "json"]).await);
    assert_eq!(deleted["deleted"], true);
}

#[tokio::test]
async fn tasks_cancel_by_filter_dry_runs_asks_and_applies() {
    let server = TestServer::start().await;
    let admin = server.admin();
    for i in 0..30 {
        admin
            .tasks()
            .create(&CreateTask {
                title: format!("cli {i}"),
                task_type: "test".into(),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    let pending = || async {
        admin
            .tasks()
            .list(
                &TaskFilter {
                    state: Some(TaskState::Pending),
                    ..Default::default()
                },
                PageRequest::new(1, 1),
            )
            .await
            .unwrap()
            .total
    };
    let dry = json(
        &orch(
            &server,
            &[
                "tasks",
                "cancel",
                "--filter",
                "state=pending,type=test",
                "--dry-run",
                "-o",
                "json",
            ],
        )
        .await,
    );
    assert_eq!(dry["counts"]["matched"], 30);
    assert_eq!(pending().await, 30);
    let refused = orch(&server, &["tasks", "cancel", "--filter", "type=test"]).await;
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("cancel 30 tasks"));
    assert_eq!(pending().await, 30);
    let done = json(
        &orch(
            &server,
            &[
                "tasks",
                "cancel",
                "--filter",
                "type=test",
                "--yes",
                "-o",
                "json",
            ],
        )
        .await,
    );
    assert_eq!(done["status"], "completed");
    assert_eq!(done["counts"]["succeeded"], 30);
    assert_eq!(pending().await, 0);
    let retried = json(
        &orch(
            &server,
            &[
                "tasks",
                "retry",
                "--filter",
                "state=cancelled",
                "--yes",
                "-o",
                "json",
            ],
        )
        .await,
    );
    assert_eq!(retried["counts"]["succeeded"], 30);
    assert_eq!(pending().await, 30);
    let bad = orch(
        &server,
        &["workflows", "pause", "--filter", "colour=red", "--yes"],
    )
    .await;
    assert!(!bad.status.success());
}
