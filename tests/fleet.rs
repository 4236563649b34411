//! Fleet and containers: heartbeats (HTTP and the worker channel) carry a
//! strictly typed `containers` list, the latest report per worker is kept,
//! and the admin views show workers, live containers and every container.

use futures_util::StreamExt;
use orchestrator_client::Client;
use orchestrator_client::api::environments::CreateExecutionEnvironment;
use orchestrator_client::api::fleet::{ContainerFilter, ContainerReport, ContainerState};
use orchestrator_client::api::{
    CreateTask, PageRequest, RegisterWorker, Scope, ServerMessage, Timestamp, WorkerAgentSpec,
    WorkerHeartbeat, WorkerMessage,
};
use orchestrator_tests::{TestServer, key_request};
use reqwest::StatusCode;
use serde_json::json;
use std::time::{Duration, Instant};

fn report(id: &str, state: ContainerState, task_id: Option<uuid::Uuid>) -> ContainerReport {
    ContainerReport {
        id: id.into(),
        name: format!("orch-{id}"),
        image: "debian:bookworm-slim".into(),
        state,
        task_id,
        started_at: Timestamp::now(),
        cpu_percent: Some(12.5),
        memory_bytes: Some(64 << 20),
    }
}

async fn register(server: &TestServer, name: &str, tags: &[&str]) -> (uuid::Uuid, Client) {
    let registered = server
        .admin()
        .workers()
        .register(&RegisterWorker {
            name: name.into(),
            routing_tags: Some(tags.iter().map(|t| (*t).to_owned()).collect()),
            agents: Some(vec![WorkerAgentSpec {
                name: format!("{name}-agent"),
                routing_tags: Some(vec!["role:fleet".into()]),
                execution_mode: None,
            }]),
            ..Default::default()
        })
        .await
        .unwrap();
    let client = Client::new(&server.url)
        .unwrap()
        .with_api_key(&registered.worker_api_key);
    (registered.worker_id, client)
}

