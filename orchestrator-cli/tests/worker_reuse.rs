//! Workers that restart or leave: a second `orch worker run --name NAME`
//! takes over the offline worker of that name (same worker and agents,
//! fresh keys, the old ones revoked, what the old run held released), two
//! registrations racing for one offline worker take it over once, and
//! `orch workers delete ID` deregisters an offline worker and revokes every
//! key it and its agents had (refused while it is online).

use orchestrator_client::Client;
use orchestrator_client::api::{
    CreateTask, PageRequest, RegisterWorker, Task, TaskState, WorkerAgentSpec,
};
use orchestrator_tests::TestServer;
use std::path::Path;
use tokio::process::{Child, Command};
use uuid::Uuid;

mod common;

use common::eventually;

/// Sleeps on a `slow` task (so a run can be killed while it holds one),
/// answers at once otherwise.
const SCRIPT: &str = r#"#!/bin/sh
input=$(cat)
case "$input" in
  *'"title":"slow'*) sleep 8 ;;
esac
echo '{"done": true}'
"#;

/// `orch worker run --name NAME --tag role:sh --concurrency N -- sh task.sh`.
fn spawn_worker(server: &TestServer, dir: &Path, name: &str, concurrency: u32) -> Child {
    let script = dir.join("task.sh");
    std::fs::write(&script, SCRIPT).unwrap();
    Command::new(common::ORCH)
        .args(["worker", "run", "--name", name, "--tag", "role:sh"])
        .args(["--concurrency", &concurrency.to_string(), "--", "sh"])
        .arg(&script)
        .env("ORCH_URL", &server.url)
        .env("ORCH_API_KEY", &server.admin_key)
        .env("ORCH_CONFIG", "/nonexistent/orch-config.json")
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("orch worker run starts")
}

/// The workers named `name`, with their status.
async fn named(admin: &Client, name: &str) -> Vec<(Uuid, String, Vec<Uuid>)> {
    let page = admin
        .workers()
        .list(PageRequest::new(1, 100))
        .await
        .unwrap();
    page.items
        .into_iter()
        .filter(|w| w.name == name)
        .map(|w| (w.worker_id, w.status, w.agents))
        .collect()
}

/// Waits until the one worker named `name` has `status`; answers it.
async fn one_with_status(admin: &Client, name: &str, status: &str) -> (Uuid, Vec<Uuid>) {
    eventually(&format!("worker {name} is {status}"), async || {
        named(admin, name).await.iter().any(|(_, s, _)| s == status)
    })
    .await;
    let workers = named(admin, name).await;
    assert_eq!(workers.len(), 1, "one worker named {name}: {workers:?}");
    (workers[0].0, workers[0].2.clone())
}

/// (live, revoked) keys owned by the worker or one of its agents.
async fn keys_of(admin: &Client, worker: Uuid, agents: &[Uuid]) -> (usize, usize) {
    let keys = admin
        .api_keys()
        .list(PageRequest::new(1, 100))
        .await
        .unwrap()
        .items;
    let owned: Vec<_> = keys
        .iter()
        .filter(|k| {
            k.owner_id
                .is_some_and(|o| o == worker || agents.contains(&o))
        })
        .collect();
    let live = owned.iter().filter(|k| k.revoked_at.is_none()).count();
    (live, owned.len() - live)
}

fn task(title: &str) -> CreateTask {
    CreateTask {
        title: title.into(),
        task_type: "code".into(),
        role: Some("sh".into()),
        max_retries: Some(2),
        ..Default::default()
    }
}

