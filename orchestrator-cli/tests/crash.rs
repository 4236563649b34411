//! Acknowledged writes survive `kill -9`: the real `orch serve` binary runs
//! as a child over the test database, takes concurrent writes, is killed
//! with SIGKILL at a random moment, and is restarted on the same database;
//! every write it acknowledged is there in its acknowledged state. Three
//! rounds, on SQLite and on PostgreSQL (README "Guarantees"). The same for
//! a scheduled retry and for webhook deliveries in flight.

use orchestrator_client::Client;
use orchestrator_client::api::{
    ClaimTask, CompleteTask, CreateTask, CreateWebhook, DeliveryFilter, DeliveryStatus,
    EventFilter, RegisterAgent, TaskState, Timestamp,
};
use orchestrator_tests::TestServer;
use orchestrator_tests::webhook_receiver::{Receiver, verifies};
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
    serve_with(database_url, admin_key, &[]).await
}

/// [`serve`] with more flags.
async fn serve_with(database_url: &str, admin_key: &str, flags: &[&str]) -> (Child, Client) {
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_orch"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--database-url", database_url])
        .args(["--rate-limit-per-minute", "0"])
        .args(flags)
        .env("ORCH_BOOTSTRAP_ADMIN_KEY", admin_key)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("orch serve starts");
    let client = Client::new(format!("http://127.0.0.1:{port}"))
        .unwrap()
        .with_api_key(admin_key);
    // Generous: a restart on a loaded machine replays the database first.
    for _ in 0..600 {
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

/// Creates tasks until the server stops answering; the ids it acknowledged.
async fn create_until_killed(client: Client, worker: usize, acked: Arc<Mutex<Vec<Uuid>>>) {
    for i in 0.. {
        let created = client
            .tasks()
            .create(&CreateTask {
                title: format!("hook-{worker}-{i}"),
                task_type: "code".into(),
                ..Default::default()
            })
            .await;
        match created {
            Ok(task) => acked.lock().unwrap().push(task.id),
            Err(_) => return,
        }
    }
}

/// Every `task.created` event of the server: id → task id.
async fn created_events(client: &Client) -> HashMap<i64, String> {
    let mut events = HashMap::new();
    let mut after = None;
    loop {
        let page = client
            .events()
            .list(&EventFilter {
                event_type: Some("task.created".into()),
                after,
                limit: Some(500),
                ..Default::default()
            })
            .await
            .unwrap();
        for event in &page.items {
            let task = event.data["task_id"].as_str().unwrap_or_default();
            events.insert(event.id, task.to_owned());
        }
        if !page.has_more {
            return events;
        }
        after = page.next_after.and_then(|a| a.parse().ok());
    }
}

/// Webhook deliveries (run control §7) survive `kill -9`: the server is
/// killed while it waits for the receiver's answers (deliveries in flight)
/// and with more due; after a restart on the same database every
/// `task.created` event arrives, each under one stable `webhook-id` (the
/// ones in flight again once their lease ran out: at least once on the
/// wire), none arrives for an event that does not exist, and the log shows
/// one delivered row per event.
#[tokio::test]
async fn webhook_deliveries_in_flight_survive_sigkill() {
    let mut server = TestServer::start().await;
    let database_url = server.database_url();
    let admin_key = server.admin_key.clone();
    server.stop().await;
    // The receiver is on loopback.
    let flags = ["--allow-private-network", "true"];
    let (mut child, client) = serve_with(&database_url, &admin_key, &flags).await;
    eprintln!("served");
    let receiver = Receiver::start(&[], 200).await;
    let hook = client
        .webhooks()
        .create(&CreateWebhook {
            url: receiver.url.clone(),
            event_types: vec!["task.created".into()],
            workspace_id: None,
            description: Some("crash receiver".into()),
            enabled: None,
        })
        .await
        .unwrap();
    let acked = Arc::new(Mutex::new(Vec::new()));
    let writers: Vec<_> = (0..4)
        .map(|w| tokio::spawn(create_until_killed(client.clone(), w, acked.clone())))
        .collect();
    // Some deliveries answered, then the receiver holds its answers: the
    // server's next posts wait for them when it is killed.
    eprintln!("webhook created; writing");
    receiver.wait_for(30).await;
    eprintln!("30 posts answered; holding");
    receiver.hold();
    let answered = receiver.calls().len();
    receiver.wait_for(answered + 1).await;
    let held_since = std::time::Instant::now();
    while acked.lock().unwrap().len() < 150 && held_since.elapsed() < Duration::from_secs(3) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    eprintln!(
        "killing with {} posts held",
        receiver.calls().len() - answered
    );
    child.start_kill().expect("SIGKILL");
    child.wait().await.unwrap();
    for writer in writers {
        writer.await.unwrap();
    }
    eprintln!("killed; restarting");
    let in_flight: Vec<String> = receiver.calls()[answered..]
        .iter()
        .map(|c| c.id.clone())
        .collect();
    receiver.release();

    let (_child, client) = serve_with(&database_url, &admin_key, &flags).await;
    let events = created_events(&client).await;
    eprintln!("restarted: {} events", events.len());
    let acked = acked.lock().unwrap().clone();
    let tasks: std::collections::HashSet<&String> = events.values().collect();
    for id in &acked {
        assert!(
            tasks.contains(&id.to_string()),
            "acknowledged task {id} has its event"
        );
    }
    // The held deliveries' lease (60 s) must run out before they are sent
    // again: wait generously (.config/nextest.toml gives this test longer).
    let deadline = std::time::Instant::now() + Duration::from_secs(150);
    let hook_id = hook.webhook.id;
    let delivered = |status| {
        let client = client.clone();
        async move {
            client
                .webhooks()
                .deliveries(
                    hook_id,
                    &DeliveryFilter {
                        status: Some(status),
                        per_page: Some(1),
                        ..Default::default()
                    },
                )
                .await
                .unwrap()
                .total
        }
    };
    while delivered(DeliveryStatus::Delivered).await < events.len() as u64 {
        assert!(
            std::time::Instant::now() < deadline,
            "{} of {} delivered",
            delivered(DeliveryStatus::Delivered).await,
            events.len()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(delivered(DeliveryStatus::Pending).await, 0);
    assert_eq!(delivered(DeliveryStatus::Failed).await, 0);

    // What the receiver saw: every event, each under one webhook-id, none
    // for an event that does not exist, every signature valid.
    let mut ids_by_event: HashMap<i64, Vec<String>> = HashMap::new();
    for call in receiver.calls() {
        assert!(verifies(&call, &hook.secret), "signature of {}", call.id);
        let body = call.json();
        assert_eq!(body["type"], "task.created");
        let event = body["id"].as_i64().expect("the event id");
        assert!(
            events.contains_key(&event),
            "a delivery of unknown event {event}"
        );
        ids_by_event.entry(event).or_default().push(call.id.clone());
    }
    for event in events.keys() {
        let ids = ids_by_event
            .get(event)
            .unwrap_or_else(|| panic!("event {event} was never delivered"));
        assert!(ids.iter().all(|id| id == &ids[0]), "{event}: {ids:?}");
    }
    // The deliveries in flight at the kill were sent again, under their id.
    assert!(!in_flight.is_empty());
    for id in &in_flight {
        let sent = receiver.calls().iter().filter(|c| &c.id == id).count();
        assert!(sent >= 2, "in-flight delivery {id} sent {sent} time(s)");
    }
    eprintln!(
        "{} events ({} acknowledged), {} posts, {} in flight at the kill",
        events.len(),
        acked.len(),
        receiver.calls().len(),
        in_flight.len()
    );
}
