//! Claims under concurrency: one task per claimer, one active task per agent.

use orchestrator_client::Client;
use orchestrator_client::api::{
    ClaimTask, CompleteTask, CreateTask, RegisterWorker, TaskFilter, TaskState, WorkerAgentSpec,
    WorkerNext,
};
use orchestrator_tests::TestServer;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use uuid::Uuid;

async fn create_tasks(admin: &Client, count: usize) -> HashSet<Uuid> {
    let permits = Arc::new(tokio::sync::Semaphore::new(32));
    let mut handles = Vec::new();
    for i in 0..count {
        let admin = admin.clone();
        let permit = permits.clone().acquire_owned().await.unwrap();
        handles.push(tokio::spawn(async move {
            let _permit = permit;
            admin
                .tasks()
                .create(&CreateTask {
                    title: format!("t{i}"),
                    task_type: "code".into(),
                    ..Default::default()
                })
                .await
                .unwrap()
                .id
        }));
    }
    let mut all = HashSet::new();
    for handle in handles {
        all.insert(handle.await.unwrap());
    }
    all
}

/// 32 agents (on 8 workers), each claiming 4 times at once per round (3 by
/// `POST /tasks/claim`, 1 by `POST /workers/:id/next`), over 1,000 tasks:
/// the 4 answers of one agent are always the same task, no task goes to two
/// agents, and every task is claimed and completed once.
#[tokio::test]
async fn thirty_two_agents_claiming_four_at_once_never_hold_two_tasks() {
    const TASKS: usize = 1_000;
    const WORKERS: usize = 8;
    const AGENTS_PER_WORKER: usize = 4;
    const CONCURRENT: usize = 4;
    let server = TestServer::start_with(|config| config.core.max_connections = 16).await;
    let admin = server.admin();
    let all = create_tasks(&admin, TASKS).await;
    assert_eq!(all.len(), TASKS);

    let mut agents: Vec<(Uuid, Uuid)> = Vec::new();
    for w in 0..WORKERS {
        let worker = admin
            .workers()
            .register(&RegisterWorker {
                name: format!("box-{w}"),
                agents: Some(
                    (0..AGENTS_PER_WORKER)
                        .map(|a| WorkerAgentSpec {
                            name: format!("box-{w}-agent-{a}"),
                            ..Default::default()
                        })
                        .collect(),
                ),
                ..Default::default()
            })
            .await
            .unwrap();
        agents.extend(worker.agents.iter().map(|a| (worker.worker_id, a.id)));
    }

    let mut owner: HashMap<Uuid, Uuid> = HashMap::new();
    let mut completed = HashSet::new();
    loop {
        let mut round = Vec::new();
        for &(worker_id, agent_id) in &agents {
            for i in 0..CONCURRENT {
                let admin = admin.clone();
                round.push(tokio::spawn(async move {
                    let task = if i == 0 {
                        admin
                            .workers()
                            .next(
                                worker_id,
                                &WorkerNext {
                                    agent_id: Some(agent_id),
                                    ..Default::default()
                                },
                            )
                            .await
                    } else {
                        admin
                            .tasks()
                            .claim(&ClaimTask {
                                agent_id,
                                ..Default::default()
                            })
                            .await
                    };
                    (agent_id, task.unwrap())
                }));
            }
        }
        let mut held: HashMap<Uuid, HashSet<Uuid>> = HashMap::new();
        for handle in round {
            let (agent_id, task) = handle.await.unwrap();
            if let Some(task) = task {
                assert_eq!(task.assigned_agent_id, Some(agent_id));
                assert_eq!(task.state, TaskState::Claimed);
                held.entry(agent_id).or_default().insert(task.id);
            }
        }
        if held.is_empty() {
            break;
        }
        for (agent_id, tasks) in &held {
            assert_eq!(
                tasks.len(),
                1,
                "agent {agent_id} holds {} tasks at once",
                tasks.len()
            );
            for task in tasks {
                let previous = owner.insert(*task, *agent_id);
                assert!(
                    previous.is_none_or(|p| p == *agent_id),
                    "task {task} went to two agents"
                );
            }
        }
        let mut completes = Vec::new();
        for (agent_id, tasks) in held {
            let task_id = *tasks.iter().next().unwrap();
            let admin = admin.clone();
            completes.push(tokio::spawn(async move {
                admin
                    .tasks()
                    .complete(
                        task_id,
                        &CompleteTask {
                            agent_id: Some(agent_id),
                            ..Default::default()
                        },
                    )
                    .await
                    .unwrap()
                    .id
            }));
        }
        for handle in completes {
            assert!(completed.insert(handle.await.unwrap()));
        }
    }
    assert_eq!(completed, all, "every task claimed and completed once");
    let left = admin
        .tasks()
        .list(
            &TaskFilter {
                state: Some(TaskState::Pending),
                ..Default::default()
            },
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(left.total, 0, "no task lost");
}

/// Sixteen concurrent refreshes of one refresh token: exactly one wins (the
/// token rotates once); the rest are refused.
#[tokio::test]
async fn concurrent_refreshes_of_one_token_have_exactly_one_winner() {
    let server = TestServer::start().await;
    let session = server.admin_session().await;
    let refresh = session.refresh_token.clone().expect("a refresh token");
    let mut handles = Vec::new();
    for _ in 0..16 {
        let client = server.anonymous();
        let refresh = refresh.clone();
        handles.push(tokio::spawn(async move {
            client.auth().refresh(&refresh).await
        }));
    }
    let mut winners = 0;
    for handle in handles {
        match handle.await.unwrap() {
            Ok(_) => winners += 1,
            Err(e) => assert_eq!(e.status(), Some(401), "{e}"),
        }
    }
    assert_eq!(winners, 1, "exactly one refresh wins");
}

/// Concurrent completes of one task: without `request_id` exactly one
/// succeeds and the rest are refused as a state conflict; with one shared
/// `request_id` every answer is the same completed task.
#[tokio::test]
async fn concurrent_completes_of_one_task_complete_it_once() {
    let server = TestServer::start().await;
    let admin = server.admin();
    for request_id in [None, Some("complete-once".to_owned())] {
        let task = create_tasks(&admin, 1).await.into_iter().next().unwrap();
        let agent = admin
            .agents()
            .register(&orchestrator_client::api::RegisterAgent {
                name: "finisher".into(),
                ..Default::default()
            })
            .await
            .unwrap()
            .id;
        let claimed = admin
            .tasks()
            .claim(&ClaimTask {
                agent_id: agent,
                ..Default::default()
            })
            .await
            .unwrap()
            .unwrap();
        assert_eq!(claimed.id, task);
        let mut handles = Vec::new();
        for _ in 0..12 {
            let admin = admin.clone();
            let request = CompleteTask {
                agent_id: Some(agent),
                request_id: request_id.clone(),
                ..Default::default()
            };
            handles.push(tokio::spawn(async move {
                admin.tasks().complete(task, &request).await
            }));
        }
        let mut ok = Vec::new();
        for handle in handles {
            match handle.await.unwrap() {
                Ok(done) => ok.push(done),
                Err(e) => {
                    assert!(request_id.is_none(), "a replay never fails: {e}");
                    assert_eq!(e.status(), Some(409), "{e}");
                }
            }
        }
        match request_id {
            None => assert_eq!(ok.len(), 1, "exactly one complete wins"),
            Some(_) => {
                assert_eq!(ok.len(), 12);
                assert!(ok.iter().all(
                    |t| t.state == TaskState::Completed && t.completed_at == ok[0].completed_at
                ));
            }
        }
        let events = admin.tasks().get(task).await.unwrap();
        assert_eq!(events.state, TaskState::Completed);
    }
}
