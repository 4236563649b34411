//! Fair claiming: among claimable tasks of one priority, the key whose last
//! claim is oldest goes first.

use super::{agents, claim, create_many, finish};
use orchestrator_tests::TestServer;

/// 1,000 pending tasks on `a` (limit 1,000), then one on `b`: an agent
/// claiming and completing in a loop gets `b`'s task within 2 claims.
#[tokio::test]
async fn a_late_key_is_served_within_two_claims() {
    let server = TestServer::start_with(|config| config.core.max_connections = 8).await;
    let admin = server.admin();
    admin.limits().set_concurrency("a", 1_000).await.unwrap();
    create_many(&admin, 1_000, Some("a"), None).await;
    let late = create_many(&admin, 1, Some("b"), None).await[0];
    let agent = agents(&admin, "loop", 1).await[0];
    let mut seen = Vec::new();
    for _ in 0..2 {
        let task = claim(&admin, agent).await.unwrap();
        seen.push(task.id);
        finish(&admin, agent, task.id).await;
    }
    assert!(
        seen.contains(&late),
        "b's task was not among the first 2 claims"
    );
}

/// Keys `a`, `b`, `c` with 100 tasks each: the claims take them in turn.
#[tokio::test]
async fn keys_take_turns() {
    let server = TestServer::start().await;
    let admin = server.admin();
    for key in ["a", "b", "c"] {
        admin.limits().set_concurrency(key, 100).await.unwrap();
        create_many(&admin, 100, Some(key), None).await;
    }
    let agent = agents(&admin, "turns", 1).await[0];
    let mut keys = Vec::new();
    for _ in 0..30 {
        let task = claim(&admin, agent).await.unwrap();
        keys.push(task.concurrency_key.clone().unwrap());
        finish(&admin, agent, task.id).await;
    }
    for round in keys.chunks(3) {
        let mut round = round.to_vec();
        round.sort();
        assert_eq!(round, ["a", "b", "c"], "claims in order: {keys:?}");
    }
}

/// Priority comes before fairness, also among concurrent claims (which the
/// server takes together, PostgreSQL in one call of its claim function):
/// with 40 `normal` tasks over four keys and then 6 `high` and 2 `critical`
/// ones over other keys and none, 16 agents claiming at once get all 8 of
/// the urgent tasks.
#[tokio::test]
async fn concurrent_claims_take_the_urgent_tasks_first() {
    use orchestrator_client::api::Priority;
    let server = TestServer::start().await;
    let admin = server.admin();
    for k in 0..6 {
        admin
            .limits()
            .set_concurrency(&format!("k{k}"), 100)
            .await
            .unwrap();
    }
    for i in 0..40 {
        let mut request = super::keyed(&format!("n{i}"), Some(&format!("k{}", i % 4)), None);
        request.priority = Some(Priority::Normal);
        admin.tasks().create(&request).await.unwrap();
    }
    let mut urgent = Vec::new();
    for i in 0..8 {
        let key = (i < 6).then(|| format!("k{}", 4 + i % 2));
        let mut request = super::keyed(&format!("u{i}"), key.as_deref(), None);
        request.priority = Some(if i < 6 {
            Priority::High
        } else {
            Priority::Critical
        });
        urgent.push(admin.tasks().create(&request).await.unwrap().id);
    }
    let agents = agents(&admin, "urgent", 16).await;
    let claimed: Vec<_> =
        futures_util::future::join_all(agents.iter().map(|agent| claim(&admin, *agent)))
            .await
            .into_iter()
            .map(|task| task.expect("a task for every agent").id)
            .collect();
    for id in &urgent {
        assert!(
            claimed.contains(id),
            "urgent task {id} was not among the 16 claims"
        );
    }
}
