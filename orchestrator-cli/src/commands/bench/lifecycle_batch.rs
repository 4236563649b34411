//! `orch bench lifecycle --batch N`: the lifecycle on the batched protocol.
//! The `--creators` clients create the tasks (the plain run's bodies) N to
//! a `create-batch` request; then each of the `--agents` clients is a
//! worker with N agents that loops `claim-batch` (limit N, started in the
//! same request) and one `complete-batch` of what it got, until the queue
//! is empty. A task costs its share of three requests. The report has the
//! plain run's fields, so the two runs compare field by field.

use super::lifecycle::{LifecycleArgs, drain_results};
use super::stats::Recorder;
use super::{FirstError, Outcome, Target, join_creators};
use anyhow::{Context, Result};
use orchestrator_client::api::{
    ClaimBatch, CompleteBatch, CompleteBatchItem, CreateBatch, CreateTask, RegisterWorker,
    WorkerAgentSpec,
};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;
use uuid::Uuid;

const CREATE: &str = "POST /tasks/create-batch";
const CLAIM: &str = "POST /workers/:id/claim-batch";
const COMPLETE: &str = "POST /tasks/complete-batch";

/// Registers `count` workers of `agents` agents each; their ids.
async fn register_workers(target: &Target, count: usize, agents: usize) -> Result<Vec<Uuid>> {
    let run = Uuid::new_v4().simple().to_string();
    let mut ids = Vec::with_capacity(count);
    for w in 0..count {
        let name = format!("bench-batch-{}-{w}", &run[..8]);
        let specs = (0..agents)
            .map(|a| WorkerAgentSpec {
                name: format!("{name}-{a}"),
                routing_tags: None,
                execution_mode: None,
            })
            .collect();
        let worker = target
            .client
            .workers()
            .register(&RegisterWorker {
                name,
                connection_mode: Some("polling".into()),
                heartbeat_interval_seconds: Some(3600),
                agents: Some(specs),
                ..Default::default()
            })
            .await
            .context("cannot register a bench worker")?;
        ids.push(worker.worker_id);
    }
    Ok(ids)
}

/// Creates `count` tasks, `batch` to a `create-batch` request, from
/// `creators` clients at once; the ids of those created.
async fn create_batched(
    target: &Target,
    count: usize,
    creators: usize,
    batch: usize,
    recorder: &mut Recorder,
    errors: &Arc<FirstError>,
) -> Vec<Uuid> {
    let bar = target.progress(count as u64, "create-batch");
    let next = Arc::new(AtomicUsize::new(0));
    let mut handles = Vec::new();
    for _ in 0..creators {
        let (client, next, bar, errors) = (
            target.client.clone(),
            next.clone(),
            bar.clone(),
            errors.clone(),
        );
        handles.push(tokio::spawn(async move {
            let mut local = Recorder::new();
            let mut ids = Vec::new();
            loop {
                let first = next.fetch_add(batch, Ordering::Relaxed);
                if first >= count {
                    break;
                }
                let items = (first..count.min(first + batch))
                    .map(|i| CreateTask {
                        title: format!("bench task {i}"),
                        task_type: "analysis".into(),
                        input: Some(json!({ "n": i })),
                        ..Default::default()
                    })
                    .collect::<Vec<_>>();
                let sent = items.len() as u64;
                let t = Instant::now();
                match client.tasks().create_batch(&CreateBatch { items }).await {
                    Ok(answers) => {
                        local.record(CREATE, t.elapsed());
                        for answer in answers {
                            match answer.task {
                                Some(task) => ids.push(task.id),
                                None => local.errors += 1,
                            }
                        }
                    }
                    Err(e) => {
                        local.errors += 1;
                        errors.note(&e);
                    }
                }
                bar.inc(sent);
            }
            (local, ids)
        }));
    }
    let ids = join_creators(handles, count, recorder).await;
    bar.finish_and_clear();
    ids
}

/// The lifecycle on `create-batch`, `claim-batch` and `complete-batch`.
pub async fn run(target: &Target, args: &LifecycleArgs, batch: usize) -> Result<Outcome> {
    let creators = args.creators.unwrap_or(args.agents).max(1);
    let errors = Arc::new(FirstError::default());
    let workers = register_workers(target, args.agents, batch).await?;
    let mut recorder = Recorder::new();

    let started = Instant::now();
    let created = create_batched(target, args.tasks, creators, batch, &mut recorder, &errors).await;
    let create_time = started.elapsed();

    let drain_started = Instant::now();
    let bar = target.progress(created.len() as u64, "lifecycle --batch");
    let mut handles = Vec::new();
    for worker_id in workers {
        let client = target.client.clone();
        let bar = bar.clone();
        let errors = errors.clone();
        handles.push(tokio::spawn(async move {
            let mut local = Recorder::new();
            let mut completed = 0u64;
            let mut failures = 0u32;
            let claim = ClaimBatch {
                limit: batch as i64,
                start: true,
                ..Default::default()
            };
            while failures <= 100 {
                let t = Instant::now();
                let claimed = match client.workers().claim_batch(worker_id, &claim).await {
                    Ok(claimed) => claimed,
                    Err(e) => {
                        local.errors += 1;
                        errors.note(&e);
                        failures += 1;
                        continue;
                    }
                };
                local.record(CLAIM, t.elapsed());
                // Nothing claimable: every task is taken (the queue was
                // filled before the drain started).
                if claimed.is_empty() {
                    break;
                }
                let items = claimed
                    .iter()
                    .map(|c| CompleteBatchItem {
                        task_id: c.task.id,
                        agent_id: Some(c.agent_id),
                        output: Some(json!({ "ok": true })),
                        ..Default::default()
                    })
                    .collect();
                let t = Instant::now();
                match client
                    .tasks()
                    .complete_batch(&CompleteBatch { items })
                    .await
                {
                    Ok(answers) => {
                        local.record(COMPLETE, t.elapsed());
                        for answer in answers {
                            match answer.error {
                                None => {
                                    completed += 1;
                                    bar.inc(1);
                                }
                                Some(_) => {
                                    local.errors += 1;
                                    failures += 1;
                                }
                            }
                        }
                    }
                    Err(e) => {
                        local.errors += 1;
                        errors.note(&e);
                        failures += 1;
                    }
                }
            }
            (local, completed)
        }));
    }
    let mut completed = 0u64;
    for handle in handles {
        if let Ok((local, done)) = handle.await {
            recorder.merge(local);
            completed += done;
        }
    }
    bar.finish_and_clear();
    let drain_time = drain_started.elapsed();
    let total = started.elapsed();
    errors.report();

    let requests = recorder.count(CREATE) + recorder.count(CLAIM) + recorder.count(COMPLETE);
    let results = drain_results(
        created.len() as u64,
        completed,
        requests,
        total,
        create_time,
        drain_time,
    );
    Ok(Outcome {
        workload: "lifecycle",
        parameters: json!({
            "tasks": args.tasks, "agents": args.agents, "creators": creators, "batch": batch,
        }),
        duration: total,
        results,
        latency: recorder.summaries(),
        errors: recorder.errors,
    })
}
