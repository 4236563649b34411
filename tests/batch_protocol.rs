//! The batched worker protocol (beyond the contract):
//! `POST /tasks/create-batch`, `POST /workers/:id/claim-batch` and
//! `POST /tasks/complete-batch`, through the SDK and raw HTTP: per-item
//! creates, refusals, dedupe and replays (and concurrent batches that share
//! dedupe keys keeping one live task a key), distinct agents, the limit, `start`, the long poll,
//! roles and the workflow filter, flow limits and delayed tasks, the claim
//! order around preferences and rate keys, per-item outcomes and replays,
//! completions served together with each item's own values, input
//! validation, and 32 concurrent batch claimers that never give one agent
//! two active tasks nor one task to two claims.

use futures_util::TryStreamExt;
use orchestrator_client::Client;
use orchestrator_client::api::{
    ClaimBatch, ClaimedTask, CompleteBatch, CompleteBatchItem, CreateBatch, CreateTask,
    CreatedItem, ErrorCode, EventFilter, Priority, RegisterWorker, RegisteredWorker, TaskFilter,
    TaskState, WorkerAgentSpec,
};
use orchestrator_tests::TestServer;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use uuid::Uuid;

fn task(title: &str) -> CreateTask {
    CreateTask {
        title: title.into(),
        task_type: "code".into(),
        ..Default::default()
    }
}

async fn create(admin: &Client, n: usize, prefix: &str) -> Vec<Uuid> {
    let mut ids = Vec::new();
    for i in 0..n {
        ids.push(
            admin
                .tasks()
                .create(&task(&format!("{prefix}-{i}")))
                .await
                .unwrap()
                .id,
        );
    }
    ids
}

async fn worker(admin: &Client, name: &str, agents: usize) -> RegisteredWorker {
    tagged_worker(admin, name, agents, &[]).await
}

/// A worker whose agents all carry `tags` as their routing tags.
async fn tagged_worker(
    admin: &Client,
    name: &str,
    agents: usize,
    tags: &[&str],
) -> RegisteredWorker {
    admin
        .workers()
        .register(&RegisterWorker {
            name: name.into(),
            connection_mode: Some("polling".into()),
            agents: Some(
                (0..agents)
                    .map(|i| WorkerAgentSpec {
                        name: format!("{name}-{i}"),
                        routing_tags: (!tags.is_empty())
                            .then(|| tags.iter().map(|t| (*t).to_owned()).collect()),
                        execution_mode: None,
                    })
                    .collect(),
            ),
            ..Default::default()
        })
        .await
        .unwrap()
}

fn claim(limit: i64) -> ClaimBatch {
    ClaimBatch {
        limit,
        ..Default::default()
    }
}

