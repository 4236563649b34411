//! `orch bench noop`: the server's own ceiling. C clients call
//! `GET /api/v1/auth/me` back to back: the same pipeline as every API call
//! (router, request id, API-key authentication with its cache, rate-limit
//! check, JSON envelope) and no database write, so it bounds what any route
//! can do on this machine. A lifecycle task costs four requests, so
//! `requests_per_s / 4` is the lifecycle's ceiling.

use super::stats::{self, Recorder};
use super::{FirstError, Outcome, Target};
use anyhow::{Result, bail};
use clap::Args;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Args)]
pub struct NoopArgs {
    /// Concurrent clients.
    #[arg(long, default_value_t = 32)]
    pub clients: usize,
    /// Seconds of load.
    #[arg(long, default_value_t = 10)]
    pub duration: u64,
}

pub async fn run(target: &Target, args: NoopArgs) -> Result<Outcome> {
    if args.clients == 0 || args.duration == 0 {
        bail!("--clients and --duration must be at least 1");
    }
    let errors = Arc::new(FirstError::default());
    let bar = target.progress(args.duration, "seconds");
    let deadline = Instant::now() + Duration::from_secs(args.duration);
    let started = Instant::now();
    let mut handles = Vec::new();
    for _ in 0..args.clients {
        let client = target.client.clone();
        let errors = errors.clone();
        handles.push(tokio::spawn(async move {
            let mut local = Recorder::new();
            while Instant::now() < deadline {
                let t = Instant::now();
                match client.auth().me().await {
                    Ok(_) => local.record("GET /auth/me", t.elapsed()),
                    Err(e) => {
                        local.errors += 1;
                        errors.note(&e);
                        if local.errors > 100 {
                            break;
                        }
                    }
                }
            }
            local
        }));
    }
    {
        let bar = bar.clone();
        let seconds = args.duration;
        tokio::spawn(async move {
            for _ in 0..seconds {
                tokio::time::sleep(Duration::from_secs(1)).await;
                bar.inc(1);
            }
        });
    }
    let mut recorder = Recorder::new();
    for handle in handles {
        if let Ok(local) = handle.await {
            recorder.merge(local);
        }
    }
    bar.finish_and_clear();
    let elapsed = started.elapsed();
    errors.report();
    let requests = recorder.count("GET /auth/me");
    let mut results = BTreeMap::new();
    results.insert("requests", json!(requests));
    results.insert("requests_per_s", json!(stats::rate(requests, elapsed)));
    Ok(Outcome {
        workload: "noop",
        parameters: json!({ "clients": args.clients, "duration_s": args.duration }),
        duration: elapsed,
        results,
        latency: recorder.summaries(),
        errors: recorder.errors,
    })
}
