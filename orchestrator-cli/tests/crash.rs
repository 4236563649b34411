//! Acknowledged writes survive `kill -9`: the real `orch serve` binary runs
//! as a child over the test database, takes concurrent writes, is killed
//! with SIGKILL at a random moment, and is restarted on the same database;
//! every write it acknowledged is there in its acknowledged state. Three
//! rounds, on SQLite and on PostgreSQL (README "Guarantees").

use orchestrator_client::Client;
use orchestrator_client::api::{
    ClaimTask, CompleteTask, CreateTask, RegisterAgent, TaskState, Timestamp,
};
use orchestrator_tests::TestServer;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::process::{Child, Command};
use uuid::Uuid;

/// What the server acknowledged: created tasks by title, and completed ones.
#[derive(Default)]
struct Acknowledged {
    created: HashMap<Uuid, String>,
    completed: Vec<Uuid>,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `orch serve` on `database_url` and waits until it is ready.
async fn serve(database_url: &str, admin_key: &str) -> (Child, Client) {
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_orch"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--database-url", database_url])
        .args(["--rate-limit-per-minute", "0"])
        .env("ORCH_BOOTSTRAP_ADMIN_KEY", admin_key)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("orch serve starts");
    let client = Client::new(format!("http://127.0.0.1:{port}"))
        .unwrap()
        .with_api_key(admin_key);
    for _ in 0..200 {
        if client.health().ready().await.is_ok() {
            return (child, client);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("orch serve did not become ready");
}

/// Creates tasks, claiming and completing every other one, until the server
/// stops answering; records only what was acknowledged.
async fn write_until_killed(
    client: Client,
    agent: Uuid,
    worker: usize,
    acked: Arc<Mutex<Acknowledged>>,
) {
    for i in 0.. {
        let title = format!("w{worker}-{i}-{}", Uuid::new_v4().simple());
        let Ok(task) = client
            .tasks()
            .create(&CreateTask {
                title: title.clone(),
                task_type: "code".into(),
                ..Default::default()
            })
            .await
        else {
            return;
        };
        acked.lock().unwrap().created.insert(task.id, title);
        if i % 2 == 1 || worker != 0 {
            continue;
        }
        let Ok(Some(claimed)) = client
            .tasks()
            .claim(&ClaimTask {
                agent_id: agent,
                ..Default::default()
            })
            .await
        else {
            return;
        };
        let done = client
            .tasks()
            .complete(
                claimed.id,
                &CompleteTask {
                    agent_id: Some(agent),
                    ..Default::default()
                },
            )
            .await;
        match done {
            Ok(_) => acked.lock().unwrap().completed.push(claimed.id),
            Err(_) => return,
        }
    }
}

#[tokio::test]
async fn acknowledged_writes_survive_sigkill() {
    // The harness creates (and later drops) the database; the child serves it.
    let mut server = TestServer::start().await;
    let database_url = server.database_url();
    let admin_key = server.admin_key.clone();
    server.stop().await;
    let acked = Arc::new(Mutex::new(Acknowledged::default()));
    let mut agent = None;
    for round in 0..3u64 {
        let (mut child, client) = serve(&database_url, &admin_key).await;
        let agent_id = match agent {
            Some(id) => id,
            None => {
                let id = client
                    .agents()
                    .register(&RegisterAgent {
                        name: "crash-agent".into(),
                        ..Default::default()
                    })
                    .await
                    .unwrap()
                    .id;
                agent = Some(id);
                id
            }
        };
        let writers: Vec<_> = (0..6)
            .map(|w| {
                tokio::spawn(write_until_killed(
                    client.clone(),
                    agent_id,
                    w,
                    acked.clone(),
                ))
            })
            .collect();
        // A moment that varies from run to run and round to round.
        let jitter = u64::from(Uuid::new_v4().as_bytes()[0]) * 4;
        tokio::time::sleep(Duration::from_millis(400 + jitter + round * 100)).await;
        child.start_kill().expect("SIGKILL");
        child.wait().await.unwrap();
        for writer in writers {
            writer.await.unwrap();
        }
        // Restart on the same database and check every acknowledged write.
        let (mut child, client) = serve(&database_url, &admin_key).await;
        let (created, completed) = {
            let acked = acked.lock().unwrap();
            (acked.created.clone(), acked.completed.clone())
        };
        assert!(!created.is_empty(), "round {round} acknowledged writes");
        for (id, title) in &created {
            let task = client
                .tasks()
                .get(*id)
                .await
                .unwrap_or_else(|e| panic!("round {round}: acknowledged task {id} lost: {e}"));
            assert_eq!(&task.title, title);
        }
        for id in &completed {
            let task = client.tasks().get(*id).await.unwrap();
            assert_eq!(task.state, TaskState::Completed, "round {round}: {id}");
        }
        // The next round starts its own server on the same database.
        child.start_kill().unwrap();
        child.wait().await.unwrap();
        eprintln!(
            "round {round}: {} created, {} completed acknowledged and found",
            created.len(),
            completed.len()
        );
    }
}

/// Run control §2: a retry scheduled before a `kill -9` is kept. The task
/// failed with a backoff, the server was killed before its `run_at`, and
/// after the restart it is not claimable before `run_at` and is claimed at
/// it.
#[tokio::test]
async fn a_scheduled_retry_survives_sigkill() {
    let mut server = TestServer::start().await;
    let database_url = server.database_url();
    let admin_key = server.admin_key.clone();
    server.stop().await;
    let (mut child, client) = serve(&database_url, &admin_key).await;
    let agent_id = client
        .agents()
        .register(&RegisterAgent {
            name: "retry-agent".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .id;
    let task = client
        .tasks()
        .create(&CreateTask {
            title: "flaky".into(),
            task_type: "code".into(),
            retry_policy: Some(orchestrator_client::api::RetryPolicy {
                max_attempts: 3,
                initial_interval_seconds: Some(3),
                jitter: Some(0.0),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap();
    let claim = ClaimTask {
        agent_id,
        ..Default::default()
    };
    client.tasks().claim(&claim).await.unwrap().unwrap();
    let failed = client
        .tasks()
        .fail(
            task.id,
            &orchestrator_client::api::FailTask {
                agent_id: Some(agent_id),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let run_at = failed.run_at.expect("a retry with a delay").as_datetime();
    child.start_kill().unwrap();
    child.wait().await.unwrap();

    let (_child, client) = serve(&database_url, &admin_key).await;
    loop {
        // Milliseconds from run_at to the claim's start.
        let late = (Timestamp::now().as_datetime() - run_at).num_milliseconds();
        match client.tasks().claim(&claim).await.unwrap() {
            Some(claimed) => {
                assert_eq!(claimed.id, task.id);
                assert_eq!(claimed.attempt, 2);
                assert!(late >= -300, "claimed {late} ms before run_at");
                assert!(late <= 2_000, "claimable {late} ms after run_at");
                break;
            }
            None => {
                assert!(late <= 2_000, "not claimable {late} ms after run_at");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}
