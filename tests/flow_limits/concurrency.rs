//! Concurrency keys: never more than the limit held, under 16 concurrent
//! claimers and across two replicas; a cancel frees exactly one slot.

use super::{agents, claim, create_many, finish, limit_waiting_events};
use orchestrator_client::api::TaskAction;
use orchestrator_client::{Client, TaskOperation};
use orchestrator_server::ServerConfig;
use orchestrator_tests::{TestServer, backend};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;
use tokio::sync::Mutex;
use uuid::Uuid;

/// 16 claimers (over `clients`, round robin) claim, hold a moment and
/// complete until the 100 tasks of key `repo` (limit 2) are done. The
/// claims seen at once never exceed 2, nor does the key's `held`, and every
/// task is claimed once.
async fn sixteen_claimers(clients: Vec<Client>, admin: &Client) {
    admin.limits().set_concurrency("repo", 2).await.unwrap();
    let ids = create_many(admin, 100, Some("repo"), None).await;
    let agent_ids = agents(admin, "claimer", 16).await;
    let held_now = Arc::new(AtomicI64::new(0));
    let most = Arc::new(AtomicI64::new(0));
    let claimed = Arc::new(Mutex::new(Vec::<Uuid>::new()));
    let mut handles = Vec::new();
    for (i, agent) in agent_ids.into_iter().enumerate() {
        let client = clients[i % clients.len()].clone();
        let (held_now, most, claimed) = (held_now.clone(), most.clone(), claimed.clone());
        handles.push(tokio::spawn(async move {
            // Until every task is claimed (or nothing comes for 20 s).
            let mut idle = 0;
            while claimed.lock().await.len() < 100 && idle < 200 {
                let Some(task) = claim(&client, agent).await else {
                    idle += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                };
                idle = 0;
                let now = held_now.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                claimed.lock().await.push(task.id);
                let seen = client.limits().get_concurrency("repo").await.unwrap();
                assert!(seen.held <= 2, "held {} over the limit", seen.held);
                tokio::time::sleep(Duration::from_millis(10)).await;
                // Counted down before the completion frees the slot, so the
                // count never runs ahead of the server.
                held_now.fetch_sub(1, Ordering::SeqCst);
                finish(&client, agent, task.id).await;
            }
        }));
    }
    for handle in handles {
        handle.await.unwrap();
    }
    let claimed = claimed.lock().await.clone();
    assert!(
        most.load(Ordering::SeqCst) <= 2,
        "{} claims held at once",
        most.load(Ordering::SeqCst)
    );
    assert_eq!(most.load(Ordering::SeqCst), 2, "the limit of 2 was used");
    let unique: HashSet<Uuid> = claimed.iter().copied().collect();
    assert_eq!(claimed.len(), 100, "every task claimed exactly once");
    assert_eq!(unique, ids.into_iter().collect::<HashSet<_>>());
    let key = admin.limits().get_concurrency("repo").await.unwrap();
    assert_eq!((key.held, key.pending, key.limit), (0, 0, 2));
}

#[tokio::test]
async fn sixteen_claimers_never_hold_more_than_the_limit() {
    let server = TestServer::start_with(|config| config.core.max_connections = 16).await;
    let admin = server.admin();
    sixteen_claimers(vec![admin.clone()], &admin).await;
}

/// The same over two replicas on one PostgreSQL database (claimers split
/// between them). SQLite has one writer per database file, so there both
/// halves use the one server.
#[tokio::test]
async fn two_replicas_on_one_database_never_exceed_the_limit() {
    let server = TestServer::start_with(|config| config.core.max_connections = 16).await;
    let admin = server.admin();
    if backend() != "postgres" {
        sixteen_claimers(vec![admin.clone()], &admin).await;
        return;
    }
    let mut config = ServerConfig::new("127.0.0.1:0".parse().unwrap(), server.database_url());
    config.core.max_connections = 16;
    config.rate_limit_per_minute = 0;
    let second = orchestrator_server::start(config).await.unwrap();
    let on_second = Client::new(format!("http://{}", second.local_addr()))
        .unwrap()
        .with_api_key(&server.admin_key);
    sixteen_claimers(vec![admin.clone(), on_second], &admin).await;
    second.shutdown().await;
}

#[tokio::test]
async fn a_cancel_frees_exactly_one_slot() {
    let server = TestServer::start().await;
    let admin = server.admin();
    admin.limits().set_concurrency("deploy", 2).await.unwrap();
    let ids = create_many(&admin, 5, Some("deploy"), None).await;
    let claimers = agents(&admin, "a", 4).await;
    let first = claim(&admin, claimers[0]).await.unwrap();
    let second = claim(&admin, claimers[1]).await.unwrap();
    assert!(
        claim(&admin, claimers[2]).await.is_none(),
        "the key is full"
    );
    let key = admin.limits().get_concurrency("deploy").await.unwrap();
    assert_eq!((key.held, key.pending), (2, 3));

    // Waiting tasks are told once, with the key. (The creates ran
    // concurrently, so which three wait is not known in advance.)
    let waiting = *ids
        .iter()
        .find(|id| **id != first.id && **id != second.id)
        .unwrap();
    assert_eq!(
        limit_waiting_events(&admin, waiting, 1, Duration::from_secs(10)).await,
        1
    );

    admin
        .tasks()
        .act(first.id, TaskOperation::Cancel, &TaskAction::default())
        .await
        .unwrap();
    let third = claim(&admin, claimers[2]).await.expect("the freed slot");
    assert!(
        claim(&admin, claimers[3]).await.is_none(),
        "one cancel frees one slot"
    );
    let key = admin.limits().get_concurrency("deploy").await.unwrap();
    assert_eq!((key.held, key.pending), (2, 2));
    assert_ne!(third.id, second.id);
    assert_eq!(third.state.as_str(), "claimed");
    assert_eq!(
        limit_waiting_events(&admin, waiting, 2, Duration::from_secs(2)).await,
        1,
        "once per task"
    );

    // A key without a limit set holds one task at a time.
    create_many(&admin, 2, Some("solo"), None).await;
    let solo = agents(&admin, "solo", 2).await;
    // The 'deploy' key is full, so these claims can only take 'solo' tasks.
    assert!(claim(&admin, solo[0]).await.is_some());
    assert!(claim(&admin, solo[1]).await.is_none(), "default limit 1");
    let metric = server
        .metric("orch_concurrency_key_tasks{key=\"deploy\",state=\"held\"}")
        .await;
    assert_eq!(metric, Some(2.0));
}