#[tokio::test]
async fn heartbeats_report_containers_and_the_fleet_views_show_them() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let env = admin
        .environments()
        .create(&CreateExecutionEnvironment {
            name: "Runner".into(),
            image: "debian:bookworm-slim".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let (worker_id, worker) = register(&server, "box-a", &["env:runner"]).await;
    let task = admin
        .tasks()
        .create(&CreateTask {
            title: "t".into(),
            task_type: "code".into(),
            role: Some("fleet".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    worker
        .workers()
        .heartbeat(
            worker_id,
            &WorkerHeartbeat {
                containers: Some(vec![
                    report("c1", ContainerState::Running, Some(task.id)),
                    report("c2", ContainerState::Exited, None),
                ]),
                ..Default::default()
            },
        )
        .await
        .unwrap();

    let fleet = admin.fleet().workers().await.unwrap();
    assert_eq!(fleet.len(), 1);
    let box_a = &fleet[0];
    assert_eq!(
        (box_a.worker_id, box_a.status.as_str()),
        (worker_id, "online")
    );
    assert_eq!(box_a.running_containers, 1);
    assert_eq!(box_a.agents.len(), 1);
    assert_eq!(box_a.agents[0].name, "box-a-agent");
    assert_eq!(box_a.environments.len(), 1);
    assert_eq!(box_a.environments[0].id, env.id);

    let live = admin.fleet().live_containers().await.unwrap();
    let ids: Vec<&str> = live.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(live.len(), 2, "{ids:?}");
    let running = admin
        .fleet()
        .containers(
            &ContainerFilter {
                state: Some(ContainerState::Running),
                ..Default::default()
            },
            PageRequest::default(),
        )
        .await
        .unwrap();
    assert_eq!(running.total, 1);
    assert_eq!(running.items[0].task_id, Some(task.id));
    assert_eq!(running.items[0].worker_name, "box-a");
    assert_eq!(running.items[0].memory_bytes, Some(64 << 20));
    let by_task = admin
        .fleet()
        .containers(
            &ContainerFilter {
                task_id: Some(task.id),
                worker_id: Some(worker_id),
                ..Default::default()
            },
            PageRequest::default(),
        )
        .await
        .unwrap();
    assert_eq!(by_task.total, 1);

    // The latest report replaces the previous one.
    worker
        .workers()
        .heartbeat(
            worker_id,
            &WorkerHeartbeat {
                containers: Some(vec![report("c3", ContainerState::Running, None)]),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    // A heartbeat without the field keeps it.
    worker
        .workers()
        .heartbeat(worker_id, &WorkerHeartbeat::default())
        .await
        .unwrap();
    let all = admin
        .fleet()
        .containers(&ContainerFilter::default(), PageRequest::new(1, 1))
        .await
        .unwrap();
    assert_eq!((all.total, all.items[0].id.as_str()), (1, "c3"));

    // Over the worker channel; closing it makes the worker offline: its
    // containers leave the live view but stay in /containers.
    let (other_id, other) = register(&server, "box-b", &[]).await;
    let mut channel = other.workers().connect(false).await.unwrap();
    let ready = tokio::time::timeout(Duration::from_secs(10), channel.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(matches!(ready, ServerMessage::ConnectionReady { .. }));
    channel
        .send(&WorkerMessage::Heartbeat {
            status: None,
            current_task_id: None,
            metrics: None,
            containers: Some(vec![report("pid:42", ContainerState::Running, None)]),
        })
        .await
        .unwrap();
    let filter = ContainerFilter {
        worker_id: Some(other_id),
        ..Default::default()
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while admin
        .fleet()
        .containers(&filter, PageRequest::default())
        .await
        .unwrap()
        .total
        == 0
    {
        assert!(
            Instant::now() < deadline,
            "the channel heartbeat was not applied"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(admin.fleet().live_containers().await.unwrap().len(), 2);
    channel.close().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while admin.fleet().live_containers().await.unwrap().len() != 1 {
        assert!(Instant::now() < deadline, "offline worker still live");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let stored = admin
        .fleet()
        .containers(&filter, PageRequest::default())
        .await
        .unwrap();
    assert_eq!(stored.items[0].worker_status, "offline");
}

#[tokio::test]
async fn bad_container_reports_are_422_and_change_nothing() {
    let server = TestServer::start().await;
    let (worker_id, _) = register(&server, "box", &[]).await;
    let url = server.at(&format!("/api/v1/workers/{worker_id}/heartbeat"));
    let good = json!({"id": "c1", "name": "n", "image": "i", "state": "running", "task_id": null,
                      "started_at": "2026-11-21T19:00:00Z"});
    for (container, field) in [
        (json!({"state": "melting"}), "containers[0].state"),
        (json!({"extra": 1}), "containers[0].extra"),
        (
            json!({"started_at": "yesterday"}),
            "containers[0].started_at",
        ),
        (
            json!({"memory_bytes": "lots"}),
            "containers[0].memory_bytes",
        ),
    ] {
        let mut body = good.clone();
        body.as_object_mut()
            .unwrap()
            .extend(container.as_object().unwrap().clone());
        let response = server
            .http()
            .post(&url)
            .bearer_auth(&server.admin_key)
            .json(&json!({"containers": [body]}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
        let answer: serde_json::Value = response.json().await.unwrap();
        assert!(
            answer["error"]["details"]["issues"]["fieldErrors"][field].is_array(),
            "{field}: {answer}"
        );
    }
    let response = server
        .http()
        .post(&url)
        .bearer_auth(&server.admin_key)
        .json(&json!({"containers": [good.clone(), good]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST, "duplicate ids");
    let all = server
        .admin()
        .fleet()
        .containers(&ContainerFilter::default(), PageRequest::default())
        .await
        .unwrap();
    assert_eq!(all.total, 0);
    let response = server
        .http()
        .get(server.at("/api/v1/containers?state=melting"))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn agent_and_worker_keys_get_403_on_fleet_routes() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let (_, worker) = register(&server, "box", &[]).await;
    let agent_key = admin
        .api_keys()
        .create(&key_request(Scope::Agent, "a"))
        .await
        .unwrap()
        .api_key;
    let agent = server.client(&agent_key);
    for client in [&worker, &agent] {
        assert_eq!(
            client.fleet().workers().await.unwrap_err().status(),
            Some(403)
        );
        assert_eq!(
            client.fleet().live_containers().await.unwrap_err().status(),
            Some(403)
        );
        assert_eq!(
            client
                .fleet()
                .containers(&ContainerFilter::default(), PageRequest::default())
                .await
                .unwrap_err()
                .status(),
            Some(403)
        );
    }
}
