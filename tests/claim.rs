//! The claim engine: routing tags, priority order, preferred assignee, one
//! active task per agent, 204, and 64 concurrent claimers over 2,000 tasks.

use orchestrator_client::Client;
use orchestrator_client::TaskOperation;
use orchestrator_client::api::{
    ClaimTask, CreateTask, ExecutionMode, Priority, RegisterAgent, StartTask, TaskAction, TaskKind,
    TaskState,
};
use orchestrator_tests::TestServer;
use reqwest::StatusCode;
use serde_json::json;
use std::collections::HashSet;
use std::sync::Arc;
use uuid::Uuid;

fn task(title: &str) -> CreateTask {
    CreateTask {
        title: title.into(),
        task_type: "code".into(),
        ..Default::default()
    }
}

async fn agent(client: &Client, name: &str, tags: &[&str], mode: ExecutionMode) -> Uuid {
    client
        .agents()
        .register(&RegisterAgent {
            name: name.into(),
            routing_tags: Some(tags.iter().map(|t| t.to_string()).collect()),
            execution_mode: Some(mode),
            ..Default::default()
        })
        .await
        .unwrap()
        .id
}

fn claim(agent_id: Uuid) -> ClaimTask {
    ClaimTask {
        agent_id,
        ..Default::default()
    }
}

