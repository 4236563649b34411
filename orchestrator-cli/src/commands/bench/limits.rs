//! `orch bench limits`: the lifecycle twice on one server, first plain,
//! then with flow limits: each task names one of `--keys` concurrency keys
//! (round robin, each of limit `--limit`) and the one rate key (limit
//! `--rate-limit` per `--rate-period` seconds). Reports both tasks/s and
//! their ratio (limited over plain), measured in the same run.

use super::lifecycle::{self, LifecycleArgs};
use super::{Decorate, Outcome, Target};
use anyhow::{Result, bail};
use clap::Args;
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;

#[derive(Debug, Clone, Args)]
pub struct LimitsArgs {
    /// Tasks per lifecycle (each of the two runs).
    #[arg(long, default_value_t = 10_000)]
    pub tasks: usize,
    /// Concurrent agents.
    #[arg(long, default_value_t = 32)]
    pub agents: usize,
    /// Concurrency keys the tasks are spread over.
    #[arg(long, default_value_t = 100)]
    pub keys: usize,
    /// Each key's concurrency limit.
    #[arg(long, default_value_t = 4)]
    pub limit: i64,
    /// The rate key's claims per window.
    #[arg(long, default_value_t = 1_000_000)]
    pub rate_limit: i64,
    /// The rate key's window in seconds.
    #[arg(long, default_value_t = 60)]
    pub rate_period: i64,
}

pub async fn run(target: &Target, args: LimitsArgs) -> Result<Outcome> {
    if args.keys == 0 {
        bail!("--keys must be at least 1");
    }
    let started = Instant::now();
    let lifecycle_args = LifecycleArgs {
        tasks: args.tasks,
        agents: args.agents,
        creators: None,
        batch: None,
        preload: None,
        retention: false,
    };
    let plain = lifecycle::run(target, lifecycle_args.clone()).await?;
    let limits = target.client.limits();
    for k in 0..args.keys {
        limits
            .set_concurrency(&format!("bench-key-{k}"), args.limit)
            .await?;
    }
    limits
        .set_rate("bench-rate", args.rate_limit, args.rate_period)
        .await?;
    let keys = args.keys;
    let decorate: Decorate = Arc::new(move |i, request| {
        request.concurrency_key = Some(format!("bench-key-{}", i % keys));
        request.rate_limit_key = Some("bench-rate".into());
    });
    let limited = lifecycle::run_with(target, lifecycle_args, Some(decorate)).await?;
    let rate = |o: &Outcome| {
        o.results
            .get("tasks_per_s")
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0)
    };
    let (plain_rate, limited_rate) = (rate(&plain), rate(&limited));
    let mut results = std::collections::BTreeMap::new();
    results.insert("plain_tasks_per_s", json!(plain_rate));
    results.insert("limited_tasks_per_s", json!(limited_rate));
    results.insert(
        "ratio",
        json!(if plain_rate > 0.0 {
            super::stats::round3(limited_rate / plain_rate)
        } else {
            0.0
        }),
    );
    results.insert("plain_completed", plain.results["tasks_completed"].clone());
    results.insert(
        "limited_completed",
        limited.results["tasks_completed"].clone(),
    );
    let mut latency = limited.latency;
    for (route, summary) in plain.latency {
        latency.insert(format!("plain {route}"), summary);
    }
    Ok(Outcome {
        workload: "limits",
        parameters: json!({
            "tasks": args.tasks, "agents": args.agents, "keys": args.keys, "limit": args.limit,
            "rate_limit": args.rate_limit, "rate_period_seconds": args.rate_period,
        }),
        duration: started.elapsed(),
        results,
        latency,
        errors: plain.errors + limited.errors,
    })
}
