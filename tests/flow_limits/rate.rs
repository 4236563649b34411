//! Rate limits: no window of the period holds more than the limit, keys
//! are independent, and the window survives a restart.

use super::{agents, claim, claim_waiting, create_many, finish};
use chrono::{DateTime, Utc};
use orchestrator_client::Client;
use orchestrator_server::ServerConfig;
use orchestrator_tests::TestServer;

/// Limit 5 per 2 s over 30 tasks, claimed by 4 agents as fast as they can
/// (long polls, so each claim comes as soon as the window lets it): the
/// claim times (the server's `claimed_at`) never put more than 5 claims in
/// any 2 s window, and the window is used.
#[tokio::test]
async fn no_window_holds_more_than_the_limit() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let set = admin.limits().set_rate("llm", 5, 2).await.unwrap();
    assert_eq!(
        (set.limit, set.period_seconds, set.claimed_in_window),
        (5, 2, 0)
    );
    create_many(&admin, 30, None, Some("llm")).await;
    let agents = agents(&admin, "r", 4).await;
    let mut handles = Vec::new();
    for agent in agents {
        let client = admin.clone();
        handles.push(tokio::spawn(async move {
            let mut times: Vec<DateTime<Utc>> = Vec::new();
            while let Some(task) = claim_waiting(&client, agent, 4).await {
                times.push(task.claimed_at.unwrap().as_datetime());
                finish(&client, agent, task.id).await;
            }
            times
        }));
    }
    let mut times = Vec::new();
    for handle in handles {
        times.extend(handle.await.unwrap());
    }
    times.sort();
    assert_eq!(times.len(), 30, "every task claimed");
    let mut fullest = 0;
    for (i, start) in times.iter().enumerate() {
        let end = *start + chrono::Duration::seconds(2);
        let inside = times[i..].iter().take_while(|t| **t < end).count();
        fullest = fullest.max(inside);
    }
    assert!(fullest <= 5, "{fullest} claims within one 2 s window");
    assert_eq!(fullest, 5, "the window's room was used");
}

#[tokio::test]
async fn two_keys_are_independent() {
    let server = TestServer::start().await;
    let admin = server.admin();
    admin.limits().set_rate("x", 2, 600).await.unwrap();
    admin.limits().set_rate("y", 2, 600).await.unwrap();
    create_many(&admin, 3, None, Some("x")).await;
    create_many(&admin, 3, None, Some("y")).await;
    let agents = agents(&admin, "k", 5).await;
    let mut keys = Vec::new();
    for agent in &agents[..4] {
        let task = claim(&admin, *agent)
            .await
            .expect("room in one of the keys");
        keys.push(task.rate_limit_key.unwrap());
    }
    keys.sort();
    assert_eq!(keys, ["x", "x", "y", "y"]);
    assert!(
        claim(&admin, agents[4]).await.is_none(),
        "both windows are full"
    );
    let listed = admin
        .limits()
        .list_rate(Default::default())
        .await
        .unwrap()
        .items;
    let counts: Vec<(String, i64, i64)> = listed
        .into_iter()
        .map(|r| (r.key, r.claimed_in_window, r.pending))
        .collect();
    assert_eq!(
        counts,
        [("x".to_owned(), 2, 1), ("y".to_owned(), 2, 1)],
        "claimed_in_window and pending per key"
    );
}

#[tokio::test]
async fn the_window_survives_a_restart() {
    let mut server = TestServer::start().await;
    let admin = server.admin();
    admin.limits().set_rate("api", 2, 600).await.unwrap();
    create_many(&admin, 3, None, Some("api")).await;
    let agents = agents(&admin, "w", 3).await;
    for agent in &agents[..2] {
        let task = claim(&admin, *agent).await.unwrap();
        finish(&admin, *agent, task.id).await;
    }
    server.stop().await;
    let mut config = ServerConfig::new("127.0.0.1:0".parse().unwrap(), server.database_url());
    config.core.max_connections = 5;
    config.rate_limit_per_minute = 0;
    let again = orchestrator_server::start(config).await.unwrap();
    let admin = Client::new(format!("http://{}", again.local_addr()))
        .unwrap()
        .with_api_key(&server.admin_key);
    assert!(
        claim(&admin, agents[2]).await.is_none(),
        "the two claims before the restart fill the window"
    );
    let key = admin.limits().get_rate("api").await.unwrap();
    assert_eq!((key.claimed_in_window, key.pending), (2, 1));
    again.shutdown().await;
}
