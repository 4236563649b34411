//! Catch-up at start-up: three hourly slots missed while no server ran.
//! `skip` fires none (three `missed` runs), `latest` the most recent, `all`
//! each in order; a paused schedule resumed afterwards fires none of them.

use super::{at, every, runs};
use chrono::Duration;
use orchestrator_client::Client;
use orchestrator_client::api::schedules::{CatchupPolicy, OverlapPolicy, RunOutcome};
use orchestrator_core::clock::ManualClock;
use orchestrator_server::ServerConfig;
use orchestrator_tests::TestServer;
use std::sync::Arc;

#[tokio::test]
async fn slots_missed_while_no_server_ran_follow_the_catchup_policy() {
    let clock = Arc::new(ManualClock::new(at("2026-06-01T00:01:00Z")));
    let given = clock.clone();
    let mut first = TestServer::start_with(move |config| config.core.clock = given).await;
    let admin = first.admin();
    let mut ids = Vec::new();
    for (name, catchup) in [
        ("skip", CatchupPolicy::Skip),
        ("latest", CatchupPolicy::Latest),
        ("all", CatchupPolicy::All),
        ("paused", CatchupPolicy::All),
    ] {
        let mut body = every(name, 3600, OverlapPolicy::AllowAll);
        body.catchup = Some(catchup);
        body.catchup_window_seconds = Some(4 * 3600);
        ids.push(admin.schedules().create(&body).await.unwrap().id);
    }
    let paused = ids[3];
    admin.schedules().pause(paused).await.unwrap();

    // No server runs over 01:00, 02:00 and 03:00.
    first.stop().await;
    clock.set(at("2026-06-01T03:00:30Z"));
    let mut config = ServerConfig::new("127.0.0.1:0".parse().unwrap(), first.database_url());
    config.core.max_connections = 5;
    config.core.clock = clock.clone();
    let second = orchestrator_server::start(config).await.unwrap();
    let admin = Client::new(format!("http://{}", second.local_addr()))
        .unwrap()
        .with_api_key(&first.admin_key);
    for id in &ids[..3] {
        super::wait_for(&admin, *id, |s| {
            s.next_fire_at
                .is_some_and(|n| n.to_string() == "2026-06-01T04:00:00.000Z")
        })
        .await;
    }
    let outcomes = |runs: Vec<orchestrator_client::api::schedules::ScheduleRun>| {
        let mut runs = runs;
        runs.reverse();
        runs.into_iter()
            .map(|r| {
                (
                    r.scheduled_for.to_string()[11..16].to_owned(),
                    r.outcome,
                    r.reason,
                )
            })
            .collect::<Vec<_>>()
    };
    let missed = || Some("missed".to_owned());
    assert_eq!(
        outcomes(runs(&admin, ids[0]).await),
        vec![
            ("01:00".into(), RunOutcome::Skipped, missed()),
            ("02:00".into(), RunOutcome::Skipped, missed()),
            ("03:00".into(), RunOutcome::Skipped, missed()),
        ]
    );
    assert_eq!(
        outcomes(runs(&admin, ids[1]).await),
        vec![
            ("01:00".into(), RunOutcome::Skipped, missed()),
            ("02:00".into(), RunOutcome::Skipped, missed()),
            ("03:00".into(), RunOutcome::Launched, None),
        ]
    );
    assert_eq!(
        outcomes(runs(&admin, ids[2]).await),
        vec![
            ("01:00".into(), RunOutcome::Launched, None),
            ("02:00".into(), RunOutcome::Launched, None),
            ("03:00".into(), RunOutcome::Launched, None),
        ]
    );
    // Resumed after the gap: paused time is never caught up.
    let resumed = admin.schedules().resume(paused).await.unwrap();
    assert_eq!(
        resumed.next_fire_at.unwrap().to_string(),
        "2026-06-01T04:00:00.000Z"
    );
    clock.advance(Duration::seconds(1));
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(runs(&admin, paused).await.is_empty());
    second.shutdown().await;
}
