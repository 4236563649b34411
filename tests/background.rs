//! The background runner (`orchestrator_core::background`): it reads time
//! through the clock the core is given and re-plans when that clock moves,
//! so work falls due without waiting for a polling interval.

use chrono::Utc;
use orchestrator_client::api::{ClaimTask, CreateTask, RegisterAgent, TaskState};
use orchestrator_core::clock::ManualClock;
use orchestrator_tests::TestServer;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[tokio::test]
async fn moving_a_manual_clock_past_a_deadline_runs_the_due_job_at_once() {
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let given = clock.clone();
    let server = TestServer::start_with(move |config| {
        config.core.clock = given;
        // Longer than the test: only the clock's move can make the sweep due.
        config.core.liveness_interval = Duration::from_secs(30);
        config.core.liveness_grace = Duration::from_secs(60);
    })
    .await;
    let admin = server.admin();
    let agent = admin
        .agents()
        .register(&RegisterAgent {
            name: "silent".into(),
            heartbeat_interval_seconds: Some(5),
            ..Default::default()
        })
        .await
        .unwrap();
    let task = admin
        .tasks()
        .create(&CreateTask {
            title: "t".into(),
            task_type: "code".into(),
            max_retries: Some(1),
            ..Default::default()
        })
        .await
        .unwrap();
    let claimed = admin
        .tasks()
        .claim(&ClaimTask {
            agent_id: agent.id,
            ..Default::default()
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claimed.id, task.id);

    // Real time passing changes nothing while the clock stands still.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        admin.tasks().get(task.id).await.unwrap().state,
        TaskState::Claimed
    );

    // Past 2 x the heartbeat interval plus the grace, and past the next
    // planned sweep: the runner wakes on the move and releases the task.
    clock.advance(chrono::Duration::minutes(5));
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let now = admin.tasks().get(task.id).await.unwrap();
        if now.state == TaskState::Pending {
            assert_eq!(now.error.as_ref().unwrap()["category"], "agent_lost");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the task was not released within 3 s of the clock's move"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        admin.agents().get(agent.id).await.unwrap().status,
        "inactive"
    );
}
