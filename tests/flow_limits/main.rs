//! Flow limits end to end (issue 31), on SQLite and PostgreSQL: concurrency
//! keys under concurrent claimers (and two replicas on one database), rate
//! windows, fair claiming across keys, the long poll woken by a freed slot,
//! a moved window and a delayed task's `run_at`, every validation answer, and
//! the keys of tasks made by activations, A2A submit and schedules.

mod concurrency;
mod fairness;
mod paths;
mod rate;
mod validation;
mod wakeup;

use futures_util::future::join_all;
use orchestrator_client::Client;
use orchestrator_client::api::{
    ClaimTask, CompleteTask, CreateTask, EventFilter, RegisterAgent, StartTask, Task,
};
use std::time::Duration;
use uuid::Uuid;

/// A task create with the given keys.
pub fn keyed(title: &str, concurrency: Option<&str>, rate: Option<&str>) -> CreateTask {
    CreateTask {
        title: title.into(),
        task_type: "code".into(),
        concurrency_key: concurrency.map(Into::into),
        rate_limit_key: rate.map(Into::into),
        ..Default::default()
    }
}

/// Creates `n` tasks with the keys, 16 at a time, oldest first in each batch.
pub async fn create_many(
    admin: &Client,
    n: usize,
    concurrency: Option<&str>,
    rate: Option<&str>,
) -> Vec<Uuid> {
    let mut ids = Vec::with_capacity(n);
    let all: Vec<usize> = (0..n).collect();
    for chunk in all.chunks(16) {
        let made = join_all(chunk.iter().map(|i| {
            let request = keyed(&format!("t{i}"), concurrency, rate);
            async move { admin.tasks().create(&request).await.unwrap().id }
        }))
        .await;
        ids.extend(made);
    }
    ids
}

/// Registers `n` agents named `prefix-i`; their ids.
pub async fn agents(admin: &Client, prefix: &str, n: usize) -> Vec<Uuid> {
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        let agent = admin
            .agents()
            .register(&RegisterAgent {
                name: format!("{prefix}-{i}"),
                ..Default::default()
            })
            .await
            .unwrap();
        ids.push(agent.id);
    }
    ids
}

/// One claim for `agent` (the admin key claims for any agent).
pub async fn claim(client: &Client, agent: Uuid) -> Option<Task> {
    claim_waiting(client, agent, 0).await
}

/// A claim with `wait_seconds` (a long poll).
pub async fn claim_waiting(client: &Client, agent: Uuid, wait: i64) -> Option<Task> {
    client
        .tasks()
        .claim(&ClaimTask {
            agent_id: agent,
            wait_seconds: (wait > 0).then_some(wait),
            ..Default::default()
        })
        .await
        .unwrap()
}

/// Starts and completes `task` as `agent`.
pub async fn finish(client: &Client, agent: Uuid, task: Uuid) {
    client
        .tasks()
        .start(
            task,
            &StartTask {
                agent_id: Some(agent),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    client
        .tasks()
        .complete(
            task,
            &CompleteTask {
                output: Some(serde_json::json!({ "ok": true })),
                agent_id: Some(agent),
                ..Default::default()
            },
        )
        .await
        .unwrap();
}

/// The `task.limit_waiting` events of `task`, waiting up to `wait` for at
/// least `at_least` of them.
pub async fn limit_waiting_events(
    admin: &Client,
    task: Uuid,
    at_least: usize,
    wait: Duration,
) -> usize {
    let deadline = std::time::Instant::now() + wait;
    loop {
        let page = admin
            .events()
            .list(&EventFilter {
                event_type: Some("task.limit_waiting".into()),
                entity_id: Some(task),
                ..Default::default()
            })
            .await
            .unwrap();
        let n = page.items.len();
        if n >= at_least || std::time::Instant::now() > deadline {
            return n;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
