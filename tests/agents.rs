//! Agents and workers: registration with keys, heartbeats, reads, worker
//! `next`, and the liveness monitor releasing a silent agent's task.

use orchestrator_client::Client;
use orchestrator_client::api::{
    ClaimTask, CreateTask, ExecutionMode, RegisterAgent, RegisterWorker, TaskState,
    WorkerAgentSpec, WorkerHeartbeat, WorkerNext,
};
use orchestrator_tests::TestServer;
use reqwest::StatusCode;
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::test]
async fn agents_register_heartbeat_and_read_and_workers_claim_for_their_agents() {
    let server = TestServer::start().await;
    let admin = server.admin();

    // Limits: heartbeat 5..=3600, 400 outside; default 60.
    for bad in [4, 3601] {
        let err = admin
            .agents()
            .register(&RegisterAgent {
                name: "x".into(),
                heartbeat_interval_seconds: Some(bad),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(err.status(), Some(400));
    }
    let agent = admin
        .agents()
        .register(&RegisterAgent {
            name: "runner".into(),
            execution_mode: Some(ExecutionMode::Hybrid),
            issue_api_key: Some(true),
            metadata: Some(json!({ "team": "a" })),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(agent.heartbeat_interval_seconds, 60);
    assert_eq!(agent.routing_tags, vec!["orchestrator"]);
    assert_eq!(agent.metadata["execution_mode"], "hybrid");
    assert_eq!(agent.metadata["protocol"], "rest");
    let key = agent.api_key.clone().unwrap();
    assert!(key.starts_with("orch_agent_"));
    let own = Client::new(&server.url).unwrap().with_api_key(key);
    let me = own.auth().me().await.unwrap();
    assert_eq!(
        (me.owner_type.as_str(), me.owner_id),
        ("agent", Some(agent.id))
    );
    let ack = own.agents().heartbeat(agent.id).await.unwrap();
    assert!(ack.ack);
    assert_eq!(ack.status, "active");
    assert!(
        own.agents().get(agent.id).await.unwrap().api_key.is_none(),
        "the key is shown once"
    );
    // Registration issues a key unless asked not to (the contract's other
    // implementation does, and its SDK relies on it).
    let other = admin
        .agents()
        .register(&RegisterAgent {
            name: "other".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(
        other
            .api_key
            .as_deref()
            .is_some_and(|k| k.starts_with("orch_agent_")),
        "a key by default: {other:?}"
    );
    let keyless = admin
        .agents()
        .register(&RegisterAgent {
            name: "keyless".into(),
            issue_api_key: Some(false),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(keyless.api_key.is_none(), "issue_api_key: false opts out");
    assert_eq!(
        own.agents().heartbeat(other.id).await.unwrap_err().status(),
        Some(403)
    );
    let list = admin.agents().list(Default::default()).await.unwrap();
    assert_eq!(list.total, 3);
    assert!(list.items.iter().any(|a| a.id == other.id));

    // Workers: an agent key cannot register one; a worker key can.
    let worker_key = admin
        .api_keys()
        .create(&orchestrator_tests::key_request(
            orchestrator_client::api::Scope::Worker,
            "w",
        ))
        .await
        .unwrap()
        .api_key;
    let worker_client = Client::new(&server.url).unwrap().with_api_key(worker_key);
    let request = RegisterWorker {
        name: "box-1".into(),
        routing_tags: Some(vec!["Linux".into()]),
        agents: Some(vec![
            WorkerAgentSpec {
                name: "coder".into(),
                routing_tags: Some(vec!["role:dev".into()]),
                execution_mode: None,
            },
            WorkerAgentSpec {
                name: "planner".into(),
                routing_tags: None,
                execution_mode: Some(ExecutionMode::Orchestrator),
            },
        ]),
        ..Default::default()
    };
    assert_eq!(
        own.workers().register(&request).await.unwrap_err().status(),
        Some(403)
    );
    let worker = worker_client.workers().register(&request).await.unwrap();
    assert_eq!(worker.heartbeat_interval_seconds, 30);
    assert_eq!(
        worker.websocket_url,
        format!(
            "ws://{}/api/v1/events",
            server.url.trim_start_matches("http://")
        )
    );
    assert_eq!(worker.agents.len(), 2);
    assert_eq!(worker.agents[0].routing_tags, vec!["linux", "role:dev"]);
    assert_eq!(worker.agents[1].routing_tags, vec!["linux", "orchestrator"]);
    assert!(worker.worker_api_key.starts_with("orch_worker_"));
    assert!(
        worker
            .agents
            .iter()
            .all(|a| a.api_key.starts_with("orch_agent_"))
    );

    // The worker's own key: heartbeat, next (204, then a task for one of its agents).
    let w = Client::new(&server.url)
        .unwrap()
        .with_api_key(worker.worker_api_key.clone());
    w.workers()
        .heartbeat(
            worker.worker_id,
            &WorkerHeartbeat {
                status: Some("online".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(
        w.workers()
            .next(worker.worker_id, &WorkerNext::default())
            .await
            .unwrap()
            .is_none()
    );
    let task = admin
        .tasks()
        .create(&CreateTask {
            title: "code".into(),
            task_type: "code".into(),
            role: Some("dev".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let got = w
        .workers()
        .next(worker.worker_id, &WorkerNext::default())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got.id, task.id);
    assert_eq!(got.assigned_agent_id, Some(worker.agents[0].id));
    assert_eq!(got.assigned_worker_id, Some(worker.worker_id));
    // The worker may complete its agent's task.
    w.tasks()
        .complete(got.id, &Default::default())
        .await
        .unwrap();
    let read = admin.workers().get(worker.worker_id).await.unwrap();
    assert_eq!(read.status, "online");
    let mut expected = vec![worker.agents[0].id, worker.agents[1].id];
    let mut agents = read.agents.clone();
    expected.sort();
    agents.sort();
    assert_eq!(agents, expected);
    assert_eq!(
        admin
            .workers()
            .list(Default::default())
            .await
            .unwrap()
            .total,
        1
    );
    // Another worker's key is refused on this worker.
    let second = worker_client
        .workers()
        .register(&RegisterWorker {
            name: "box-2".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let w2 = Client::new(&server.url)
        .unwrap()
        .with_api_key(second.worker_api_key);
    let response = server
        .http()
        .post(server.at(&format!("/api/v1/workers/{}/next", worker.worker_id)))
        .bearer_auth(w2.base_url().len().to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        w2.workers()
            .next(worker.worker_id, &WorkerNext::default())
            .await
            .unwrap_err()
            .status(),
        Some(403)
    );
}

#[tokio::test]
async fn liveness_marks_a_silent_agent_inactive_and_releases_its_task() {
    let server = TestServer::start_with(|config| {
        config.core.liveness_interval = Duration::from_millis(200);
        config.core.liveness_grace = Duration::from_millis(500);
    })
    .await;
    let admin = server.admin();
    let agent = admin
        .agents()
        .register(&RegisterAgent {
            name: "flaky".into(),
            heartbeat_interval_seconds: Some(5),
            ..Default::default()
        })
        .await
        .unwrap();
    let healthy = admin
        .agents()
        .register(&RegisterAgent {
            name: "healthy".into(),
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

    // The healthy agent keeps beating; the flaky one goes silent for 2 x 5 s + grace.
    let deadline = Instant::now() + Duration::from_secs(25);
    let released = loop {
        admin.agents().heartbeat(healthy.id).await.unwrap();
        let now = admin.tasks().get(task.id).await.unwrap();
        if now.state == TaskState::Pending {
            break now;
        }
        assert!(Instant::now() < deadline, "the task was never released");
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(released.retry_count, 1);
    assert!(released.assigned_agent_id.is_none());
    assert_eq!(released.error.as_ref().unwrap()["category"], "agent_lost");
    assert_eq!(
        admin.agents().get(agent.id).await.unwrap().status,
        "inactive"
    );
    assert_eq!(
        admin.agents().get(healthy.id).await.unwrap().status,
        "active"
    );

    // Someone else takes it; a heartbeat revives the silent agent.
    let again = admin
        .tasks()
        .claim(&ClaimTask {
            agent_id: healthy.id,
            ..Default::default()
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again.id, task.id);
    assert_eq!(
        admin.agents().heartbeat(agent.id).await.unwrap().status,
        "active"
    );
}
