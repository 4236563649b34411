//! Each slot fires at most once: two servers on one PostgreSQL database
//! with an `every_seconds: 1` schedule, and 20 concurrent triggers under
//! `overlap: skip`.

use super::{every, runs};
use orchestrator_client::Client;
use orchestrator_client::api::schedules::{OverlapPolicy, RunOutcome, TriggerSchedule};
use orchestrator_client::api::{PageRequest, TaskFilter};
use orchestrator_server::ServerConfig;
use orchestrator_tests::TestServer;
use std::collections::HashSet;
use std::time::Duration;

#[tokio::test]
async fn two_replicas_fire_each_slot_once() {
    if orchestrator_tests::backend() != "postgres" {
        eprintln!("skipped: two replicas need PostgreSQL (set ORCH_TEST_DATABASE_URL)");
        return;
    }
    let first = TestServer::start().await;
    let mut config = ServerConfig::new("127.0.0.1:0".parse().unwrap(), first.database_url());
    config.core.max_connections = 5;
    config.rate_limit_per_minute = 0;
    let second = orchestrator_server::start(config).await.unwrap();
    let admin = first.admin();
    let schedule = admin
        .schedules()
        .create(&every("every second", 1, OverlapPolicy::AllowAll))
        .await
        .unwrap();
    // The other replica learns of it without a wake-up: make it look now.
    let other = Client::new(format!("http://{}", second.local_addr()))
        .unwrap()
        .with_api_key(&first.admin_key);
    other
        .schedules()
        .patch(schedule.id, &Default::default())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(8)).await;
    admin.schedules().pause(schedule.id).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;

    let runs = runs(&admin, schedule.id).await;
    assert!(runs.len() >= 6, "about one run a second: {}", runs.len());
    let slots: HashSet<_> = runs.iter().map(|r| r.scheduled_for).collect();
    assert_eq!(slots.len(), runs.len(), "no slot has two runs");
    let mut seconds: Vec<i64> = runs
        .iter()
        .map(|r| r.scheduled_for.as_datetime().timestamp())
        .collect();
    seconds.sort();
    assert!(
        seconds.windows(2).all(|w| w[1] - w[0] == 1),
        "one run per slot, none missing: {seconds:?}"
    );
    assert!(runs.iter().all(|r| r.outcome == RunOutcome::Launched));
    let tasks = admin
        .tasks()
        .list(&TaskFilter::default(), PageRequest::new(1, 100))
        .await
        .unwrap();
    assert_eq!(tasks.total as usize, runs.len(), "one task per slot");
    second.shutdown().await;
}

#[tokio::test]
async fn twenty_concurrent_triggers_under_skip_launch_one() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let mut body = every("manual", 3600, OverlapPolicy::Skip);
    body.paused = Some(true);
    let schedule = admin.schedules().create(&body).await.unwrap();
    let triggers: Vec<_> = (0..20)
        .map(|_| {
            let admin = admin.clone();
            tokio::spawn(async move {
                admin
                    .schedules()
                    .trigger(schedule.id, &TriggerSchedule::default())
                    .await
            })
        })
        .collect();
    let mut launched = 0;
    for trigger in triggers {
        match trigger.await.unwrap() {
            Ok(run) if run.outcome == RunOutcome::Launched => launched += 1,
            Ok(run) => assert_eq!(run.outcome, RunOutcome::Skipped),
            // Two triggers in the same millisecond: the slot has its run.
            Err(e) => assert_eq!(e.status(), Some(409), "{e}"),
        }
    }
    assert_eq!(launched, 1);
    let tasks = admin
        .tasks()
        .list(&TaskFilter::default(), PageRequest::new(1, 100))
        .await
        .unwrap();
    assert_eq!(tasks.total, 1, "one task launched");
    let runs = runs(&admin, schedule.id).await;
    assert_eq!(
        runs.iter()
            .filter(|r| r.outcome == RunOutcome::Launched)
            .count(),
        1
    );

    // ignore_overlap fires beside the running one.
    let run = admin
        .schedules()
        .trigger(
            schedule.id,
            &TriggerSchedule {
                ignore_overlap: Some(true),
                request_id: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(run.outcome, RunOutcome::Launched);
}
