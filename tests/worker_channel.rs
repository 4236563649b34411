//! The worker channel: the websocket upgrade of
//! `GET /api/v1/events`, assignment through the claim engine on wake-ups,
//! heartbeats and signals over the socket, offline on close, and close
//! frames on shutdown.

use futures_util::StreamExt;
use orchestrator_client::api::{
    CompleteTask, CreateTask, RegisterWorker, ServerMessage, SignalKind, SignalWorker, StartTask,
    TaskState, WorkerAgentSpec, WorkerMessage,
};
use orchestrator_client::{Client, WorkerChannel};
use orchestrator_tests::TestServer;
use reqwest::StatusCode;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(10);

/// The next frame, within [`WAIT`].
async fn next(channel: &mut WorkerChannel) -> ServerMessage {
    tokio::time::timeout(WAIT, channel.next())
        .await
        .expect("a frame within 10 s")
        .expect("the channel is open")
        .expect("a readable frame")
}

fn task(title: &str) -> CreateTask {
    CreateTask {
        title: title.into(),
        task_type: "code".into(),
        role: Some("ws".into()),
        ..Default::default()
    }
}

#[tokio::test]
async fn worker_channel_assigns_tasks_takes_heartbeats_and_signals_and_goes_offline_on_close() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let registered = admin
        .workers()
        .register(&RegisterWorker {
            name: "ws-box".into(),
            agents: Some(vec![WorkerAgentSpec {
                name: "coder".into(),
                routing_tags: Some(vec!["role:ws".into()]),
                execution_mode: None,
            }]),
            ..Default::default()
        })
        .await
        .unwrap();
    let worker_id = registered.worker_id;
    let agent = &registered.agents[0];
    assert!(registered.websocket_url.ends_with("/api/v1/events"));
    let worker = Client::new(&server.url)
        .unwrap()
        .with_api_key(&registered.worker_api_key);
    let agent_client = Client::new(&server.url)
        .unwrap()
        .with_api_key(&agent.api_key);

    // The upgrade needs a worker key of a registered worker.
    let err = server
        .anonymous()
        .workers()
        .connect(false)
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(401), "{err}");
    let err = agent_client.workers().connect(false).await.unwrap_err();
    assert_eq!(err.status(), Some(403), "{err}");
    let err = admin.workers().connect(false).await.unwrap_err();
    assert_eq!(err.status(), Some(403), "{err}");

    // connection.ready first.
    let mut channel = worker.workers().connect(false).await.unwrap();
    match next(&mut channel).await {
        ServerMessage::ConnectionReady {
            worker_id: id,
            agents,
            heartbeat_interval_seconds,
        } => {
            assert_eq!(id, worker_id);
            assert_eq!(agents, vec![agent.id]);
            assert_eq!(heartbeat_interval_seconds, 30);
        }
        other => panic!("expected connection.ready, got {other:?}"),
    }

    // A plain GET of the same path is still the event list.
    let response = server
        .http()
        .get(server.at("/api/v1/events?type=worker.registered"))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["data"][0]["entity_id"], worker_id.to_string());

    // A routable task is claimed for the agent and pushed.
    let first = admin.tasks().create(&task("first")).await.unwrap();
    match next(&mut channel).await {
        ServerMessage::TaskAssigned { agent_id, task } => {
            assert_eq!(agent_id, agent.id);
            assert_eq!(task.id, first.id);
            assert_eq!(task.state, TaskState::Claimed);
        }
        other => panic!("expected task.assigned, got {other:?}"),
    }
    let read = admin.tasks().get(first.id).await.unwrap();
    assert_eq!(read.state, TaskState::Claimed);
    assert_eq!(read.assigned_agent_id, Some(agent.id));
    channel
        .send(&WorkerMessage::TaskAssignmentAck { task_id: first.id })
        .await
        .unwrap();

    // worker.heartbeat has the effect of POST /workers/:id/heartbeat.
    channel
        .send(&WorkerMessage::Heartbeat {
            status: Some("online".into()),
            current_task_id: Some(first.id),
            metrics: None,
            containers: None,
        })
        .await
        .unwrap();
    let deadline = Instant::now() + WAIT;
    loop {
        let read = admin.workers().get(worker_id).await.unwrap();
        if read.current_task_id == Some(first.id) {
            assert_eq!(read.status, "online");
            break;
        }
        assert!(Instant::now() < deadline, "the heartbeat was not applied");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // The agent is busy: a second task waits. The signal sent after it
    // arrives first, which it would not if the task had been assigned.
    let second = admin.tasks().create(&task("second")).await.unwrap();
    let sent = admin
        .workers()
        .signal(
            worker_id,
            &SignalWorker {
                signal: SignalKind::Drain,
                task_id: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(sent.worker_id, worker_id);
    match next(&mut channel).await {
        ServerMessage::WorkerSignal { signal, task_id } => {
            assert_eq!(signal, SignalKind::Drain);
            assert_eq!(task_id, None);
        }
        other => panic!("expected worker.signal, got {other:?}"),
    }
    assert_eq!(
        admin.tasks().get(second.id).await.unwrap().state,
        TaskState::Pending
    );
    channel
        .send(&WorkerMessage::SignalAck {
            signal: SignalKind::Drain,
            task_id: None,
        })
        .await
        .unwrap();
    // cancel_task names its task.
    let err = admin
        .workers()
        .signal(
            worker_id,
            &SignalWorker {
                signal: SignalKind::CancelTask,
                task_id: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(400));

    // Once the first task completes, the second is assigned.
    agent_client
        .tasks()
        .start(first.id, &StartTask::default())
        .await
        .unwrap();
    agent_client
        .tasks()
        .complete(first.id, &CompleteTask::default())
        .await
        .unwrap();
    match next(&mut channel).await {
        ServerMessage::TaskAssigned { agent_id, task } => {
            assert_eq!(agent_id, agent.id);
            assert_eq!(task.id, second.id);
        }
        other => panic!("expected task.assigned, got {other:?}"),
    }

    // Closing the socket marks the worker offline; its task stays claimed.
    channel.close().await.unwrap();
    let deadline = Instant::now() + WAIT;
    loop {
        if admin.workers().get(worker_id).await.unwrap().status == "offline" {
            break;
        }
        assert!(Instant::now() < deadline, "the worker did not go offline");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        admin.tasks().get(second.id).await.unwrap().state,
        TaskState::Claimed
    );
}

#[tokio::test]
async fn worker_channel_gets_a_close_frame_on_shutdown() {
    let mut server = TestServer::start().await;
    let registered = server
        .admin()
        .workers()
        .register(&RegisterWorker {
            name: "ws-stop".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let worker = Client::new(&server.url)
        .unwrap()
        .with_api_key(&registered.worker_api_key);
    let mut channel = worker.workers().connect(true).await.unwrap();
    assert!(matches!(
        next(&mut channel).await,
        ServerMessage::ConnectionReady { agents, .. } if agents.is_empty()
    ));
    tokio::time::timeout(WAIT, server.stop())
        .await
        .expect("shutdown does not hang on an open worker channel");
    let end = tokio::time::timeout(WAIT, channel.next())
        .await
        .expect("the socket closes on shutdown");
    assert!(
        end.is_none(),
        "expected the end of the channel, got {end:?}"
    );
}
