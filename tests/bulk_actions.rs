//! Bulk actions (issue 32): dry runs, the body rules, cancelling thousands
//! of tasks by filter with the right counts and events, rescheduling, a
//! restart in the middle, and cancelling the action itself.

use chrono::Utc;
use futures_util::future::join_all;
use orchestrator_client::api::{
    BulkAction, BulkActionKind, BulkFilter, BulkStatus, BulkTarget, ClaimTask, CreateBulkAction,
    CreateTask, EventFilter, PageRequest, RegisterAgent, TaskAction, TaskFilter, TaskState,
    Timestamp,
};
use orchestrator_client::{Client, TaskOperation};
use orchestrator_core::clock::ManualClock;
use orchestrator_server::ServerConfig;
use orchestrator_tests::TestServer;
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// `n` pending tasks of type `kind`, made 50 at a time.
async fn tasks(client: &Client, kind: &str, n: usize) -> Vec<Uuid> {
    let mut ids = Vec::with_capacity(n);
    for start in (0..n).step_by(50) {
        let batch = (start..n.min(start + 50)).map(|i| {
            let client = client.clone();
            let kind = kind.to_owned();
            async move {
                client
                    .tasks()
                    .create(&CreateTask {
                        title: format!("{kind} {i}"),
                        task_type: kind,
                        ..Default::default()
                    })
                    .await
                    .expect("create a task")
                    .id
            }
        });
        ids.extend(join_all(batch).await);
    }
    ids
}

fn by_filter(target: BulkTarget, action: BulkActionKind, filter: BulkFilter) -> CreateBulkAction {
    CreateBulkAction {
        target,
        action,
        ids: None,
        filter: Some(filter),
        dry_run: None,
        run_at: None,
        reason: None,
    }
}

fn of_type(kind: &str) -> BulkFilter {
    BulkFilter {
        entity_type: Some(kind.into()),
        ..Default::default()
    }
}

async fn count_tasks(client: &Client, kind: &str, state: TaskState) -> u64 {
    let page = client
        .tasks()
        .list(
            &TaskFilter {
                state: Some(state),
                ..Default::default()
            },
            PageRequest::new(1, 1),
        )
        .await
        .unwrap();
    let _ = kind;
    page.total
}