/// Waits (up to 90 s: a slow task sleeps 8 s on a loaded machine) until
/// the task is `done`.
async fn wait_for(admin: &Client, id: Uuid, done: impl Fn(&Task) -> bool) -> Task {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    loop {
        let task = admin.tasks().get(id).await.unwrap();
        if done(&task) {
            return task;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for task {id}: {task:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_restarted_worker_takes_over_its_offline_registration() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let dir = tempfile::tempdir().unwrap();

    let mut first = spawn_worker(&server, dir.path(), "laptop", 2);
    let (worker, agents) = one_with_status(&admin, "laptop", "online").await;
    assert_eq!(agents.len(), 2);
    assert_eq!(keys_of(&admin, worker, &agents).await, (3, 0));
    // The first run holds a task when it dies.
    let held = admin.tasks().create(&task("slow one")).await.unwrap();
    let held = wait_for(&admin, held.id, |t| t.state == TaskState::InProgress).await;
    first.kill().await.unwrap();
    one_with_status(&admin, "laptop", "offline").await;

    let mut second = spawn_worker(&server, dir.path(), "laptop", 2);
    let (again, agents_again) = one_with_status(&admin, "laptop", "online").await;
    assert_eq!(again, worker, "the same worker, not a second one");
    assert_eq!(agents_again, agents, "the same agents");
    // Fresh keys for the new run, none of the old ones left live.
    assert_eq!(keys_of(&admin, worker, &agents).await, (3, 3));
    // What the dead run held is released at once (not after its timeout)
    // and the new run finishes it.
    let done = wait_for(&admin, held.id, |t| t.state == TaskState::Completed).await;
    assert_eq!(done.retry_count, held.retry_count + 1);
    let quick = admin.tasks().create(&task("quick")).await.unwrap();
    wait_for(&admin, quick.id, |t| t.state == TaskState::Completed).await;
    second.kill().await.unwrap();
}

#[tokio::test]
async fn two_registrations_take_over_one_offline_worker_once() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let register = |take_over: bool| RegisterWorker {
        name: "racer".into(),
        agents: Some(vec![WorkerAgentSpec {
            name: "racer-1".into(),
            routing_tags: None,
            execution_mode: None,
        }]),
        take_over_offline: Some(take_over),
        ..Default::default()
    };
    let first = admin.workers().register(&register(true)).await.unwrap();
    assert!(!first.taken_over, "nothing offline to take over yet");
    // The worker channel opened and closed: the worker is offline.
    let worker = server.client(&first.worker_api_key);
    let channel = worker.workers().connect(false).await.unwrap();
    channel.close().await.unwrap();
    one_with_status(&admin, "racer", "offline").await;

    let (one, two) = (register(true), register(true));
    let (workers_a, workers_b) = (admin.workers(), admin.workers());
    let (a, b) = tokio::join!(workers_a.register(&one), workers_b.register(&two));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(
        [a.taken_over, b.taken_over].iter().filter(|t| **t).count(),
        1,
        "exactly one takes it over: {a:?} {b:?}"
    );
    let winner = if a.taken_over { &a } else { &b };
    assert_eq!(winner.worker_id, first.worker_id);
    assert_ne!(a.worker_id, b.worker_id);
    // The old worker key no longer opens anything.
    let refused = worker.workers().connect(false).await;
    assert!(
        matches!(refused.as_ref().err().and_then(|e| e.status()), Some(401)),
        "the taken-over worker's old key is revoked"
    );
}

#[tokio::test]
async fn workers_delete_deregisters_an_offline_worker_and_revokes_its_keys() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let dir = tempfile::tempdir().unwrap();
    let mut run = spawn_worker(&server, dir.path(), "leaving", 1);
    let (worker, agents) = one_with_status(&admin, "leaving", "online").await;
    let id = worker.to_string();
    // A task run through it: its channel is open (so killing the run
    // closes it, and the worker goes offline at once).
    let quick = admin.tasks().create(&task("quick")).await.unwrap();
    wait_for(&admin, quick.id, |t| t.state == TaskState::Completed).await;

    let online =
        common::orch_admin(&server, dir.path(), &["workers", "delete", &id, "--yes"]).await;
    assert_eq!(online.status.code(), Some(5), "refused while online (409)");
    let said = String::from_utf8_lossy(&online.stderr);
    assert!(said.contains("the worker is online"), "{said}");
    assert_eq!(keys_of(&admin, worker, &agents).await, (2, 0));

    run.kill().await.unwrap();
    one_with_status(&admin, "leaving", "offline").await;
    let deleted = common::json(
        &common::orch_admin(
            &server,
            dir.path(),
            &["workers", "delete", &id, "--yes", "-o", "json"],
        )
        .await,
    );
    assert_eq!(deleted["deleted"], true);
    assert_eq!(deleted["keys_revoked"], 2);
    assert_eq!(keys_of(&admin, worker, &agents).await, (0, 2));
    assert!(named(&admin, "leaving").await.is_empty());
    let gone = common::orch_admin(&server, dir.path(), &["workers", "get", &id]).await;
    assert_eq!(gone.status.code(), Some(4));
    let agent = admin.agents().get(agents[0]).await.unwrap();
    assert_eq!(agent.status, "inactive");
    assert_eq!(agent.worker_id, None);
    let again = common::orch_admin(&server, dir.path(), &["workers", "delete", &id, "--yes"]).await;
    assert_eq!(
        again.status.code(),
        Some(4),
        "a second delete finds nothing"
    );
}
