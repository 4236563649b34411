//! `orch bench stream`: wake-up latency. A waiting worker holds
//! `GET /events/stream?type=task.created` open; a producer creates tasks one
//! at a time, `--interval-ms` apart. The latency of a task is from just
//! before its `POST /tasks` is sent to the moment the worker's stream yields
//! its `task.created` event, so it includes the create request itself (an
//! upper bound of commit → wake-up; the create latency is reported beside
//! it).

use super::stats::{self, Recorder};
use super::{FirstError, Outcome, Target};
use anyhow::{Context, Result, bail};
use clap::Args;
use futures_util::StreamExt;
use orchestrator_client::api::{CreateTask, EventFilter};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use uuid::Uuid;

#[derive(Debug, Clone, Args)]
pub struct StreamArgs {
    /// Tasks to create (one wake-up each).
    #[arg(long, default_value_t = 1_000)]
    pub tasks: usize,
    /// Pause between two creates, in milliseconds.
    #[arg(long, default_value_t = 5)]
    pub interval_ms: u64,
}

type Seen = Arc<Mutex<HashMap<Uuid, Instant>>>;

pub async fn run(target: &Target, args: StreamArgs) -> Result<Outcome> {
    if args.tasks == 0 {
        bail!("--tasks must be at least 1");
    }
    let errors = FirstError::default();
    let seen: Seen = Arc::new(Mutex::new(HashMap::new()));
    let (first_tx, mut first_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let filter = EventFilter {
        event_type: Some("task.created".into()),
        ..Default::default()
    };
    let mut events = target.client.events().stream(&filter);
    let listener = {
        let seen = seen.clone();
        tokio::spawn(async move {
            while let Some(item) = events.next().await {
                let now = Instant::now();
                if let Ok(event) = item {
                    seen.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(event.entity_id, now);
                    let _ = first_tx.send(());
                }
            }
        })
    };
    let create = |title: String| CreateTask {
        title,
        task_type: "analysis".into(),
        ..Default::default()
    };
    // Warm-up: the stream is open once it delivers the first task.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        target
            .client
            .tasks()
            .create(&create("bench stream warm-up".into()))
            .await
            .context("cannot create a task")?;
        match tokio::time::timeout(Duration::from_millis(500), first_rx.recv()).await {
            Ok(Some(())) => break,
            _ if Instant::now() > deadline => {
                listener.abort();
                bail!("the event stream delivered nothing within 10 s");
            }
            _ => {}
        }
    }

    let mut recorder = Recorder::new();
    let mut sent: Vec<(Uuid, Instant)> = Vec::with_capacity(args.tasks);
    let bar = target.progress(args.tasks as u64, "wake-ups");
    let started = Instant::now();
    for i in 0..args.tasks {
        let t = Instant::now();
        match target
            .client
            .tasks()
            .create(&create(format!("bench stream {i}")))
            .await
        {
            Ok(task) => {
                recorder.record("POST /tasks", t.elapsed());
                sent.push((task.id, t));
            }
            Err(e) => {
                recorder.errors += 1;
                errors.note(&e);
            }
        }
        bar.inc(1);
        if args.interval_ms > 0 {
            tokio::time::sleep(Duration::from_millis(args.interval_ms)).await;
        }
    }
    // Let the last events arrive.
    let wait_until = Instant::now() + Duration::from_secs(5);
    loop {
        let all = {
            let seen = seen.lock().unwrap_or_else(|e| e.into_inner());
            sent.iter().all(|(id, _)| seen.contains_key(id))
        };
        if all || Instant::now() > wait_until {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    listener.abort();
    bar.finish_and_clear();
    let elapsed = started.elapsed();
    let mut missed = 0u64;
    {
        let seen = seen.lock().unwrap_or_else(|e| e.into_inner());
        for (id, t) in &sent {
            match seen.get(id) {
                Some(at) => recorder.record("wake-up", at.saturating_duration_since(*t)),
                None => missed += 1,
            }
        }
    }
    errors.report();
    let summaries = recorder.summaries();
    let wake = summaries.get("wake-up");
    let mut results = BTreeMap::new();
    results.insert("wakeups", json!(recorder.count("wake-up")));
    results.insert("missed", json!(missed));
    results.insert("wakeup_p50_ms", json!(wake.map(|l| l.p50_ms)));
    results.insert("wakeup_p99_ms", json!(wake.map(|l| l.p99_ms)));
    results.insert(
        "creates_per_s",
        json!(stats::rate(sent.len() as u64, elapsed)),
    );
    Ok(Outcome {
        workload: "stream",
        parameters: json!({ "tasks": args.tasks, "interval_ms": args.interval_ms }),
        duration: elapsed,
        results,
        latency: summaries,
        errors: recorder.errors + missed,
    })
}
