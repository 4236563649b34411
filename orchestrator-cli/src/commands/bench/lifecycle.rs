//! `orch bench lifecycle`: N tasks created by `--creators` clients, then C
//! agents each loop claim → start → complete until the queue is empty.
//! Reports tasks/s end to end (N over create + drain time), the two phases'
//! rates and p50/p95/p99/max per route. One HTTP request per step, as an
//! agent runtime would make them, so a task costs four requests.

use super::stats::{self, Record, Recorder};
use super::{Decorate, FirstError, Outcome, Target, create_tasks_with, register_agents};
use anyhow::{Result, bail};
use clap::Args;
use orchestrator_client::Client;
use orchestrator_client::api::{ClaimTask, CompleteTask, StartTask};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;
use uuid::Uuid;

#[derive(Debug, Clone, Args)]
pub struct LifecycleArgs {
    /// Tasks to create and complete.
    #[arg(long, default_value_t = 10_000)]
    pub tasks: usize,
    /// Concurrent agents (each one HTTP request at a time).
    #[arg(long, default_value_t = 32)]
    pub agents: usize,
    /// Concurrent clients creating the tasks (default: as many as agents).
    #[arg(long)]
    pub creators: Option<usize>,
    /// Run the drain on the batched protocol: each of --agents clients is a
    /// worker with N agents that claims (and starts) up to N tasks per
    /// `claim-batch` and completes them in one `complete-batch`. At most 50:
    /// a worker registers at most 50 agents, and each claimed task is held
    /// by one of them.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=50))]
    pub batch: Option<u16>,
    /// Run on one server on the empty database, then again after writing N
    /// finished tasks (with their events and log rows) straight into its
    /// database; each phase runs three times (once with --retention), and
    /// the report compares their medians: both rates and their ratio
    /// (`scale_ratio`), and both claim p99s (`claim_p99_ratio`). Needs
    /// `--embedded`.
    #[arg(long, value_name = "N")]
    pub preload: Option<u64>,
    /// With --preload: age the history two days and restart the server with
    /// a one-day history retention before the second run, which then runs
    /// while the server deletes the preload; reports how fast it went
    /// (`retention_tasks_per_s`, `retention_rows_per_s`).
    #[arg(long, requires = "preload")]
    pub retention: bool,
}

/// How one agent's turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    /// A task was claimed, started and completed.
    Completed,
    /// The claim found nothing to do.
    Empty,
    /// The claim or the complete failed (a failed start is noted and the
    /// complete still tried, as a runtime would).
    Failed,
}

/// One agent's turn of the lifecycle: claim → start → complete, one HTTP
/// request each, every step timed into `record` under its route (failures
/// counted there and the first one kept in `errors`). Shared by
/// `lifecycle` (agents in a closed loop) and `soak` (one turn per arrival).
pub async fn turn(
    client: &Client,
    agent_id: Uuid,
    record: &mut impl Record,
    errors: &FirstError,
) -> Turn {
    let t = Instant::now();
    let claim = ClaimTask {
        agent_id,
        ..Default::default()
    };
    let task = match client.tasks().claim(&claim).await {
        Ok(Some(task)) => task,
        Ok(None) => return Turn::Empty,
        Err(e) => {
            record.error();
            errors.note(&e);
            return Turn::Failed;
        }
    };
    record.record("POST /tasks/claim", t.elapsed());
    let start = StartTask {
        agent_id: Some(agent_id),
        ..Default::default()
    };
    let t = Instant::now();
    match client.tasks().start(task.id, &start).await {
        Ok(_) => record.record("POST /tasks/:id/start", t.elapsed()),
        Err(e) => {
            record.error();
            errors.note(&e);
        }
    }
    let complete = CompleteTask {
        agent_id: Some(agent_id),
        output: Some(json!({ "ok": true })),
        ..Default::default()
    };
    let t = Instant::now();
    match client.tasks().complete(task.id, &complete).await {
        Ok(_) => {
            record.record("POST /tasks/:id/complete", t.elapsed());
            Turn::Completed
        }
        Err(e) => {
            record.error();
            errors.note(&e);
            Turn::Failed
        }
    }
}