/// The `task.state_changed` moves of one task, oldest first.
async fn moves(admin: &Client, id: Uuid) -> Vec<(String, String)> {
    let page = admin
        .events()
        .list(&EventFilter {
            event_type: Some("task.state_changed".into()),
            entity_id: Some(id),
            limit: Some(100),
            ..Default::default()
        })
        .await
        .unwrap();
    page.items
        .iter()
        .map(|e| {
            (
                e.data["from_state"].as_str().unwrap_or_default().to_owned(),
                e.data["to_state"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// A task a batched claim started: answered and stored in progress, held by
/// the agent it was claimed for, with its two moves (claimed, then started).
async fn assert_started(admin: &Client, claimed: &ClaimedTask) {
    assert_eq!(claimed.task.state, TaskState::InProgress);
    assert_eq!(claimed.task.assigned_agent_id, Some(claimed.agent_id));
    assert!(claimed.task.claimed_at.is_some(), "{claimed:?}");
    assert!(claimed.task.started_at.is_some(), "{claimed:?}");
    assert_eq!(
        admin.tasks().get(claimed.task.id).await.unwrap().state,
        TaskState::InProgress
    );
    assert_eq!(
        moves(admin, claimed.task.id).await,
        [
            ("pending".into(), "claimed".into()),
            ("claimed".into(), "in_progress".into())
        ]
    );
}

/// Claims and starts `n` tasks for `worker` in one batch (all `n` claimed).
async fn claim_started(own: &Client, worker: &RegisteredWorker, n: usize) -> Vec<ClaimedTask> {
    let claimed = own
        .workers()
        .claim_batch(
            worker.worker_id,
            &ClaimBatch {
                limit: n as i64,
                start: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(claimed.len(), n);
    claimed
}

async fn post(server: &TestServer, key: &str, path: &str, body: Value) -> (StatusCode, Value) {
    let response = server
        .http()
        .post(server.at(path))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn claim_batch_gives_distinct_idle_agents_up_to_the_limit_and_starts_on_request() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let registered = worker(&admin, "batcher", 4).await;
    let agents: HashSet<Uuid> = registered.agents.iter().map(|a| a.id).collect();
    let own = server.client(&registered.worker_api_key);
    let tasks = create(&admin, 6, "batch").await;

    // Nothing asked for more than there is: three tasks, three agents.
    let first = own
        .workers()
        .claim_batch(registered.worker_id, &claim(3))
        .await
        .unwrap();
    assert_eq!(first.len(), 3);
    let held: HashSet<Uuid> = first.iter().map(|c| c.agent_id).collect();
    assert_eq!(held.len(), 3, "three distinct agents");
    assert!(held.is_subset(&agents));
    for c in &first {
        assert_eq!(c.task.state, TaskState::Claimed);
        assert_eq!(c.task.assigned_agent_id, Some(c.agent_id));
        assert!(tasks.contains(&c.task.id));
        assert_eq!(
            moves(&admin, c.task.id).await,
            [("pending".into(), "claimed".into())]
        );
    }

    // One agent is left idle: a limit of 10 gets one task, started.
    let second = own
        .workers()
        .claim_batch(
            registered.worker_id,
            &ClaimBatch {
                limit: 10,
                start: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(second.len(), 1);
    let started = &second[0];
    assert!(!held.contains(&started.agent_id));
    assert_started(&admin, started).await;

    // Every agent holds a task: an empty list, at once.
    let none = own
        .workers()
        .claim_batch(registered.worker_id, &claim(5))
        .await
        .unwrap();
    assert!(none.is_empty());

    // Another worker's key may not claim for this worker.
    let other = worker(&admin, "other", 1).await;
    let (status, body) = post(
        &server,
        &other.worker_api_key,
        &format!("/api/v1/workers/{}/claim-batch", registered.worker_id),
        json!({ "limit": 1 }),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    // An unknown worker is 404.
    let (status, _) = post(
        &server,
        &server.admin_key,
        &format!("/api/v1/workers/{}/claim-batch", Uuid::new_v4()),
        json!({ "limit": 1 }),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn claim_batch_matches_roles_and_the_workflow_filter() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let workflow = server.launch_workflow("batch filter").await;
    let new = |title: &str, role: Option<&str>, workflow_id: Option<Uuid>| CreateTask {
        role: role.map(str::to_owned),
        workflow_id,
        ..task(title)
    };
    // Oldest first: the reviewer's task, the workflow's, a plain one.
    let review = admin
        .tasks()
        .create(&new("review", Some("reviewer"), None))
        .await
        .unwrap()
        .id;
    let in_workflow = admin
        .tasks()
        .create(&new("in workflow", None, Some(workflow)))
        .await
        .unwrap()
        .id;
    let plain = admin
        .tasks()
        .create(&new("plain", None, None))
        .await
        .unwrap()
        .id;
    let untagged = worker(&admin, "untagged", 2).await;
    let own = server.client(&untagged.worker_api_key);

    // Only the workflow's task, though two agents are idle.
    let first = own
        .workers()
        .claim_batch(
            untagged.worker_id,
            &ClaimBatch {
                limit: 2,
                workflow_id: Some(workflow),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let ids: Vec<Uuid> = first.iter().map(|c| c.task.id).collect();
    assert_eq!(ids, [in_workflow]);
    // Without the filter the idle agent passes over the reviewer's task,
    // older as it is: no agent of this worker has the role.
    let second = own
        .workers()
        .claim_batch(untagged.worker_id, &claim(2))
        .await
        .unwrap();
    let ids: Vec<Uuid> = second.iter().map(|c| c.task.id).collect();
    assert_eq!(ids, [plain]);
    // A reviewer's agent gets it.
    let reviewers = tagged_worker(&admin, "reviewers", 1, &["role:reviewer"]).await;
    let third = server
        .client(&reviewers.worker_api_key)
        .workers()
        .claim_batch(reviewers.worker_id, &claim(1))
        .await
        .unwrap();
    let ids: Vec<Uuid> = third.iter().map(|c| c.task.id).collect();
    assert_eq!(ids, [review]);
    assert_eq!(third[0].agent_id, reviewers.agents[0].id);
}

#[tokio::test]
async fn bad_batches_are_422_with_field_errors_and_change_nothing() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let registered = worker(&admin, "strict", 2).await;
    let id = create(&admin, 1, "strict").await[0];
    let claim_path = format!("/api/v1/workers/{}/claim-batch", registered.worker_id);
    for (body, field) in [
        (json!({ "limit": 0 }), "limit"),
        (json!({ "limit": 257 }), "limit"),
        (json!({ "limit": "many" }), "limit"),
        (json!({ "limit": 2, "start": "yes" }), "start"),
        (json!({ "limit": 2, "wait_seconds": 31 }), "wait_seconds"),
    ] {
        let (status, answer) = post(&server, &server.admin_key, &claim_path, body.clone()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {answer}");
        let errors = &answer["error"]["details"]["issues"]["fieldErrors"];
        assert!(errors.get(field).is_some(), "{body}: {answer}");
    }
    let (status, _) = post(&server, &server.admin_key, &claim_path, json!({})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let items: Vec<Value> = (0..257)
        .map(|_| json!({ "task_id": Uuid::new_v4() }))
        .collect();
    for (body, field) in [
        (json!({ "items": [] }), "items"),
        (json!({ "items": items }), "items"),
        (json!({ "items": [{ "task_id": "not-a-uuid" }] }), "items"),
    ] {
        let (status, answer) = post(
            &server,
            &server.admin_key,
            "/api/v1/tasks/complete-batch",
            body.clone(),
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
        let errors = &answer["error"]["details"]["issues"]["fieldErrors"];
        assert!(
            errors
                .as_object()
                .is_some_and(|e| e.keys().any(|k| k.starts_with(field))),
            "{field}: {answer}"
        );
    }
    // Nothing was claimed by any of it.
    assert_eq!(
        admin.tasks().get(id).await.unwrap().state,
        TaskState::Pending
    );
}

#[tokio::test]
async fn claim_batch_long_polls_until_a_task_arrives() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let registered = worker(&admin, "poller", 2).await;
    let own = server.client(&registered.worker_api_key);
    let worker_id = registered.worker_id;
    let started = Instant::now();
    let waiting = tokio::spawn(async move {
        own.workers()
            .claim_batch(
                worker_id,
                &ClaimBatch {
                    limit: 2,
                    wait_seconds: Some(20),
                    ..Default::default()
                },
            )
            .await
            .unwrap()
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !waiting.is_finished(),
        "the poll waits while nothing is pending"
    );
    let id = create(&admin, 1, "late").await[0];
    let claimed = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("the new task wakes the poll")
        .unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].task.id, id);
    assert!(started.elapsed() < Duration::from_secs(10));

    // With nothing arriving, the poll answers an empty list after its wait.
    let own = server.client(&registered.worker_api_key);
    let started = Instant::now();
    let none = own
        .workers()
        .claim_batch(
            worker_id,
            &ClaimBatch {
                limit: 2,
                wait_seconds: Some(1),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(none.is_empty());
    assert!(started.elapsed() >= Duration::from_millis(900));
}

#[tokio::test]
async fn claim_batch_honours_flow_limits_and_delays() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let registered = worker(&admin, "limited", 8).await;
    admin
        .limits()
        .set_concurrency("one-at-a-time", 1)
        .await
        .unwrap();
    let mut keyed = Vec::new();
    for i in 0..3 {
        let mut request = task(&format!("keyed-{i}"));
        request.concurrency_key = Some("one-at-a-time".into());
        keyed.push(admin.tasks().create(&request).await.unwrap().id);
    }
    let mut delayed = task("later");
    delayed.delay_seconds = Some(3600);
    let delayed = admin.tasks().create(&delayed).await.unwrap().id;
    let free = create(&admin, 2, "free").await;

    let claimed = admin
        .workers()
        .claim_batch(registered.worker_id, &claim(8))
        .await
        .unwrap();
    let ids: HashSet<Uuid> = claimed.iter().map(|c| c.task.id).collect();
    assert_eq!(
        ids.iter().filter(|id| keyed.contains(id)).count(),
        1,
        "a limit of 1 admits one keyed task per batch: {claimed:?}"
    );
    assert!(
        !ids.contains(&delayed),
        "a delayed task waits for its run_at"
    );
    assert!(free.iter().all(|id| ids.contains(id)));
    assert_eq!(claimed.len(), 3);
    assert_eq!(
        admin.tasks().get(delayed).await.unwrap().state,
        TaskState::Pending
    );

    // Another batch while the slot is held: no keyed task.
    let again = admin
        .workers()
        .claim_batch(registered.worker_id, &claim(8))
        .await
        .unwrap();
    assert!(again.is_empty(), "{again:?}");
}

/// Creates one task, shaped by `shape`.
async fn create_one(admin: &Client, title: &str, shape: impl FnOnce(&mut CreateTask)) -> Uuid {
    let mut request = task(title);
    shape(&mut request);
    admin.tasks().create(&request).await.unwrap().id
}

/// The tasks of a batch, in the order answered.
fn ids(claimed: &[ClaimedTask]) -> Vec<Uuid> {
    claimed.iter().map(|c| c.task.id).collect()
}

/// A batch takes what one claim per agent, in turn, would take: the claim
/// order across priorities, a task that prefers one of the agents (or
/// their worker) for it, and a rate key's window, whose second task waits
/// while a later task without a key is taken. On PostgreSQL a batch whose
/// agents claim alike is one bulk claim; these are the cases where it must
/// hand over to the agents' own claims.
#[tokio::test]
async fn a_batch_claims_in_claim_order_around_preferences_and_rate_keys() {
    let server = TestServer::start().await;
    let admin = server.admin();

    // Priority first, then age; answered in that order.
    let low = create_one(&admin, "low", |t| t.priority = Some(Priority::Low)).await;
    let normal = create_one(&admin, "normal", |_| ()).await;
    let high = create_one(&admin, "high", |t| t.priority = Some(Priority::High)).await;
    let ordered = worker(&admin, "ordered", 4).await;
    let claimed = admin
        .workers()
        .claim_batch(ordered.worker_id, &claim(4))
        .await
        .unwrap();
    assert_eq!(ids(&claimed), [high, normal, low]);
    let holders: HashSet<Uuid> = claimed.iter().map(|c| c.agent_id).collect();
    assert_eq!(holders.len(), 3, "{claimed:?}");

    // A task that prefers an agent goes to it, though younger than the rest.
    let preferring = worker(&admin, "preferring", 3).await;
    let chosen = preferring.agents[2].id;
    let free = create(&admin, 2, "free").await;
    let preferred = create_one(&admin, "preferred", |t| t.preferred_agent_id = Some(chosen)).await;
    let claimed = admin
        .workers()
        .claim_batch(preferring.worker_id, &claim(3))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 3, "{claimed:?}");
    let by_task: HashMap<Uuid, Uuid> = claimed.iter().map(|c| (c.task.id, c.agent_id)).collect();
    assert_eq!(by_task.get(&preferred), Some(&chosen), "{claimed:?}");
    assert!(
        free.iter().all(|id| by_task.contains_key(id)),
        "{claimed:?}"
    );

    // A task that prefers the worker is taken with the others.
    let wanted = worker(&admin, "wanted", 2).await;
    let free = create(&admin, 1, "free-for-wanted").await[0];
    let for_worker = create_one(&admin, "for-worker", |t| {
        t.preferred_worker_id = Some(wanted.worker_id);
    })
    .await;
    let claimed = admin
        .workers()
        .claim_batch(wanted.worker_id, &claim(2))
        .await
        .unwrap();
    let taken: HashSet<Uuid> = ids(&claimed).into_iter().collect();
    assert_eq!(taken, HashSet::from([free, for_worker]), "{claimed:?}");

    // A rate key admitting one claim a minute: its first task is taken in
    // its turn, its second waits, and the task after it is taken.
    admin.limits().set_rate("per-minute", 1, 60).await.unwrap();
    let rated = |t: &mut CreateTask| t.rate_limit_key = Some("per-minute".into());
    let first = create_one(&admin, "first", |_| ()).await;
    let rated_first = create_one(&admin, "rated-first", rated).await;
    let rated_second = create_one(&admin, "rated-second", rated).await;
    let last = create_one(&admin, "last", |_| ()).await;
    let limited = worker(&admin, "limited-rate", 4).await;
    let claimed = admin
        .workers()
        .claim_batch(limited.worker_id, &claim(4))
        .await
        .unwrap();
    assert_eq!(ids(&claimed), [first, rated_first, last]);
    assert_eq!(
        admin.tasks().get(rated_second).await.unwrap().state,
        TaskState::Pending
    );
}

#[tokio::test]
async fn complete_batch_answers_each_item_on_its_own_and_replays_per_item() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let registered = worker(&admin, "finisher", 3).await;
    let other = worker(&admin, "bystander", 1).await;
    let own = server.client(&registered.worker_api_key);
    create(&admin, 3, "mine").await;
    let mine = own
        .workers()
        .claim_batch(
            registered.worker_id,
            &ClaimBatch {
                limit: 3,
                start: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(mine.len(), 3);
    // Several rows started together (one statement on either database):
    // each answered and stored in progress, with its two moves.
    for claimed in &mine {
        assert_started(&admin, claimed).await;
    }
    let theirs = create(&admin, 1, "theirs").await[0];
    let held = admin
        .workers()
        .claim_batch(other.worker_id, &claim(1))
        .await
        .unwrap();
    assert_eq!(held[0].task.id, theirs);
    let pending = create(&admin, 1, "pending").await[0];
    let unknown = Uuid::new_v4();

    let item = |task_id: Uuid, n: i64, request_id: Option<&str>| CompleteBatchItem {
        task_id,
        output: Some(json!({ "n": n })),
        request_id: request_id.map(str::to_owned),
        ..Default::default()
    };
    let answers = own
        .tasks()
        .complete_batch(&CompleteBatch {
            items: vec![
                item(mine[0].task.id, 0, Some("first")),
                item(theirs, 1, None),
                item(mine[1].task.id, 2, None),
                item(unknown, 3, None),
                item(pending, 4, None),
            ],
        })
        .await
        .unwrap();
    let codes: Vec<Option<&str>> = answers
        .iter()
        .map(|a| a.error.as_ref().map(|e| e.code.as_str()))
        .collect();
    assert_eq!(answers.len(), 5);
    assert_eq!(answers[0].state, Some(TaskState::Completed));
    assert_eq!(codes[1], Some("FORBIDDEN"), "{answers:?}");
    assert_eq!(answers[2].state, Some(TaskState::Completed));
    assert_eq!(codes[3], Some("NOT_FOUND"), "{answers:?}");
    assert!(
        codes[4].is_some(),
        "a pending task cannot complete: {answers:?}"
    );
    assert!(answers.iter().enumerate().all(|(i, a)| {
        a.task_id == [mine[0].task.id, theirs, mine[1].task.id, unknown, pending][i]
    }));
    // The refused items wrote nothing; the others are whole.
    assert_eq!(
        admin.tasks().get(theirs).await.unwrap().state,
        TaskState::Claimed
    );
    assert_eq!(
        admin.tasks().get(pending).await.unwrap().state,
        TaskState::Pending
    );
    let done = admin.tasks().get(mine[1].task.id).await.unwrap();
    assert_eq!(done.output, Some(json!({ "n": 2 })));
    assert_eq!(
        moves(&admin, mine[1].task.id).await.last().cloned(),
        Some(("in_progress".into(), "completed".into()))
    );

    // Replays: the same item with the same request_id answers as before
    // (and writes nothing more); with another body it is refused, alone.
    let again = own
        .tasks()
        .complete_batch(&CompleteBatch {
            items: vec![
                item(mine[0].task.id, 0, Some("first")),
                item(mine[0].task.id, 9, Some("first")),
                item(mine[2].task.id, 5, Some("third")),
            ],
        })
        .await
        .unwrap();
    assert_eq!(again[0].state, Some(TaskState::Completed), "{again:?}");
    assert!(again[0].error.is_none());
    assert_eq!(
        again[1].error.as_ref().map(|e| e.code.as_str()),
        Some("CONFLICT"),
        "{again:?}"
    );
    assert_eq!(again[2].state, Some(TaskState::Completed));
    assert_eq!(
        moves(&admin, mine[0].task.id).await.len(),
        3,
        "no second completion"
    );
    assert_eq!(
        admin.tasks().get(mine[0].task.id).await.unwrap().output,
        Some(json!({ "n": 0 }))
    );
    // The one-task route shares the key: it replays the batch's item.
    let single = own
        .tasks()
        .complete(
            mine[2].task.id,
            &orchestrator_client::api::CompleteTask {
                output: Some(json!({ "n": 5 })),
                request_id: Some("third".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(single.state, TaskState::Completed);
}

/// Task `i`'s output in [`complete_batch_completes_its_items_together`]:
/// numbers of every kind, text that needs escaping, nesting.
fn rich_output(i: usize) -> Value {
    json!({
        "n": i,
        "ratio": 1.0 + i as f64 / 4.0,
        "big": u64::MAX - i as u64,
        "negative": -(i as i64) - 1,
        "text": format!("é \"{i}\" \\ \u{1F600}\n\t"),
        "list": [null, true, { "deep": [i, 0.5] }],
    })
}

/// The items of a batch that the one-task route would complete on its fast
/// path complete together, in one statement on either database (SQLite's
/// JSON list; PostgreSQL's combined completion): each task keeps exactly
/// the output and metrics its item sent (each number of its kind, each
/// character of its text), moves once, and answers in its item's place; a
/// second item for a task the batch completed is refused and changes
/// nothing.
#[tokio::test]
async fn complete_batch_completes_its_items_together() {
    const N: usize = 6;
    let server = TestServer::start().await;
    let admin = server.admin();
    let registered = worker(&admin, "together", N).await;
    let own = server.client(&registered.worker_api_key);
    create(&admin, N, "together").await;
    let claimed = claim_started(&own, &registered, N).await;
    let metrics = |i: usize| {
        i.is_multiple_of(2)
            .then(|| json!({ "tokens": i, "cost": 0.25 }))
    };
    let mut items: Vec<CompleteBatchItem> = claimed
        .iter()
        .enumerate()
        .map(|(i, c)| CompleteBatchItem {
            task_id: c.task.id,
            // Half name their agent, half leave it to the worker key.
            agent_id: i.is_multiple_of(2).then_some(c.agent_id),
            output: Some(rich_output(i)),
            metrics: metrics(i),
            ..Default::default()
        })
        .collect();
    items.push(CompleteBatchItem {
        task_id: claimed[0].task.id,
        output: Some(json!("again")),
        ..Default::default()
    });
    let counted = || async {
        (
            server.metric("orch_db_combined_statements_total").await,
            server.metric("orch_db_combined_requests_total").await,
        )
    };
    let (statements_before, served_before) = counted().await;

    let answers = own
        .tasks()
        .complete_batch(&CompleteBatch { items })
        .await
        .unwrap();

    assert_eq!(answers.len(), N + 1);
    for (i, c) in claimed.iter().enumerate() {
        assert_eq!(answers[i].task_id, c.task.id);
        assert_eq!(answers[i].state, Some(TaskState::Completed), "{answers:?}");
        let task = admin.tasks().get(c.task.id).await.unwrap();
        assert_eq!(task.state, TaskState::Completed, "task {i}");
        assert_eq!(task.output, Some(rich_output(i)), "task {i}");
        assert_eq!(task.metrics, metrics(i), "task {i}");
        assert_eq!(task.assigned_agent_id, Some(c.agent_id), "task {i}");
        assert!(task.completed_at.is_some(), "task {i}");
        assert_eq!(
            moves(&admin, c.task.id).await,
            [
                ("pending".into(), "claimed".into()),
                ("claimed".into(), "in_progress".into()),
                ("in_progress".into(), "completed".into())
            ],
            "task {i}"
        );
    }
    assert_eq!(answers[N].task_id, claimed[0].task.id);
    assert_eq!(
        answers[N].error.as_ref().map(|e| e.code.as_str()),
        Some("INVALID_STATE_TRANSITION"),
        "{answers:?}"
    );

    // The fast path served the N first items, one statement for all of them
    // on SQLite (PostgreSQL's leaders may split them across turns).
    let (statements, served) = counted().await;
    let delta =
        |after: Option<f64>, before: Option<f64>| after.unwrap_or(0.0) - before.unwrap_or(0.0);
    let (statements, served) = (
        delta(statements, statements_before),
        delta(served, served_before),
    );
    assert_eq!(served, N as f64, "{statements} statements served {served}");
    if orchestrator_tests::backend() == "sqlite" {
        assert_eq!(statements, 1.0);
    } else {
        assert!((1.0..=N as f64).contains(&statements), "{statements}");
    }
}

/// The events a write batch publishes as it commits (what a program that
/// embeds the core and subscribes to the store receives) are the rows the
/// batch stored, field for field: an insert answers only the events' ids,
/// so a published event is built from its row and must get that row's id.
/// Batched claims and completions and concurrent creates put many events
/// of several requests into the batches.
#[tokio::test]
async fn the_events_a_batch_publishes_are_the_rows_it_stored() {
    const N: usize = 12;
    let server = TestServer::start().await;
    let admin = server.admin();
    let all = EventFilter {
        limit: Some(500),
        ..Default::default()
    };
    let before = admin.events().list(&all).await.unwrap().items;
    let before = before.last().map(|e| e.id).unwrap_or_default();
    let mut bus = server.handle().control_plane().store().subscribe();
    let registered = worker(&admin, "published", N).await;
    let own = server.client(&registered.worker_api_key);
    futures_util::future::join_all((0..N).map(|i| {
        let admin = admin.clone();
        async move { admin.tasks().create(&task(&format!("published-{i}"))).await }
    }))
    .await
    .into_iter()
    .for_each(|created| {
        created.unwrap();
    });
    let claimed = claim_started(&own, &registered, N).await;
    let items = claimed
        .iter()
        .enumerate()
        .map(|(i, c)| CompleteBatchItem {
            task_id: c.task.id,
            output: Some(rich_output(i)),
            ..Default::default()
        })
        .collect();
    own.tasks()
        .complete_batch(&CompleteBatch { items })
        .await
        .unwrap();

    let stored = admin.events().list(&all).await.unwrap();
    assert!(!stored.has_more);
    let stored: Vec<_> = stored.items.into_iter().filter(|e| e.id > before).collect();
    // Created, claimed, started and completed, for each task.
    assert!(stored.len() >= 4 * N, "{} stored", stored.len());
    let mut published = HashMap::new();
    while !stored.iter().all(|e| published.contains_key(&e.id)) {
        let event = tokio::time::timeout(Duration::from_secs(10), bus.recv())
            .await
            .expect("every stored event is published")
            .unwrap();
        published.insert(event.id, event);
    }
    for stored in &stored {
        assert_eq!(*published[&stored.id], *stored);
    }
}

#[tokio::test]
async fn a_started_batch_takes_and_frees_a_flow_limit_slot() {
    started_batch_takes_and_frees_a_slot(TestServer::start().await).await;
}

/// The same with two writer connections: on PostgreSQL the batch then runs
/// the one-request claim statement per agent (its started form), not the
/// combined-claim function.
#[tokio::test]
async fn a_started_batch_on_several_writers_takes_and_frees_a_flow_limit_slot() {
    let server = TestServer::start_with(|config| config.core.db_writers = 2).await;
    started_batch_takes_and_frees_a_slot(server).await;
}

async fn started_batch_takes_and_frees_a_slot(server: TestServer) {
    let admin = server.admin();
    let registered = worker(&admin, "started-limited", 4).await;
    let client = server.client(&registered.worker_api_key);
    admin.limits().set_concurrency("solo", 1).await.unwrap();
    let mut keyed = Vec::new();
    for i in 0..2 {
        let mut request = task(&format!("solo-{i}"));
        request.concurrency_key = Some("solo".into());
        keyed.push(admin.tasks().create(&request).await.unwrap().id);
    }
    let claim_started = || async {
        let request = ClaimBatch {
            limit: 4,
            start: true,
            ..Default::default()
        };
        let workers = client.workers();
        workers
            .claim_batch(registered.worker_id, &request)
            .await
            .unwrap()
    };
    let first = claim_started().await;
    assert_eq!(first.len(), 1, "a limit of 1 admits one: {first:?}");
    assert_started(&admin, &first[0]).await;
    let held = claim_started().await;
    assert!(held.is_empty(), "the slot is held: {held:?}");

    let done = client
        .tasks()
        .complete_batch(&CompleteBatch {
            items: vec![CompleteBatchItem {
                task_id: first[0].task.id,
                agent_id: Some(first[0].agent_id),
                ..Default::default()
            }],
        })
        .await
        .unwrap();
    assert_eq!(done[0].state, Some(TaskState::Completed), "{done:?}");
    let second = claim_started().await;
    assert_eq!(second.len(), 1, "the slot was freed: {second:?}");
    assert_ne!(second[0].task.id, first[0].task.id);
    assert!(keyed.contains(&second[0].task.id));
    assert_started(&admin, &second[0]).await;

    // No keyed task pends any more: the plain claim's started form (on
    // PostgreSQL a statement of its own, where the ones above were the
    // fair pick's).
    let free = create(&admin, 1, "unkeyed").await;
    let third = claim_started().await;
    assert_eq!(third.len(), 1, "{third:?}");
    assert_eq!(third[0].task.id, free[0]);
    assert_started(&admin, &third[0]).await;
}

#[tokio::test]
async fn thirty_two_concurrent_batch_claimers_keep_one_task_per_agent() {
    batch_claimers_keep_one_task_per_agent(TestServer::start().await).await;
}

/// The same on two writer connections: on PostgreSQL the completions'
/// combined statements then run on a writer of their own, beside the other
/// writes, in batches open at the same time.
#[tokio::test]
async fn thirty_two_concurrent_batch_claimers_on_two_writers_keep_one_task_per_agent() {
    let server = TestServer::start_with(|config| config.core.db_writers = 2).await;
    batch_claimers_keep_one_task_per_agent(server).await;
}

async fn batch_claimers_keep_one_task_per_agent(server: TestServer) {
    let admin = server.admin();
    const WORKERS: usize = 4;
    const AGENTS: usize = 16;
    const CLAIMERS: usize = 32;
    const TASKS: usize = 400;
    let mut workers = Vec::new();
    for w in 0..WORKERS {
        workers.push(worker(&admin, &format!("crowd-{w}"), AGENTS).await);
    }
    create(&admin, TASKS, "crowd").await;
    // Who holds what, as the claimers saw it: an agent must never be handed
    // a task while it holds one (released just before its completion goes).
    let holding: Arc<Mutex<HashMap<Uuid, Uuid>>> = Arc::default();
    let seen: Arc<Mutex<HashSet<Uuid>>> = Arc::default();
    let mut handles = Vec::new();
    for c in 0..CLAIMERS {
        let registered = &workers[c % WORKERS];
        let client = server.client(&registered.worker_api_key);
        let worker_id = registered.worker_id;
        let (holding, seen) = (holding.clone(), seen.clone());
        handles.push(tokio::spawn(async move {
            let mut empty = 0;
            let mut done = 0usize;
            while empty < 3 {
                let request = ClaimBatch {
                    limit: 8,
                    start: c % 2 == 0,
                    ..Default::default()
                };
                let claimed = client
                    .workers()
                    .claim_batch(worker_id, &request)
                    .await
                    .unwrap();
                if claimed.is_empty() {
                    empty += 1;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
                empty = 0;
                {
                    let mut holding = holding.lock().unwrap();
                    let mut seen = seen.lock().unwrap();
                    for one in &claimed {
                        assert!(
                            seen.insert(one.task.id),
                            "task {} claimed twice",
                            one.task.id
                        );
                        if let Some(other) = holding.insert(one.agent_id, one.task.id) {
                            panic!(
                                "agent {} got {} while holding {other}",
                                one.agent_id, one.task.id
                            );
                        }
                    }
                }
                // Held a while, so that other claimers run meanwhile.
                tokio::time::sleep(Duration::from_millis(10)).await;
                let mut items = Vec::new();
                {
                    let mut holding = holding.lock().unwrap();
                    for one in &claimed {
                        holding.remove(&one.agent_id);
                        items.push(CompleteBatchItem {
                            task_id: one.task.id,
                            agent_id: Some(one.agent_id),
                            request_id: Some(format!("done-{}", one.task.id)),
                            ..Default::default()
                        });
                    }
                }
                let answers = client
                    .tasks()
                    .complete_batch(&CompleteBatch { items })
                    .await
                    .unwrap();
                for answer in answers {
                    assert_eq!(answer.state, Some(TaskState::Completed), "{answer:?}");
                    done += 1;
                }
            }
            done
        }));
    }
    let mut completed = 0;
    for handle in handles {
        completed += handle.await.unwrap();
    }
    assert_eq!(completed, TASKS);
    assert_eq!(seen.lock().unwrap().len(), TASKS);
    let page = admin
        .tasks()
        .list(
            &orchestrator_client::api::TaskFilter {
                state: Some(TaskState::Completed),
                ..Default::default()
            },
            orchestrator_client::api::PageRequest::new(1, 1),
        )
        .await
        .unwrap();
    assert_eq!(page.total as usize, TASKS);
}

/// Every task of the tenant, by id.
async fn all_tasks(admin: &Client) -> HashMap<Uuid, orchestrator_client::api::Task> {
    let all: Vec<_> = admin
        .tasks()
        .list_all(&TaskFilter::default())
        .try_collect()
        .await
        .unwrap();
    all.into_iter().map(|t| (t.id, t)).collect()
}

fn created_id(answer: &CreatedItem) -> Uuid {
    assert!(answer.error.is_none(), "{answer:?}");
    answer.task.as_ref().expect("a task").id
}

#[tokio::test]
async fn create_batch_answers_each_item_on_its_own_and_replays_per_item() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let keyed = |title: &str, key: &str| CreateTask {
        dedupe_key: Some(key.into()),
        ..task(title)
    };
    let replayable = CreateTask {
        request_id: Some("batch-item-1".into()),
        priority: Some(Priority::High),
        ..task("replayable")
    };
    let items = vec![
        task("plain-0"),
        CreateTask {
            input: Some(json!({ "n": 1 })),
            ..task("plain-1")
        },
        CreateTask {
            task_type: "bogus".into(),
            ..task("wrong type")
        },
        CreateTask {
            workflow_id: Some(Uuid::new_v4()),
            ..task("no such workflow")
        },
        keyed("keyed", "batch-key"),
        keyed("keyed again", "batch-key"),
        replayable.clone(),
        task("plain-2"),
    ];
    let answers = admin
        .tasks()
        .create_batch(&CreateBatch {
            items: items.clone(),
        })
        .await
        .unwrap();
    assert_eq!(answers.len(), items.len());
    // The plain items: created, pending, each with its own values.
    for i in [0, 1, 7] {
        let task = answers[i].task.as_ref().unwrap();
        assert_eq!(task.title, items[i].title);
        assert_eq!(task.state, TaskState::Pending);
        assert_eq!(answers[i].deduplicated, Some(false));
    }
    assert_eq!(answers[1].task.as_ref().unwrap().input, json!({ "n": 1 }));
    // The refused items: the one-task route's errors, nothing written.
    let wrong_type = answers[2].error.as_ref().unwrap();
    assert_eq!(wrong_type.code, ErrorCode::SchemaValidationFailed);
    assert!(answers[2].task.is_none());
    let dangling = answers[3].error.as_ref().unwrap();
    assert_eq!(dangling.code, ErrorCode::ValidationError, "{dangling:?}");
    // The second item with the live key answers the first's task.
    let keyed_id = created_id(&answers[4]);
    assert_eq!(answers[4].deduplicated, Some(false));
    assert_eq!(created_id(&answers[5]), keyed_id);
    assert_eq!(answers[5].deduplicated, Some(true));
    let replayed_id = created_id(&answers[6]);
    assert_eq!(answers[6].task.as_ref().unwrap().priority, Priority::High);

    let stored = all_tasks(&admin).await;
    assert_eq!(stored.len(), 5, "five tasks written: {stored:?}");
    for answer in answers.iter().filter(|a| a.deduplicated == Some(false)) {
        let id = created_id(answer);
        assert_eq!(stored[&id].state, TaskState::Pending);
        // Each created task has its creation event.
        let events = admin
            .events()
            .list(&EventFilter {
                event_type: Some("task.created".into()),
                entity_id: Some(id),
                limit: Some(100),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(events.items.len(), 1, "{id}: {:?}", events.items);
    }

    // Sent again: the request_id item replays, the keyed items find the
    // live task, the plain items are new tasks.
    let again = admin
        .tasks()
        .create_batch(&CreateBatch { items })
        .await
        .unwrap();
    assert_eq!(created_id(&again[6]), replayed_id);
    assert_eq!(created_id(&again[4]), keyed_id);
    assert_eq!(again[4].deduplicated, Some(true));
    for i in [0, 1, 7] {
        assert!(!stored.contains_key(&created_id(&again[i])));
    }
    assert_eq!(all_tasks(&admin).await.len(), 8);
    // The replayed request_id with another body is the one-task route's
    // conflict.
    let changed = admin
        .tasks()
        .create_batch(&CreateBatch {
            items: vec![
                CreateTask {
                    title: "another body".into(),
                    ..replayable
                },
                task("beside it"),
            ],
        })
        .await
        .unwrap();
    assert_eq!(
        changed[0].error.as_ref().map(|e| e.code),
        Some(ErrorCode::Conflict),
        "{changed:?}"
    );
    created_id(&changed[1]);
}

#[tokio::test]
async fn bad_create_batches_are_422_and_change_nothing() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let item = json!({ "title": "t", "type": "code" });
    let many: Vec<Value> = (0..257).map(|_| item.clone()).collect();
    for body in [
        json!({ "items": [] }),
        json!({ "items": many }),
        json!({ "items": [{ "title": 5, "type": "code" }] }),
        json!({ "items": [item.clone()], "extra": true }),
        json!({ "items": item }),
    ] {
        let (status, answer) = post(
            &server,
            &server.admin_key,
            "/api/v1/tasks/create-batch",
            body.clone(),
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {answer}");
        assert_eq!(answer["error"]["code"], "SCHEMA_VALIDATION_FAILED");
    }
    assert!(all_tasks(&admin).await.is_empty());
    // The most a batch may hold is accepted, through raw HTTP too.
    let most: Vec<Value> = (0..256).map(|_| item.clone()).collect();
    let (status, answer) = post(
        &server,
        &server.admin_key,
        "/api/v1/tasks/create-batch",
        json!({ "items": most }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["data"].as_array().map(Vec::len), Some(256));
    assert_eq!(all_tasks(&admin).await.len(), 256);
}

#[tokio::test]
async fn concurrent_create_batches_keep_one_live_task_a_dedupe_key() {
    let server = TestServer::start().await;
    let admin = server.admin();
    const BATCHES: usize = 16;
    const KEYS: usize = 4;
    let mut handles = Vec::new();
    for b in 0..BATCHES {
        let admin = admin.clone();
        handles.push(tokio::spawn(async move {
            // Eight plain items, and one item for each shared key.
            let mut items: Vec<CreateTask> =
                (0..8).map(|i| task(&format!("batch-{b}-{i}"))).collect();
            for k in 0..KEYS {
                items.push(CreateTask {
                    dedupe_key: Some(format!("shared-{k}")),
                    ..task(&format!("keyed-{b}-{k}"))
                });
            }
            admin
                .tasks()
                .create_batch(&CreateBatch { items })
                .await
                .unwrap()
        }));
    }
    let mut plain = HashSet::new();
    let mut by_key: HashMap<usize, HashSet<Uuid>> = HashMap::new();
    let mut fresh_keyed = 0;
    for handle in handles {
        let answers = handle.await.unwrap();
        assert_eq!(answers.len(), 8 + KEYS);
        for answer in &answers[..8] {
            assert!(plain.insert(created_id(answer)), "one id per plain item");
        }
        for (k, answer) in answers[8..].iter().enumerate() {
            by_key.entry(k).or_default().insert(created_id(answer));
            if answer.deduplicated == Some(false) {
                fresh_keyed += 1;
            }
        }
    }
    // Every batch's item of a key answered the one live task of that key.
    for (k, ids) in &by_key {
        assert_eq!(ids.len(), 1, "key {k}: {ids:?}");
    }
    assert_eq!(fresh_keyed, KEYS, "each key created once");
    let stored = all_tasks(&admin).await;
    assert_eq!(stored.len(), BATCHES * 8 + KEYS);
    assert!(plain.iter().all(|id| stored.contains_key(id)));
}
