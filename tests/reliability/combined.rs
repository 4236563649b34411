//! Combined statements (issue 14, `store::combine`): the starts, and the
//! completions, that wait for the writer at the same time run as one
//! `UPDATE ... FROM` a list. Each request must still move its own task
//! only, with its own values, exactly once, and every request that the
//! statement does not serve (a repeat, someone else's task) must get the
//! answer it would get alone.

use super::group_commit::pending_tasks;
use orchestrator_client::Client;
use orchestrator_client::api::{
    ClaimTask, CompleteTask, EventFilter, RegisterAgent, StartTask, TaskState,
};
use orchestrator_tests::TestServer;
use serde_json::{Value, json};
use uuid::Uuid;

/// Agents, each holding one claimed task: `(agent, task)`.
async fn holders(admin: &Client, n: usize) -> Vec<(Uuid, Uuid)> {
    let mut held = Vec::new();
    pending_tasks(admin, n).await;
    for i in 0..n {
        let agent = admin
            .agents()
            .register(&RegisterAgent {
                name: format!("holder-{i}"),
                ..Default::default()
            })
            .await
            .unwrap()
            .id;
        let task = admin
            .tasks()
            .claim(&ClaimTask {
                agent_id: agent,
                ..Default::default()
            })
            .await
            .unwrap()
            .expect("a pending task for each agent");
        held.push((agent, task.id));
    }
    held
}

fn start_as(agent: Uuid) -> StartTask {
    StartTask {
        agent_id: Some(agent),
        ..Default::default()
    }
}

/// Task `i`'s completion: its own output, metrics on even tasks, and a
/// failed verification on every third (→ `output_pending_assessment`).
fn completion(agent: Uuid, i: usize) -> CompleteTask {
    CompleteTask {
        agent_id: Some(agent),
        output: Some(json!({ "n": i })),
        metrics: i.is_multiple_of(2).then(|| json!({ "tokens": i })),
        git_info: i
            .is_multiple_of(5)
            .then(|| json!({ "sha": format!("c{i}") })),
        verification: i.is_multiple_of(3).then(|| json!({ "passed": false })),
        ..Default::default()
    }
}

/// Every task is started twice by its holder and once by another agent,
/// all at once; then completed twice by its holder and once by another
/// agent, all at once. The holder's two starts both answer 200 with the task
/// in progress (the second is a repeat); the other agent's answers 403; of
/// the holder's two completions one answers 200 and the repeat 409, and
/// the other agent's is refused (403, or 409 once the task is done); each
/// task ends
/// with its own output, metrics, git info and state, and one event per move.
#[tokio::test]
async fn combined_moves_each_change_their_own_task_once() {
    const N: usize = 40;
    let server = TestServer::start().await;
    let admin = server.admin();
    let held = holders(&admin, N).await;

    let mut starts = Vec::new();
    for (i, &(agent, task)) in held.iter().enumerate() {
        let stranger = held[(i + 1) % N].0;
        for who in [agent, stranger, agent] {
            let client = admin.clone();
            starts.push(tokio::spawn(async move {
                (
                    who == agent,
                    client.tasks().start(task, &start_as(who)).await,
                )
            }));
        }
    }
    for handle in starts {
        match handle.await.unwrap() {
            (true, answer) => {
                let task = answer.expect("the holder's start (or its repeat) answers the task");
                assert_eq!(task.state, TaskState::InProgress);
            }
            (false, answer) => {
                let refused = answer.expect_err("another agent's start is refused");
                assert_eq!(refused.status(), Some(403), "{refused}");
            }
        }
    }

    let mut completions = Vec::new();
    for (i, &(agent, task)) in held.iter().enumerate() {
        let stranger = held[(i + 1) % N].0;
        for who in [agent, stranger, agent] {
            let client = admin.clone();
            completions.push(tokio::spawn(async move {
                let answer = client.tasks().complete(task, &completion(who, i)).await;
                (i, who == agent, answer)
            }));
        }
    }
    let mut completed = vec![0; N];
    for handle in completions {
        match handle.await.unwrap() {
            (i, true, Ok(task)) => {
                assert_eq!(task.id, held[i].1);
                assert_eq!(
                    task.output,
                    Some(json!({ "n": i })),
                    "the answer is task {i}'s"
                );
                completed[i] += 1;
            }
            (_, true, Err(refused)) => assert_eq!(refused.status(), Some(409), "{refused}"),
            (_, false, answer) => {
                // 403 while the task is in progress; once the holder's
                // completion is in, the state answers first (409).
                let refused = answer.expect_err("another agent's completion is refused");
                assert!(matches!(refused.status(), Some(403 | 409)), "{refused}");
            }
        }
    }
    assert!(
        completed.iter().all(|&n| n == 1),
        "each task completed exactly once: {completed:?}"
    );

    for (i, &(agent, id)) in held.iter().enumerate() {
        let task = admin.tasks().get(id).await.unwrap();
        let expected = if i.is_multiple_of(3) {
            TaskState::OutputPendingAssessment
        } else {
            TaskState::Completed
        };
        assert_eq!(task.state, expected, "task {i}");
        assert_eq!(task.assigned_agent_id, Some(agent), "task {i}");
        let sent = completion(agent, i);
        assert_eq!(task.output, sent.output, "task {i}");
        assert_eq!(task.metrics, sent.metrics, "task {i}");
        assert_eq!(task.git_info, sent.git_info, "task {i}");
        assert_eq!(task.verification, sent.verification, "task {i}");
        assert!(task.started_at.is_some(), "task {i}");
        assert_eq!(
            task.completed_at.is_some(),
            expected == TaskState::Completed,
            "task {i}"
        );
        let events = admin
            .events()
            .list(&EventFilter {
                entity_id: Some(id),
                ..Default::default()
            })
            .await
            .unwrap();
        let mut moves: Vec<&str> = events
            .items
            .iter()
            .filter_map(|e| e.data.get("to_state").and_then(Value::as_str))
            .collect();
        moves.sort_unstable();
        let mut want = vec!["pending", "claimed", "in_progress", expected.as_str()];
        want.sort_unstable();
        assert_eq!(moves, want, "the state changes of task {i}");
    }

    // The moves above were combined where the store combines (PostgreSQL):
    // some statement served several requests. SQLite runs each alone.
    let statements = server.metric("orch_db_combined_statements_total").await;
    let served = server.metric("orch_db_combined_requests_total").await;
    let (statements, served) = (statements.unwrap_or(-1.0), served.unwrap_or(-1.0));
    if orchestrator_tests::backend() == "postgres" {
        // At most every start and completion that changed a task (2 × N).
        assert!(
            statements >= 1.0 && served > statements && served <= 2.0 * N as f64,
            "{statements} combined statements served {served} requests"
        );
    } else {
        assert_eq!((statements, served), (0.0, 0.0));
    }
}