#[tokio::test]
async fn routing_tags_priority_order_preferred_assignee_and_one_active_task() {
    let server = TestServer::start().await;
    let admin = server.admin();

    // Nothing to claim: 204 with an empty body.
    let idle = agent(&admin, "idle", &[], ExecutionMode::Specialist).await;
    let response = server
        .http()
        .post(server.at("/api/v1/tasks/claim"))
        .bearer_auth(&server.admin_key)
        .json(&json!({ "agent_id": idle }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert!(response.bytes().await.unwrap().is_empty());

    // Tags are normalised on registration; orchestrator agents get `orchestrator`.
    let dev = admin
        .agents()
        .register(&RegisterAgent {
            name: "dev".into(),
            routing_tags: Some(vec![" Role:Dev ".into(), "role:dev".into(), "gpu".into()]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(dev.routing_tags, vec!["gpu", "role:dev"]);
    assert_eq!(dev.status, "active");
    let orch = agent(&admin, "orch", &[], ExecutionMode::Orchestrator).await;
    assert_eq!(
        admin.agents().get(orch).await.unwrap().routing_tags,
        vec!["orchestrator"]
    );

    // A role task needs role:<role>; an orchestrator task needs `orchestrator`.
    let reviewer_task = admin
        .tasks()
        .create(&CreateTask {
            role: Some("reviewer".into()),
            ..task("review")
        })
        .await
        .unwrap();
    assert_eq!(reviewer_task.required_tags, vec!["role:reviewer"]);
    let orch_task = admin
        .tasks()
        .create(&CreateTask {
            task_kind: Some(TaskKind::Orchestrator),
            ..task("plan")
        })
        .await
        .unwrap();
    assert!(admin.tasks().claim(&claim(dev.id)).await.unwrap().is_none());
    // Priority order among what dev may take: critical, high, normal (oldest first), low.
    let low = admin
        .tasks()
        .create(&CreateTask {
            priority: Some(Priority::Low),
            role: Some("dev".into()),
            ..task("low")
        })
        .await
        .unwrap();
    let normal1 = admin
        .tasks()
        .create(&CreateTask {
            role: Some("dev".into()),
            ..task("normal 1")
        })
        .await
        .unwrap();
    let normal2 = admin.tasks().create(&task("normal 2")).await.unwrap();
    let high = admin
        .tasks()
        .create(&CreateTask {
            priority: Some(Priority::High),
            ..task("high")
        })
        .await
        .unwrap();
    let critical = admin
        .tasks()
        .create(&CreateTask {
            priority: Some(Priority::Critical),
            role: Some("dev".into()),
            ..task("critical")
        })
        .await
        .unwrap();
    // An unsupported priority is rejected at create (422, schema).
    let bad = server
        .http()
        .post(server.at("/api/v1/tasks"))
        .bearer_auth(&server.admin_key)
        .json(&json!({ "title": "x", "type": "code", "priority": "urgent" }))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);

    let mut order = Vec::new();
    for _ in 0..5 {
        let claimed = admin
            .tasks()
            .claim(&claim(dev.id))
            .await
            .unwrap()
            .expect("a task");
        assert_eq!(claimed.state.as_str(), "claimed");
        assert_eq!(claimed.assigned_agent_id, Some(dev.id));
        // One active task per agent: claiming again returns the same task.
        let again = admin.tasks().claim(&claim(dev.id)).await.unwrap().unwrap();
        assert_eq!(again.id, claimed.id);
        order.push(claimed.id);
        admin
            .tasks()
            .act(claimed.id, TaskOperation::Skip, &TaskAction::default())
            .await
            .unwrap_err();
        let done = server
            .client(&server.admin_key)
            .tasks()
            .complete(
                claimed.id,
                &orchestrator_client::api::CompleteTask {
                    agent_id: Some(dev.id),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(done.state.as_str(), "completed");
    }
    assert_eq!(
        order,
        vec![critical.id, high.id, normal1.id, normal2.id, low.id]
    );
    assert!(admin.tasks().claim(&claim(dev.id)).await.unwrap().is_none());

    // The orchestrator agent takes the orchestrator task, never the reviewer one.
    let got = admin.tasks().claim(&claim(orch)).await.unwrap().unwrap();
    assert_eq!(got.id, orch_task.id);
    assert!(got.is_orchestrator_task);

    // Preferred assignee: reassign to `other`; dev may not claim it, other gets it first.
    let other = agent(
        &admin,
        "other",
        &["role:reviewer"],
        ExecutionMode::Specialist,
    )
    .await;
    let plain = admin.tasks().create(&task("plain, older")).await.unwrap();
    admin
        .tasks()
        .act(
            reviewer_task.id,
            TaskOperation::Reassign,
            &TaskAction {
                reason: Some("give it to other".into()),
                preferred_agent_id: Some(other),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let first = admin.tasks().claim(&claim(other)).await.unwrap().unwrap();
    assert_eq!(
        first.id, reviewer_task.id,
        "the preferred task comes before older ones"
    );
    let second = admin.tasks().claim(&claim(dev.id)).await.unwrap().unwrap();
    assert_eq!(second.id, plain.id);

    // Agent status is `busy` while it holds a task.
    assert_eq!(
        admin.agents().heartbeat(dev.id).await.unwrap().status,
        "busy"
    );
}

#[tokio::test]
async fn sixty_four_claimers_over_two_thousand_tasks_claim_each_exactly_once() {
    let server = TestServer::start_with(|config| config.core.max_connections = 16).await;
    claimers_claim_each_exactly_once(server, false).await;
}

/// The same on two writer connections, each task started before it is
/// completed: on PostgreSQL the combined claims then run on one writer and
/// the combined starts and completions on the other, in batches open at
/// the same time.
#[tokio::test]
async fn sixty_four_claimers_on_two_writers_claim_start_and_complete_each_exactly_once() {
    let server = TestServer::start_with(|config| {
        config.core.max_connections = 16;
        config.core.db_writers = 2;
    })
    .await;
    claimers_claim_each_exactly_once(server, true).await;
}

/// 64 agents claim (and start, with `start`) and complete 2,000 tasks at
/// once: each task is claimed exactly once, and none is left pending.
async fn claimers_claim_each_exactly_once(server: TestServer, start: bool) {
    const TASKS: usize = 2_000;
    const CLAIMERS: usize = 64;
    let admin = server.admin();

    let created = Arc::new(tokio::sync::Semaphore::new(32));
    let mut handles = Vec::new();
    for i in 0..TASKS {
        let admin = admin.clone();
        let permit = created.clone().acquire_owned().await.unwrap();
        handles.push(tokio::spawn(async move {
            let _permit = permit;
            admin
                .tasks()
                .create(&task(&format!("t{i}")))
                .await
                .unwrap()
                .id
        }));
    }
    let mut all = HashSet::new();
    for handle in handles {
        all.insert(handle.await.unwrap());
    }
    assert_eq!(all.len(), TASKS);

    let mut agents = Vec::new();
    for i in 0..CLAIMERS {
        agents.push(
            agent(
                &admin,
                &format!("claimer-{i}"),
                &[],
                ExecutionMode::Specialist,
            )
            .await,
        );
    }
    let mut claimers = Vec::new();
    for agent_id in agents {
        let admin = admin.clone();
        claimers.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            loop {
                match admin.tasks().claim(&claim(agent_id)).await.unwrap() {
                    None => break,
                    Some(task) => {
                        assert_eq!(task.assigned_agent_id, Some(agent_id));
                        mine.push(task.id);
                        if start {
                            let request = StartTask {
                                agent_id: Some(agent_id),
                                ..Default::default()
                            };
                            let started = admin.tasks().start(task.id, &request).await.unwrap();
                            assert_eq!(started.state, TaskState::InProgress);
                        }
                        admin
                            .tasks()
                            .complete(
                                task.id,
                                &orchestrator_client::api::CompleteTask {
                                    agent_id: Some(agent_id),
                                    ..Default::default()
                                },
                            )
                            .await
                            .unwrap();
                    }
                }
            }
            mine
        }));
    }
    let mut claimed = Vec::new();
    for claimer in claimers {
        claimed.extend(claimer.await.unwrap());
    }
    let unique: HashSet<Uuid> = claimed.iter().copied().collect();
    assert_eq!(claimed.len(), TASKS, "every task claimed once, none twice");
    assert_eq!(unique, all);
    let left = admin
        .tasks()
        .list(
            &orchestrator_client::api::TaskFilter {
                state: Some(orchestrator_client::api::TaskState::Pending),
                ..Default::default()
            },
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(left.total, 0);
}
