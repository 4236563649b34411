//! `orch bench claim-latency`: claims arrive at a fixed rate (open loop:
//! an arrival does not wait for the previous answer), so queueing shows up
//! in the percentiles. Latency is measured from each arrival's scheduled
//! time, which counts any time spent waiting for a free agent or a
//! connection (no coordinated omission), to the claim's answer. Each claimed
//! task is then completed (not timed: the clock stopped at the claim's
//! answer) so its agent can claim again.
//!
//! Without `--rate`, a calibration phase first measures the maximum rate
//! (C agents in a closed claim → complete loop) and the run uses half of it.

use super::stats::{self, Recorder};
use super::{FirstError, Outcome, Target, create_tasks, register_agents};
use anyhow::{Result, bail};
use clap::Args;
use orchestrator_client::Client;
use orchestrator_client::api::{ClaimTask, CompleteTask};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use uuid::Uuid;

#[derive(Debug, Clone, Args)]
pub struct ClaimLatencyArgs {
    /// Claims per second; default: half the maximum measured by calibration.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Seconds of open-loop load.
    #[arg(long, default_value_t = 10)]
    pub duration: u64,
    /// Agents available to the open loop (an arrival takes a free one).
    #[arg(long, default_value_t = 128)]
    pub agents: usize,
    /// Tasks for the calibration phase (closed loop, `--calibrate-agents` agents).
    #[arg(long, default_value_t = 4_000)]
    pub calibrate_tasks: usize,
    /// Agents in the calibration phase's closed loop.
    #[arg(long, default_value_t = 32)]
    pub calibrate_agents: usize,
}

/// Claims a task for `agent_id` and completes it; `None` when there was
/// nothing to claim, else when the claim was sent and when it was answered.
async fn claim_and_complete(
    client: &Client,
    agent_id: Uuid,
) -> std::result::Result<Option<(Instant, Instant)>, orchestrator_client::Error> {
    let sent = Instant::now();
    let Some(task) = client
        .tasks()
        .claim(&ClaimTask {
            agent_id,
            ..Default::default()
        })
        .await?
    else {
        return Ok(None);
    };
    let answered = Instant::now();
    client
        .tasks()
        .complete(
            task.id,
            &CompleteTask {
                agent_id: Some(agent_id),
                ..Default::default()
            },
        )
        .await?;
    Ok(Some((sent, answered)))
}