pub async fn run(target: &Target, args: LifecycleArgs) -> Result<Outcome> {
    if let Some(n) = args.preload {
        return super::preload::run(target, args, n).await;
    }
    run_with(target, args, None).await
}

/// [`run`] with `decorate` applied to each create (flow-limit keys: then a
/// claim that finds nothing while tasks remain waits for a slot instead of
/// ending the agent's loop).
pub async fn run_with(
    target: &Target,
    args: LifecycleArgs,
    decorate: Option<Decorate>,
) -> Result<Outcome> {
    let limited = decorate.is_some();
    if args.tasks == 0 || args.agents == 0 {
        bail!("--tasks and --agents must be at least 1");
    }
    if let Some(batch) = args.batch {
        if limited {
            bail!("--batch does not run with flow limits");
        }
        return super::lifecycle_batch::run(target, &args, usize::from(batch)).await;
    }
    let creators = args.creators.unwrap_or(args.agents).max(1);
    let errors = Arc::new(FirstError::default());
    let agents = register_agents(&target.client, args.agents, "bench-lifecycle").await?;
    let mut recorder = Recorder::new();

    let started = Instant::now();
    let created = create_tasks_with(
        target,
        args.tasks,
        creators,
        &mut recorder,
        &errors,
        decorate,
    )
    .await;
    let remaining = Arc::new(std::sync::atomic::AtomicUsize::new(created.len()));
    let create_time = started.elapsed();

    let drain_started = Instant::now();
    let bar = target.progress(created.len() as u64, "lifecycle");
    let mut handles = Vec::new();
    for agent_id in agents {
        let client = target.client.clone();
        let bar = bar.clone();
        let errors = errors.clone();
        let remaining = remaining.clone();
        handles.push(tokio::spawn(async move {
            let mut local = Recorder::new();
            let mut completed = 0u64;
            let mut failures = 0u32;
            loop {
                match turn(&client, agent_id, &mut local, &errors).await {
                    Turn::Completed => {
                        remaining.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
                        completed += 1;
                        bar.inc(1);
                    }
                    // With flow limits a full key answers nothing while tasks
                    // remain: wait for a slot.
                    Turn::Empty
                        if limited && remaining.load(std::sync::atomic::Ordering::Relaxed) > 0 =>
                    {
                        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                    }
                    // Nothing pending: every task is claimed (the queue was
                    // filled before the agents started).
                    Turn::Empty => break,
                    Turn::Failed => {
                        failures += 1;
                        if failures > 100 {
                            break;
                        }
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

    let requests = created.len() as u64 + recorder.count("POST /tasks/claim") * 3;
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
        parameters: json!({ "tasks": args.tasks, "agents": args.agents, "creators": creators }),
        duration: total,
        results,
        latency: recorder.summaries(),
        errors: recorder.errors,
    })
}

/// The throughput figures every lifecycle run reports, whatever protocol it
/// drove: so the plain and the batched runs' JSON files carry the same
/// fields and can be compared line by line.
pub(super) fn drain_results(
    created: u64,
    completed: u64,
    requests: u64,
    total: std::time::Duration,
    create_time: std::time::Duration,
    drain_time: std::time::Duration,
) -> BTreeMap<&'static str, serde_json::Value> {
    let mut results = BTreeMap::new();
    results.insert("tasks_created", json!(created));
    results.insert("tasks_completed", json!(completed));
    results.insert("tasks_per_s", json!(stats::rate(completed, total)));
    results.insert("create_per_s", json!(stats::rate(created, create_time)));
    results.insert(
        "drain_tasks_per_s",
        json!(stats::rate(completed, drain_time)),
    );
    results.insert("requests_per_s", json!(stats::rate(requests, total)));
    results
}
