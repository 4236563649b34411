//! `orch worker run` keeps working across a server restart: the real
//! `orch serve` runs as a child on a fixed address, is stopped while the
//! worker is connected and started again on the same address and database;
//! the worker reconnects by itself (backoff) and runs the next task.

use orchestrator_client::Client;
use orchestrator_client::api::{CreateTask, TaskState};
use orchestrator_tests::TestServer;
use std::time::{Duration, Instant};
use tokio::process::{Child, Command};
use uuid::Uuid;

mod common;

const SCRIPT: &str = "#!/bin/sh\ncat >/dev/null\necho '{\"ran\": true}'\n";

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `orch serve` on `port` over `database_url`, once it answers.
async fn serve(port: u16, database_url: &str, admin_key: &str) -> Child {
    let child = Command::new(common::ORCH)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--database-url", database_url])
        .args(["--rate-limit-per-minute", "0"])
        .env("ORCH_BOOTSTRAP_ADMIN_KEY", admin_key)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("orch serve starts");
    let client = Client::new(format!("http://127.0.0.1:{port}")).unwrap();
    let started = Instant::now();
    while client.health().ready().await.is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "orch serve did not become ready"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    child
}

/// Creates a task the worker's tag routes to it and waits (30 s at most,
/// more than the worker's longest backoff) until it is done.
async fn run_one(admin: &Client, title: &str) -> TaskState {
    let task = admin
        .tasks()
        .create(&CreateTask {
            title: title.into(),
            task_type: "code".into(),
            role: Some("sh".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    wait_done(admin, task.id).await
}

async fn wait_done(admin: &Client, id: Uuid) -> TaskState {
    let started = Instant::now();
    loop {
        let task = admin.tasks().get(id).await.unwrap();
        if task.state.is_done() {
            return task.state;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the task stayed {:?}",
            task.state
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn the_worker_reconnects_after_the_server_restarts() {
    // The harness creates (and later drops) the database; children serve it.
    let mut harness = TestServer::start().await;
    let database_url = harness.database_url();
    let admin_key = harness.admin_key.clone();
    harness.stop().await;

    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let mut server = serve(port, &database_url, &admin_key).await;
    let admin = Client::new(&url).unwrap().with_api_key(&admin_key);

    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("task.sh");
    std::fs::write(&script, SCRIPT).unwrap();
    let mut worker = Command::new(common::ORCH)
        .args([
            "worker", "run", "--name", "survivor", "--tag", "role:sh", "--",
        ])
        .arg("sh")
        .arg(&script)
        .env("ORCH_URL", &url)
        .env("ORCH_API_KEY", &admin_key)
        .env("ORCH_CONFIG", "/nonexistent/orch-config.json")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("orch worker run starts");

    assert_eq!(run_one(&admin, "before").await, TaskState::Completed);

    // Stop the server under the connected worker, then start it again on
    // the same address and database.
    server.kill().await.unwrap();
    server.wait().await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut server = serve(port, &database_url, &admin_key).await;

    assert_eq!(run_one(&admin, "after").await, TaskState::Completed);
    assert!(
        worker.try_wait().unwrap().is_none(),
        "the worker exited instead of reconnecting"
    );
    worker.kill().await.unwrap();
    server.kill().await.unwrap();
}
