//! Group commit (issue 14): many requests share one database commit, each in
//! its own savepoint. A request that writes and then fails must leave no
//! trace, while the requests batched with it commit.

use orchestrator_client::api::{
    ClaimTask, CompleteTask, CreateTask, EventFilter, PageRequest, RegisterAgent, StartTask,
    TaskFilter, TaskState,
};
use orchestrator_tests::TestServer;
use std::collections::HashSet;
use uuid::Uuid;

fn task(title: String) -> CreateTask {
    CreateTask {
        title,
        task_type: "code".into(),
        ..Default::default()
    }
}

/// 60 idempotent completions of pending tasks (each writes its
/// `request_id` record, then fails with 409) race 60 task creations, all at
/// once, so that they share batches. Afterwards every creation is there
/// with its one event, the failed completions changed nothing (no event,
/// still pending), and their `request_id`s are free: reused once the task
/// really is in progress, they complete it (a leaked record would replay
/// its unfinished response instead).
#[tokio::test]
async fn a_request_that_fails_in_a_batch_rolls_back_alone() {
    const N: usize = 60;
    let server = TestServer::start().await;
    let admin = server.admin();
    let mut pending = Vec::new();
    for i in 0..N {
        pending.push(
            admin
                .tasks()
                .create(&task(format!("p{i}")))
                .await
                .unwrap()
                .id,
        );
    }

    let mut storm = Vec::new();
    for (i, &id) in pending.iter().enumerate() {
        let completer = admin.clone();
        storm.push(tokio::spawn(async move {
            let refused = completer
                .tasks()
                .complete(
                    id,
                    &CompleteTask {
                        request_id: Some(format!("done-{i}")),
                        ..Default::default()
                    },
                )
                .await
                .expect_err("a pending task cannot be completed");
            assert_eq!(refused.status(), Some(409), "{refused}");
            None
        }));
        let creator = admin.clone();
        storm.push(tokio::spawn(async move {
            Some(
                creator
                    .tasks()
                    .create(&task(format!("s{i}")))
                    .await
                    .unwrap()
                    .id,
            )
        }));
    }
    let mut created = HashSet::new();
    for handle in storm {
        if let Some(id) = handle.await.unwrap() {
            created.insert(id);
        }
    }
    assert_eq!(created.len(), N);

    let listed = admin
        .tasks()
        .list(&TaskFilter::default(), PageRequest::new(1, 10))
        .await
        .unwrap();
    assert_eq!(listed.total, 2 * N as u64, "tasks after the storm");
    for &id in created.iter().chain(&pending) {
        let events = admin
            .events()
            .list(&EventFilter {
                entity_id: Some(id),
                ..Default::default()
            })
            .await
            .unwrap();
        let types: Vec<&str> = events.items.iter().map(|e| e.event_type.as_str()).collect();
        assert_eq!(types, ["task.created"], "events of task {id}");
    }

    let agent = admin
        .agents()
        .register(&RegisterAgent {
            name: "finisher".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut finished = HashSet::new();
    for _ in 0..2 * N {
        let claimed = admin
            .tasks()
            .claim(&ClaimTask {
                agent_id: agent.id,
                ..Default::default()
            })
            .await
            .unwrap()
            .expect("a pending task to claim");
        admin
            .tasks()
            .start(
                claimed.id,
                &StartTask {
                    agent_id: Some(agent.id),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        let request_id = pending
            .iter()
            .position(|&p| p == claimed.id)
            .map(|i| format!("done-{i}"))
            .unwrap_or_else(|| Uuid::new_v4().to_string());
        let done = admin
            .tasks()
            .complete(
                claimed.id,
                &CompleteTask {
                    request_id: Some(request_id),
                    agent_id: Some(agent.id),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(done.state, TaskState::Completed);
        finished.insert(done.id);
    }
    assert_eq!(finished.len(), 2 * N);
}