/// Waits (up to 60 s) until the action is no longer running.
async fn finished(client: &Client, id: Uuid) -> BulkAction {
    for _ in 0..1200 {
        let action = client.bulk_actions().get(id).await.unwrap();
        if action.status != BulkStatus::Running {
            return action;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("bulk action {id} still running");
}

/// Every event of `kind` with reason `reason`.
async fn events_with_reason(client: &Client, kind: &str, reason: &str) -> usize {
    let mut after = None;
    let mut n = 0;
    loop {
        let page = client
            .events()
            .list(&EventFilter {
                event_type: Some(kind.into()),
                after,
                limit: Some(500),
                ..Default::default()
            })
            .await
            .unwrap();
        n += page
            .items
            .iter()
            .filter(|e| e.data["reason"] == reason)
            .count();
        if !page.has_more {
            return n;
        }
        after = page.next_after.and_then(|a| a.parse().ok());
    }
}

/// A dry run counts and changes nothing; the body rules are 400s.
#[tokio::test]
async fn a_dry_run_counts_and_bad_bodies_are_refused() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let ids = tasks(&admin, "analysis", 30).await;
    let mut request = by_filter(
        BulkTarget::Tasks,
        BulkActionKind::Cancel,
        of_type("analysis"),
    );
    request.dry_run = Some(true);
    let dry = admin.bulk_actions().create(&request).await.unwrap();
    assert!(dry.dry_run);
    assert_eq!(dry.status, BulkStatus::Completed);
    assert_eq!((dry.counts.matched, dry.counts.succeeded), (30, 0));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        count_tasks(&admin, "analysis", TaskState::Pending).await,
        30
    );

    let both = CreateBulkAction {
        ids: Some(ids.clone()),
        ..by_filter(
            BulkTarget::Tasks,
            BulkActionKind::Cancel,
            of_type("analysis"),
        )
    };
    let empty = by_filter(
        BulkTarget::Tasks,
        BulkActionKind::Cancel,
        BulkFilter::default(),
    );
    let neither = CreateBulkAction {
        filter: None,
        ..empty.clone()
    };
    let wrong = by_filter(
        BulkTarget::Workflows,
        BulkActionKind::Retry,
        of_type("analysis"),
    );
    let reschedule = by_filter(
        BulkTarget::Tasks,
        BulkActionKind::Reschedule,
        of_type("analysis"),
    );
    for request in [both, empty, neither, wrong, reschedule] {
        let error = admin.bulk_actions().create(&request).await.unwrap_err();
        assert_eq!(error.status(), Some(400), "{request:?}");
    }
    let unknown = CreateBulkAction {
        ids: Some(vec![ids[0], Uuid::new_v4()]),
        filter: None,
        ..by_filter(
            BulkTarget::Tasks,
            BulkActionKind::Cancel,
            BulkFilter::default(),
        )
    };
    assert_eq!(
        admin
            .bulk_actions()
            .create(&unknown)
            .await
            .unwrap_err()
            .status(),
        Some(404)
    );
    let http = server.http();
    let answer = http
        .post(server.at("/api/v1/bulk-actions"))
        .bearer_auth(&server.admin_key)
        .json(&serde_json::json!({"target": "tasks", "action": "explode", "ids": [ids[0]]}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 422);
    assert_eq!(
        admin
            .bulk_actions()
            .list(Default::default())
            .await
            .unwrap()
            .total,
        1
    );
    // By ids: two tasks, one already cancelled (skipped).
    admin
        .tasks()
        .act(ids[1], TaskOperation::Cancel, &TaskAction::default())
        .await
        .unwrap();
    let by_ids = CreateBulkAction {
        ids: Some(vec![ids[0], ids[1], ids[0]]),
        filter: None,
        ..by_filter(
            BulkTarget::Tasks,
            BulkActionKind::Cancel,
            BulkFilter::default(),
        )
    };
    let created = admin.bulk_actions().create(&by_ids).await.unwrap();
    let done = finished(&admin, created.id).await;
    assert_eq!(done.status, BulkStatus::Completed);
    assert_eq!(
        (
            done.counts.matched,
            done.counts.succeeded,
            done.counts.skipped,
            done.counts.failed
        ),
        (2, 1, 1, 0)
    );
}

/// Cancelling 2,000 tasks by filter ends with the right counts, every task
/// cancelled and one event each naming the action.
#[tokio::test]
async fn cancelling_two_thousand_tasks_by_filter_counts_right() {
    const N: usize = 2000;
    let server = TestServer::start().await;
    let admin = server.admin();
    let ids = tasks(&admin, "code", N).await;
    tasks(&admin, "test", 5).await;
    for id in &ids[..10] {
        admin
            .tasks()
            .act(*id, TaskOperation::Cancel, &TaskAction::default())
            .await
            .unwrap();
    }
    let created = admin
        .bulk_actions()
        .create(&by_filter(
            BulkTarget::Tasks,
            BulkActionKind::Cancel,
            of_type("code"),
        ))
        .await
        .unwrap();
    assert_eq!(created.status, BulkStatus::Running);
    assert_eq!(created.counts.matched, N as u64);
    assert!(server.metric("orch_bulk_actions_running").await.is_some());
    // Counts only grow.
    let mut last = 0;
    let done = loop {
        let action = admin.bulk_actions().get(created.id).await.unwrap();
        let progress = action.counts.succeeded + action.counts.skipped + action.counts.failed;
        assert!(progress >= last);
        last = progress;
        if action.status != BulkStatus::Running {
            break action;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(done.status, BulkStatus::Completed);
    assert!(done.finished_at.is_some());
    assert_eq!(
        (
            done.counts.matched,
            done.counts.succeeded,
            done.counts.skipped,
            done.counts.failed
        ),
        (N as u64, N as u64 - 10, 10, 0)
    );
    assert_eq!(
        count_tasks(&admin, "code", TaskState::Cancelled).await,
        N as u64
    );
    assert_eq!(count_tasks(&admin, "test", TaskState::Pending).await, 5);
    let reason = format!("bulk action {}", created.id);
    assert_eq!(
        events_with_reason(&admin, "task.state_changed", &reason).await,
        N - 10
    );
    // Retry them all back by filter.
    let retried = admin
        .bulk_actions()
        .create(&by_filter(
            BulkTarget::Tasks,
            BulkActionKind::Retry,
            BulkFilter {
                state: Some("cancelled".into()),
                entity_type: Some("code".into()),
                ..Default::default()
            },
        ))
        .await
        .unwrap();
    let retried = finished(&admin, retried.id).await;
    assert_eq!(retried.counts.succeeded, N as u64);
    assert_eq!(
        count_tasks(&admin, "code", TaskState::Pending).await,
        N as u64 + 5
    );
}

/// A server stopped in the middle: the next one resumes, and the counts
/// end the same (each task changed once).
#[tokio::test]
async fn a_restart_mid_run_resumes_with_the_same_counts() {
    const N: usize = 1500;
    let mut first = TestServer::start().await;
    let admin = first.admin();
    tasks(&admin, "docs", N).await;
    let created = admin
        .bulk_actions()
        .create(&by_filter(
            BulkTarget::Tasks,
            BulkActionKind::Cancel,
            of_type("docs"),
        ))
        .await
        .unwrap();
    for _ in 0..400 {
        if admin
            .bulk_actions()
            .get(created.id)
            .await
            .unwrap()
            .counts
            .succeeded
            > 0
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let url = first.database_url();
    let key = first.admin_key.clone();
    first.stop().await;
    // Past any lease the stopped server may have left.
    let mut config = ServerConfig::new("127.0.0.1:0".parse().unwrap(), url);
    config.core.max_connections = 5;
    config.rate_limit_per_minute = 0;
    let clock = Arc::new(ManualClock::new(Utc::now() + chrono::Duration::seconds(60)));
    config.core.clock = clock.clone();
    let second = orchestrator_server::start(config).await.unwrap();
    let admin = Client::new(format!("http://{}", second.local_addr()))
        .unwrap()
        .with_api_key(&key);
    // Time moves on while the action runs (a chunk that failed under load
    // is due again a little later on the server's clock, which is ours).
    let mut done = None;
    for _ in 0..1200 {
        let action = admin.bulk_actions().get(created.id).await.unwrap();
        if action.status != BulkStatus::Running {
            done = Some(action);
            break;
        }
        clock.advance(chrono::Duration::milliseconds(500));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let done = done.expect("the resumed bulk action finished");
    assert_eq!(done.status, BulkStatus::Completed);
    assert_eq!(
        (
            done.counts.matched,
            done.counts.succeeded,
            done.counts.skipped,
            done.counts.failed
        ),
        (N as u64, N as u64, 0, 0)
    );
    assert_eq!(
        count_tasks(&admin, "docs", TaskState::Cancelled).await,
        N as u64
    );
    let reason = format!("bulk action {}", created.id);
    assert_eq!(
        events_with_reason(&admin, "task.state_changed", &reason).await,
        N
    );
    second.shutdown().await;
}

/// Cancelling the action stops the remainder; what was applied stays and
/// the counts no longer move.
#[tokio::test]
async fn cancelling_the_action_stops_the_rest() {
    const N: usize = 1500;
    let server = TestServer::start().await;
    let admin = server.admin();
    tasks(&admin, "assessment", N).await;
    let created = admin
        .bulk_actions()
        .create(&by_filter(
            BulkTarget::Tasks,
            BulkActionKind::Cancel,
            of_type("assessment"),
        ))
        .await
        .unwrap();
    let cancelled = admin.bulk_actions().cancel(created.id).await.unwrap();
    assert_eq!(cancelled.status, BulkStatus::Cancelled);
    assert!(cancelled.finished_at.is_some());
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let after = admin.bulk_actions().get(created.id).await.unwrap();
    assert_eq!(after.status, BulkStatus::Cancelled);
    assert!(after.counts.succeeded < N as u64, "{after:?}");
    assert_eq!(
        count_tasks(&admin, "assessment", TaskState::Cancelled).await,
        after.counts.succeeded
    );
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(
        admin.bulk_actions().get(created.id).await.unwrap().counts,
        after.counts
    );
    let again = admin.bulk_actions().cancel(created.id).await.unwrap_err();
    assert_eq!(again.status(), Some(409));
}

/// `reschedule` (run control §3, §8): every pending task of the set gets
/// the action's `run_at` through the single-task reschedule (a
/// `task.rescheduled` event naming the action), tasks in other states are
/// skipped; `run_at` is required for it and refused on other actions; a
/// time already passed makes the tasks claimable at once.
#[tokio::test]
async fn rescheduling_by_filter_moves_the_pending_tasks_and_skips_the_rest() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let ids = tasks(&admin, "docs", 30).await;
    // Four agents: three hold a task each, the last claims at the end.
    let mut claims = Vec::new();
    for i in 0..4 {
        let agent = admin
            .agents()
            .register(&RegisterAgent {
                name: format!("holder {i}"),
                ..Default::default()
            })
            .await
            .unwrap()
            .id;
        claims.push(ClaimTask {
            agent_id: agent,
            ..Default::default()
        });
    }
    let claim = claims.pop().unwrap();
    for id in &ids[..5] {
        admin
            .tasks()
            .act(*id, TaskOperation::Cancel, &TaskAction::default())
            .await
            .unwrap();
    }
    let mut held = Vec::new();
    for holder in &claims {
        held.push(
            admin
                .tasks()
                .claim(holder)
                .await
                .unwrap()
                .expect("a task")
                .id,
        );
    }
    let later = chrono::DateTime::from_timestamp(Utc::now().timestamp() + 3_600, 0).unwrap();
    let reschedule = |run_at: Option<chrono::DateTime<Utc>>| CreateBulkAction {
        run_at: run_at.map(Timestamp::from),
        ..by_filter(
            BulkTarget::Tasks,
            BulkActionKind::Reschedule,
            of_type("docs"),
        )
    };

    // The body rules: 400 naming run_at; a run_at that is no time is 422.
    let misplaced = CreateBulkAction {
        run_at: Some(later.into()),
        ..by_filter(BulkTarget::Tasks, BulkActionKind::Cancel, of_type("docs"))
    };
    for request in [reschedule(None), misplaced] {
        let error = admin.bulk_actions().create(&request).await.unwrap_err();
        assert_eq!(error.status(), Some(400), "{request:?}");
        let fields = error.field_errors().expect("field errors");
        assert!(fields.get("run_at").is_some(), "{fields:?}");
    }
    let answer = server
        .http()
        .post(server.at("/api/v1/bulk-actions"))
        .bearer_auth(&server.admin_key)
        .json(
            &serde_json::json!({"target": "tasks", "action": "reschedule",
            "filter": {"type": "docs"}, "run_at": "tomorrow"}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 422);
    let dry = admin
        .bulk_actions()
        .create(&CreateBulkAction {
            dry_run: Some(true),
            ..reschedule(Some(later))
        })
        .await
        .unwrap();
    assert_eq!((dry.counts.matched, dry.counts.succeeded), (30, 0));
    assert_eq!(
        admin
            .bulk_actions()
            .list(Default::default())
            .await
            .unwrap()
            .total,
        1,
        "only the dry run was created"
    );
    assert!(admin.tasks().get(ids[29]).await.unwrap().run_at.is_none());

    let created = admin
        .bulk_actions()
        .create(&reschedule(Some(later)))
        .await
        .unwrap();
    assert_eq!(created.run_at, Some(later.into()));
    let done = finished(&admin, created.id).await;
    assert_eq!(
        (
            done.counts.matched,
            done.counts.succeeded,
            done.counts.skipped,
            done.counts.failed
        ),
        (30, 22, 8, 0)
    );
    for id in &ids {
        let task = admin.tasks().get(*id).await.unwrap();
        match task.state {
            TaskState::Pending => assert_eq!(task.run_at, Some(later.into()), "{id}"),
            _ => assert!(task.run_at.is_none(), "{id} not pending, not moved"),
        }
    }
    assert!(
        admin.tasks().claim(&claim).await.unwrap().is_none(),
        "none claimable before run_at"
    );
    let reason = format!("bulk action {}", created.id);
    assert_eq!(
        events_with_reason(&admin, "task.rescheduled", &reason).await,
        22
    );

    // By ids, to a time already passed: claimable at once.
    let pending: Vec<Uuid> = ids[5..]
        .iter()
        .copied()
        .filter(|id| !held.contains(id))
        .take(2)
        .collect();
    let now = admin
        .bulk_actions()
        .create(&CreateBulkAction {
            ids: Some(pending.clone()),
            filter: None,
            ..reschedule(Some(Utc::now() - chrono::Duration::seconds(60)))
        })
        .await
        .unwrap();
    assert_eq!(finished(&admin, now.id).await.counts.succeeded, 2);
    for id in &pending {
        assert!(admin.tasks().get(*id).await.unwrap().run_at.is_none());
    }
    let claimed = admin
        .tasks()
        .claim(&claim)
        .await
        .unwrap()
        .expect("claimable");
    assert!(pending.contains(&claimed.id));
}
