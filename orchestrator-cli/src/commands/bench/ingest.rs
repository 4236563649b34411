//! `orch bench ingest`: C clients each send log batches of `--batch` rows
//! back to back for `--duration` seconds. Reports rows/s and the latency of
//! `POST /logs/ingest`.

use super::stats::{self, Recorder};
use super::{FirstError, Outcome, Target};
use anyhow::{Result, bail};
use clap::Args;
use orchestrator_client::api::{LogCategory, LogLevel, LogStatus, NewLogEntry};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Args)]
pub struct IngestArgs {
    /// Rows per request (1 to 1000).
    #[arg(long, default_value_t = 500)]
    pub batch: usize,
    /// Concurrent clients.
    #[arg(long, default_value_t = 8)]
    pub clients: usize,
    /// Seconds of load.
    #[arg(long, default_value_t = 10)]
    pub duration: u64,
    /// Stop after this many batches in all (default: run for `--duration`).
    #[arg(long)]
    pub batches: Option<u64>,
}

/// A batch shaped like a runtime's: a tool call row with a small payload.
fn batch(size: usize, client: usize) -> Vec<NewLogEntry> {
    (0..size)
        .map(|i| {
            let mut entry = NewLogEntry::new(LogCategory::Tool, "tool.exec");
            entry.level = Some(LogLevel::Info);
            entry.status = Some(LogStatus::Completed);
            entry.duration_ms = Some((i % 100) as i64);
            entry.payload = Some(json!({ "client": client, "i": i, "cmd": "cargo test" }));
            entry
        })
        .collect()
}

pub async fn run(target: &Target, args: IngestArgs) -> Result<Outcome> {
    if args.batch == 0 || args.batch > 1000 || args.clients == 0 {
        bail!("--batch must be 1 to 1000 and --clients at least 1");
    }
    let errors = Arc::new(FirstError::default());
    let rows = Arc::new(AtomicU64::new(0));
    let sent = Arc::new(AtomicU64::new(0));
    let length = match args.batches {
        Some(n) => n,
        None => args.duration,
    };
    let bar = target.progress(
        length,
        if args.batches.is_some() {
            "batches"
        } else {
            "seconds"
        },
    );
    let deadline = Instant::now() + Duration::from_secs(args.duration);
    let started = Instant::now();
    let mut handles = Vec::new();
    for c in 0..args.clients {
        let client = target.client.clone();
        let errors = errors.clone();
        let rows = rows.clone();
        let sent = sent.clone();
        let bar = bar.clone();
        let limit = args.batches;
        let entries = batch(args.batch, c);
        handles.push(tokio::spawn(async move {
            let mut local = Recorder::new();
            loop {
                match limit {
                    Some(n) => {
                        if sent.fetch_add(1, Ordering::Relaxed) >= n {
                            break;
                        }
                        bar.inc(1);
                    }
                    None if Instant::now() >= deadline => break,
                    None => {}
                }
                let t = Instant::now();
                match client.logs().ingest(entries.clone()).await {
                    Ok(ingested) => {
                        local.record("POST /logs/ingest", t.elapsed());
                        rows.fetch_add(ingested.inserted, Ordering::Relaxed);
                    }
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
    if args.batches.is_none() {
        let bar = bar.clone();
        tokio::spawn(async move {
            for _ in 0..length {
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
    let rows = rows.load(Ordering::Relaxed);
    let requests = recorder.count("POST /logs/ingest");
    let mut results = BTreeMap::new();
    results.insert("rows", json!(rows));
    results.insert("rows_per_s", json!(stats::rate(rows, elapsed)));
    results.insert("requests", json!(requests));
    results.insert("requests_per_s", json!(stats::rate(requests, elapsed)));
    Ok(Outcome {
        workload: "ingest",
        parameters: json!({
            "batch": args.batch, "clients": args.clients,
            "duration_s": args.duration, "batches": args.batches,
        }),
        duration: elapsed,
        results,
        latency: recorder.summaries(),
        errors: recorder.errors,
    })
}