pub async fn run(target: &Target, args: ClaimLatencyArgs) -> Result<Outcome> {
    if args.duration == 0 || args.agents == 0 {
        bail!("--duration and --agents must be at least 1");
    }
    let errors = Arc::new(FirstError::default());
    let mut setup = Recorder::new();
    let agents = register_agents(
        &target.client,
        args.agents.max(args.calibrate_agents),
        "bench-claim",
    )
    .await?;

    // Calibration: the maximum claim (+ complete) rate in a closed loop.
    let (rate, max_rate) = match args.rate {
        Some(rate) if rate > 0.0 => (rate, None),
        Some(_) => bail!("--rate must be positive"),
        None => {
            create_tasks(target, args.calibrate_tasks, 16, &mut setup, &errors).await;
            let bar = target.progress(args.calibrate_tasks as u64, "calibrate");
            let started = Instant::now();
            let mut handles = Vec::new();
            for &agent_id in agents.iter().take(args.calibrate_agents.max(1)) {
                let client = target.client.clone();
                let bar = bar.clone();
                let errors = errors.clone();
                handles.push(tokio::spawn(async move {
                    let mut n = 0u64;
                    let mut failures = 0;
                    loop {
                        match claim_and_complete(&client, agent_id).await {
                            Ok(Some(_)) => {
                                n += 1;
                                bar.inc(1);
                            }
                            Ok(None) => break,
                            Err(e) => {
                                errors.note(&e);
                                failures += 1;
                                if failures > 100 {
                                    break;
                                }
                            }
                        }
                    }
                    n
                }));
            }
            let mut claimed = 0;
            for handle in handles {
                claimed += handle.await.unwrap_or(0);
            }
            bar.finish_and_clear();
            let max = stats::rate(claimed, started.elapsed());
            if max <= 0.0 {
                errors.report();
                bail!("calibration claimed nothing");
            }
            (max / 2.0, Some(max))
        }
    };

    // The open loop's queue, filled before the clock starts.
    let arrivals = (rate * args.duration as f64).ceil() as u64;
    let prefill = (arrivals as f64 * 1.05).ceil() as usize + 10;
    create_tasks(target, prefill, 16, &mut setup, &errors).await;

    let (free_tx, free_rx) = tokio::sync::mpsc::unbounded_channel::<Uuid>();
    for &agent_id in agents.iter().take(args.agents) {
        let _ = free_tx.send(agent_id);
    }
    let free_rx = Arc::new(tokio::sync::Mutex::new(free_rx));
    let recorder = Arc::new(Mutex::new(Recorder::new()));
    let empty = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let bar = target.progress(arrivals, "claims");
    let period = Duration::from_secs_f64(1.0 / rate);
    let started = Instant::now();
    // The arrival clock runs on a thread of its own: tokio's timers tick in
    // whole milliseconds, which made every arrival up to 1 ms late (the
    // generator's lag counted as the server's latency); a thread's sleep
    // wakes within tens of microseconds.
    let runtime = tokio::runtime::Handle::current();
    let client = target.client.clone();
    let shared = (recorder.clone(), errors.clone(), empty.clone(), bar.clone());
    let clock = std::thread::spawn(move || {
        let (recorder, errors, empty, bar) = shared;
        let mut handles = Vec::with_capacity(arrivals as usize);
        for i in 0..arrivals {
            let scheduled = started + period.mul_f64(i as f64);
            if let Some(ahead) = scheduled.checked_duration_since(Instant::now()) {
                std::thread::sleep(ahead);
            }
            let client = client.clone();
            let free_rx = free_rx.clone();
            let free_tx = free_tx.clone();
            let recorder = recorder.clone();
            let errors = errors.clone();
            let empty = empty.clone();
            let bar = bar.clone();
            handles.push(runtime.spawn(async move {
                let agent_id = free_rx.lock().await.recv().await;
                let Some(agent_id) = agent_id else { return };
                let outcome = claim_and_complete(&client, agent_id).await;
                let _ = free_tx.send(agent_id);
                let mut recorder = recorder.lock().unwrap_or_else(|e| e.into_inner());
                match outcome {
                    Ok(Some((sent, answered))) => {
                        // From the scheduled arrival to the claim's answer: the
                        // wait for a free agent counts, the complete does not.
                        let from_arrival = answered.saturating_duration_since(scheduled);
                        recorder.record("claim (from arrival)", from_arrival);
                        recorder.record("POST /tasks/claim", answered - sent);
                        // The part of it before the claim was sent: the wait for
                        // a free agent plus the generator's own lateness.
                        recorder.record(
                            "wait (arrival to send)",
                            sent.saturating_duration_since(scheduled),
                        );
                    }
                    Ok(None) => {
                        empty.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    Err(e) => {
                        recorder.errors += 1;
                        errors.note(&e);
                    }
                }
                bar.inc(1);
            }));
        }
        handles
    });
    let handles = tokio::task::spawn_blocking(move || clock.join())
        .await?
        .map_err(|_| anyhow::anyhow!("the arrival clock panicked"))?;
    for handle in handles {
        let _ = handle.await;
    }
    bar.finish_and_clear();
    let elapsed = started.elapsed();
    errors.report();
    let recorder = Arc::try_unwrap(recorder)
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .unwrap_or_default();
    let claimed = recorder.count("POST /tasks/claim");
    let summaries = recorder.summaries();
    let arrival = summaries.get("claim (from arrival)");

    let mut results = BTreeMap::new();
    results.insert("target_rate_per_s", json!(stats::round3(rate)));
    results.insert("max_rate_per_s", json!(max_rate));
    results.insert("achieved_rate_per_s", json!(stats::rate(claimed, elapsed)));
    results.insert("claims", json!(claimed));
    results.insert(
        "empty_claims",
        json!(empty.load(std::sync::atomic::Ordering::Relaxed)),
    );
    results.insert("claim_p50_ms", json!(arrival.map(|l| l.p50_ms)));
    results.insert("claim_p99_ms", json!(arrival.map(|l| l.p99_ms)));
    Ok(Outcome {
        workload: "claim-latency",
        parameters: json!({
            "rate": args.rate, "duration_s": args.duration, "agents": args.agents,
            "calibrate_tasks": args.calibrate_tasks, "calibrate_agents": args.calibrate_agents,
        }),
        duration: elapsed,
        results,
        latency: summaries,
        errors: recorder.errors + setup.errors,
    })
}
