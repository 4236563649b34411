//! Wake-ups: a long poll held back by a limit returns within 1 s of the
//! blocker's completion, of the rate window's move, and of a delayed task's
//! `run_at`; `POST /workers/:id/next` long-polls the same way.

use super::{agents, claim, claim_waiting, create_many, finish};
use orchestrator_client::api::{CreateTask, RegisterWorker, WorkerAgentSpec, WorkerNext};
use orchestrator_tests::TestServer;
use std::time::{Duration, Instant};

/// The spec's bound for a wake-up.
const WITHIN: Duration = Duration::from_secs(1);

#[tokio::test]
async fn a_long_poll_gets_the_task_a_completion_frees() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let ids = create_many(&admin, 2, Some("one"), None).await;
    let agents = agents(&admin, "p", 2).await;
    // The two creates ran concurrently, so either may be the older: the
    // claim takes that one, and the waiter must get the other.
    let first = claim(&admin, agents[0]).await.unwrap();
    assert!(ids.contains(&first.id), "a task of the key is claimed");
    let other = if first.id == ids[0] { ids[1] } else { ids[0] };
    let waiter = {
        let admin = admin.clone();
        let agent = agents[1];
        tokio::spawn(async move {
            let task = claim_waiting(&admin, agent, 25).await;
            (task, Instant::now())
        })
    };
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        !waiter.is_finished(),
        "the poll waits while the key is full"
    );
    finish(&admin, agents[0], first.id).await;
    let freed = Instant::now();
    let (task, answered) = waiter.await.unwrap();
    assert_eq!(task.expect("the freed task").id, other);
    let took = answered.saturating_duration_since(freed);
    assert!(took < WITHIN, "answered {took:?} after the completion");
}

#[tokio::test]
async fn a_long_poll_gets_the_task_when_the_window_moves() {
    let server = TestServer::start().await;
    let admin = server.admin();
    admin.limits().set_rate("slow", 1, 3).await.unwrap();
    create_many(&admin, 2, None, Some("slow")).await;
    let agents = agents(&admin, "m", 2).await;
    let first = claim(&admin, agents[0]).await.unwrap();
    let reopens = first.claimed_at.unwrap().as_datetime() + chrono::Duration::seconds(3);
    let second = claim_waiting(&admin, agents[1], 20)
        .await
        .expect("the task once the window moved");
    let claimed = second.claimed_at.unwrap().as_datetime();
    assert!(claimed >= reopens, "claimed at {claimed}, before {reopens}");
    let late = (claimed - reopens).to_std().unwrap();
    assert!(late < WITHIN, "claimed {late:?} after the window moved");
}

#[tokio::test]
async fn a_long_poll_gets_a_delayed_task_at_its_run_at() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let agent = agents(&admin, "d", 1).await[0];
    let task = admin
        .tasks()
        .create(&CreateTask {
            title: "later".into(),
            task_type: "code".into(),
            delay_seconds: Some(2),
            ..Default::default()
        })
        .await
        .unwrap();
    let run_at = task.run_at.unwrap().as_datetime();
    let got = claim_waiting(&admin, agent, 20)
        .await
        .expect("the delayed task");
    assert_eq!(got.id, task.id);
    let claimed = got.claimed_at.unwrap().as_datetime();
    let late = (claimed - run_at).to_std().expect("not before run_at");
    assert!(late < WITHIN, "claimed {late:?} after run_at");
}

#[tokio::test]
async fn worker_next_long_polls_too() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let worker = admin
        .workers()
        .register(&RegisterWorker {
            name: "box".into(),
            agents: Some(vec![WorkerAgentSpec {
                name: "box-agent".into(),
                ..Default::default()
            }]),
            ..Default::default()
        })
        .await
        .unwrap();
    let next = WorkerNext {
        wait_seconds: Some(1),
        ..Default::default()
    };
    let started = Instant::now();
    let none = admin.workers().next(worker.worker_id, &next).await.unwrap();
    assert!(none.is_none());
    assert!(started.elapsed() >= Duration::from_millis(900), "it waited");
    let waiting = {
        let admin = admin.clone();
        let id = worker.worker_id;
        tokio::spawn(async move {
            let next = WorkerNext {
                wait_seconds: Some(20),
                ..Default::default()
            };
            admin.workers().next(id, &next).await.unwrap()
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let created = create_many(&admin, 1, None, None).await[0];
    let created_at = Instant::now();
    let got = waiting.await.unwrap().expect("the new task");
    assert_eq!(got.id, created);
    assert!(created_at.elapsed() < Duration::from_secs(3));
}
