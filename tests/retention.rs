//! History retention (`orch serve --history-retention-days`): the background
//! runner deletes ended runs, events and log rows past the retention, in
//! chunks, and nothing younger or still running.
//!
//! Real time, not a manual clock: events and log rows are stamped with the
//! system's time, and the retention compares them with it. The retention is
//! a few seconds here (the core takes any duration; the server's flag takes
//! days).

use chrono::Utc;
use orchestrator_client::api::{
    ClaimTask, CompleteTask, CreateTask, EventFilter, LogCategory, LogFilter, LogGroupBy,
    NewLogEntry, RegisterAgent, Task, WorkflowAction,
};
use orchestrator_client::{Client, Error};
use orchestrator_tests::TestServer;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// A task created, claimed and completed by a fresh agent.
async fn finished_task(admin: &Client, title: &str) -> Task {
    let agent = admin
        .agents()
        .register(&RegisterAgent {
            name: format!("{title} agent"),
            ..Default::default()
        })
        .await
        .unwrap();
    let task = admin
        .tasks()
        .create(&CreateTask {
            title: title.into(),
            task_type: "code".into(),
            preferred_agent_id: Some(agent.id),
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
        .expect("a claimable task");
    assert_eq!(claimed.id, task.id);
    admin
        .tasks()
        .complete(
            task.id,
            &CompleteTask {
                agent_id: Some(agent.id),
                output: Some(serde_json::json!({ "ok": true })),
                ..Default::default()
            },
        )
        .await
        .unwrap()
}

fn is_not_found<T: std::fmt::Debug>(result: Result<T, Error>) -> bool {
    match result {
        Err(Error::Api { status, .. }) => status == 404,
        other => {
            assert!(other.is_ok(), "unexpected answer: {other:?}");
            false
        }
    }
}

async fn log_rows(admin: &Client, filter: LogFilter) -> u64 {
    admin
        .logs()
        .stats(LogGroupBy::Operation, &filter)
        .await
        .unwrap()
        .total
}

async fn events_of(admin: &Client, entity_id: Uuid) -> usize {
    admin
        .events()
        .list(&EventFilter {
            entity_id: Some(entity_id),
            ..Default::default()
        })
        .await
        .unwrap()
        .items
        .len()
}

#[tokio::test]
async fn ended_history_past_the_retention_goes_and_nothing_else() {
    const RETENTION: Duration = Duration::from_secs(8);
    let server = TestServer::start_with(|config| {
        config.core.history_retention = Some(RETENTION);
        config.core.retention_interval = Duration::from_millis(200);
    })
    .await;
    let admin = server.admin();

    // Older than the retention by the time it is checked: an ended task
    // with events and log rows, a cancelled workflow, a running workflow, a
    // task never claimed, and more log rows than one delete takes.
    let old = finished_task(&admin, "old").await;
    let ended = server.launch_workflow("ended").await;
    admin
        .workflows()
        .act(ended, "cancel", &WorkflowAction::default())
        .await
        .unwrap();
    let running = server.launch_workflow("running").await;
    let waiting = admin
        .tasks()
        .create(&CreateTask {
            title: "waiting".into(),
            task_type: "code".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let bulk = |n: usize| {
        (0..n)
            .map(|i| {
                let mut entry = NewLogEntry::new(LogCategory::Tool, "retention.bulk");
                entry.task_id = Some(old.id);
                entry.duration_ms = Some(i as i64);
                entry
            })
            .collect::<Vec<_>>()
    };
    for _ in 0..6 {
        admin.logs().ingest(bulk(1000)).await.unwrap();
    }
    let old_logs = LogFilter {
        task_id: Some(old.id),
        ..Default::default()
    };
    let bulk_rows = LogFilter {
        operation: Some("retention.bulk".into()),
        ..old_logs.clone()
    };
    assert_eq!(log_rows(&admin, bulk_rows).await, 6000);
    assert!(events_of(&admin, old.id).await >= 2);

    // Once all that is past the retention: a task ended just now, with its
    // own history (it stays for RETENTION, far longer than the checks).
    tokio::time::sleep(RETENTION + Duration::from_millis(500)).await;
    let recent = finished_task(&admin, "recent").await;
    admin
        .logs()
        .ingest(vec![{
            let mut entry = NewLogEntry::new(LogCategory::Tool, "retention.bulk");
            entry.task_id = Some(recent.id);
            entry
        }])
        .await
        .unwrap();

    let deadline = Instant::now() + Duration::from_secs(20);
    while !is_not_found(admin.tasks().get(old.id).await) {
        assert!(
            Instant::now() < deadline,
            "the ended task was not deleted within 20 s of its retention"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The task goes before the events and logs (same sweep): wait for those.
    while log_rows(&admin, old_logs.clone()).await > 0 || events_of(&admin, old.id).await > 0 {
        assert!(
            Instant::now() < deadline,
            "the ended task's history was not deleted within 20 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    assert!(is_not_found(admin.workflows().get(ended).await));
    let kept = admin.workflows().get(running).await.unwrap();
    assert_eq!(kept.workflow.id, running);
    assert_eq!(admin.tasks().get(waiting.id).await.unwrap().id, waiting.id);
    assert_eq!(admin.tasks().get(recent.id).await.unwrap().id, recent.id);
    assert!(events_of(&admin, recent.id).await >= 2);
    assert_eq!(
        log_rows(
            &admin,
            LogFilter {
                task_id: Some(recent.id),
                operation: Some("retention.bulk".into()),
                ..Default::default()
            }
        )
        .await,
        1
    );
}

#[tokio::test]
async fn without_a_history_retention_nothing_is_deleted() {
    let server = TestServer::start_with(|config| {
        config.core.retention_interval = Duration::from_millis(200);
    })
    .await;
    let admin = server.admin();
    let old = finished_task(&admin, "kept").await;
    // Several sweeps run (every 200 ms); none deletes history.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(admin.tasks().get(old.id).await.unwrap().id, old.id);
    assert!(events_of(&admin, old.id).await >= 2);
}

#[tokio::test]
async fn purge_history_deletes_what_ended_before_its_cutoff() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let mut tasks = Vec::new();
    for n in 0..3 {
        tasks.push(finished_task(&admin, &format!("chunked {n}")).await);
    }
    let core = server.handle().control_plane();
    // Nothing is older than an hour ago.
    let kept = core
        .purge_history(
            Utc::now() - chrono::Duration::hours(1),
            Duration::from_secs(5),
        )
        .await
        .unwrap();
    assert_eq!((kept.tasks, kept.events, kept.logs), (0, 0, 0));
    assert!(kept.finished);
    for task in &tasks {
        assert_eq!(admin.tasks().get(task.id).await.unwrap().id, task.id);
    }
    // Everything that ended before now goes, events and logs included.
    tokio::time::sleep(Duration::from_millis(5)).await;
    let purged = core
        .purge_history(Utc::now(), Duration::from_secs(30))
        .await
        .unwrap();
    assert!(purged.finished);
    assert_eq!(purged.tasks, 3);
    assert!(purged.events >= 6, "{purged:?}");
    for task in &tasks {
        assert!(is_not_found(admin.tasks().get(task.id).await));
        assert_eq!(events_of(&admin, task.id).await, 0);
    }
}
