//! `orch bench soak --rate R --minutes M`: the task lifecycle at a fixed
//! open-loop rate for minutes, reported minute by minute, to see what only
//! shows over time: a WAL or a table that keeps growing, plans that go
//! stale as tables grow, memory that is never given back (issue 33,
//! defects 8 and 9).
//!
//! Tasks arrive at `--rate` per second whatever the server answers (an
//! arrival does not wait for the previous one). Each arrival creates a task,
//! then takes a free agent (of `--agents`) for one turn of the lifecycle
//! (claim → start → complete, [`super::lifecycle::turn`]). With `--log-rate`
//! log rows are ingested beside it, in a batch every 100 ms. Every minute
//! the run prints (and with `--json-file FILE` writes) the tasks done, p50/p99 of
//! the lifecycle calls (every create, claim, start and complete of the
//! minute) and of each route, the server's RSS, and the database's size: the
//! SQLite file and its WAL, or the PostgreSQL database and the dead and live
//! tuples of `tasks`. Sizes need to know where the server is: the embedded
//! server says so itself; for `--url`, pass `--server-pid`, `--sqlite-path`
//! or `--database-url`.

use super::lifecycle::{Turn, turn};
use super::stats::{self, Latency, Record, Recorder};
use super::{FirstError, Outcome, Target, register_agents};
use anyhow::{Context, Result, bail};
use clap::Args;
use orchestrator_client::api::{CreateTask, LogCategory, LogLevel, NewLogEntry};
use serde::Serialize;
use serde_json::{Value, json};
use sqlx::Connection;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use uuid::Uuid;

#[derive(Debug, Clone, Args)]
pub struct SoakArgs {
    /// Tasks per second (each created, claimed, started and completed).
    #[arg(long)]
    pub rate: f64,
    /// Minutes of load.
    #[arg(long)]
    pub minutes: u64,
    /// Log rows per second ingested beside the tasks (0: none).
    #[arg(long, default_value_t = 0.0)]
    pub log_rate: f64,
    /// Agents an arrival can take (a turn waits while all are busy, and
    /// that wait counts in `task (from arrival)`).
    #[arg(long, default_value_t = 64)]
    pub agents: usize,
    /// Write the per-minute report (and the run's parameters) to FILE as
    /// JSON; rewritten after every minute, so an interrupted run keeps its
    /// minutes. (`--json` alone is the global `-o json`: the whole report,
    /// minutes included, on stdout.)
    #[arg(long, value_name = "FILE")]
    pub json_file: Option<PathBuf>,
    /// PostgreSQL: turn autovacuum off for the hot tables before the load
    /// (`ALTER TABLE ... SET (autovacuum_enabled = false)`), to see that orch
    /// does not depend on it. Needs the embedded server or `--database-url`.
    #[arg(long)]
    pub autovacuum_off: bool,
    /// With `--url`: the server's process id, for its RSS.
    #[arg(long)]
    pub server_pid: Option<u32>,
    /// With `--url` on SQLite: the database file, for its and its WAL's size.
    #[arg(long)]
    pub sqlite_path: Option<PathBuf>,
    /// With `--url` on PostgreSQL: the database, for its size and the
    /// dead tuples of `tasks`.
    #[arg(long)]
    pub database_url: Option<String>,
}

/// The tables `--autovacuum-off` turns autovacuum off for.
const HOT_TABLES: [&str; 3] = ["tasks", "events", "logs"];

/// Lifecycle routes: what `lifecycle_p50_ms` / `lifecycle_p99_ms` cover.
const LIFECYCLE_ROUTES: [&str; 4] = [
    "POST /tasks",
    "POST /tasks/claim",
    "POST /tasks/:id/start",
    "POST /tasks/:id/complete",
];

/// One minute of the run.
#[derive(Debug, Clone, Serialize)]
pub struct Minute {
    /// 1 for the first minute.
    pub minute: u64,
    /// Tasks completed in the minute.
    pub tasks_done: u64,
    /// Tasks that arrived in the minute (`--rate` × 60 when the generator
    /// keeps up).
    pub arrivals: u64,
    /// Arrivals waiting for a free agent at the minute's end.
    pub backlog: u64,
    /// Failed requests in the minute.
    pub errors: u64,
    /// p50 / p99 of every lifecycle call of the minute.
    pub lifecycle_p50_ms: f64,
    pub lifecycle_p99_ms: f64,
    /// p99 from a task's arrival to its complete's answer (waits included).
    pub task_p99_ms: f64,
    /// Log rows ingested in the minute.
    pub log_rows: u64,
    /// Per route: p50, p99 and count.
    pub routes: BTreeMap<String, RouteMinute>,
    /// The server's resident memory at the minute's end.
    pub server_rss_mib: Option<f64>,
    /// SQLite: the database file and its WAL.
    pub sqlite_db_bytes: Option<u64>,
    pub sqlite_wal_bytes: Option<u64>,
    /// PostgreSQL: the database's size and `tasks`' dead and live tuples
    /// (`pg_stat_user_tables`).
    pub pg_database_bytes: Option<i64>,
    pub tasks_dead_tuples: Option<i64>,
    pub tasks_live_tuples: Option<i64>,
    /// The host's 1-minute load average (other work on the host shows here).
    pub load_1m: Option<f64>,
}

/// One route's minute.
#[derive(Debug, Clone, Serialize)]
pub struct RouteMinute {
    pub count: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

/// What `--json-file FILE` holds.
#[derive(Debug, Serialize)]
struct SoakFile<'a> {
    workload: &'static str,
    parameters: &'a Value,
    backend: &'a str,
    build_profile: &'static str,
    cores: usize,
    started_at: &'a str,
    minutes: &'a [Minute],
}

/// Where the server's size readings come from.
struct Probes {
    pid: Option<u32>,
    sqlite: Option<PathBuf>,
    postgres: Option<sqlx::PgConnection>,
}

impl Probes {
    async fn new(target: &Target, args: &SoakArgs) -> Result<Self> {
        let embedded = target.embedded.as_ref();
        let pid = args.server_pid.or(embedded.map(super::Embedded::pid));
        let sqlite = args.sqlite_path.clone().or_else(|| {
            embedded
                .and_then(|e| e.data_dir())
                .map(|d| d.join("orch.db"))
        });
        let url = args
            .database_url
            .clone()
            .or_else(|| embedded.and_then(super::Embedded::database_url));
        let postgres = match url {
            Some(url) => Some(
                sqlx::PgConnection::connect(&url)
                    .await
                    .context("cannot connect to the database for its size")?,
            ),
            None => None,
        };
        Ok(Self {
            pid,
            sqlite,
            postgres,
        })
    }

    async fn sample(&mut self, minute: &mut Minute) {
        if let Some(pid) = self.pid {
            minute.server_rss_mib = rss_mib(pid);
        }
        if let Some(path) = &self.sqlite {
            let size = |p: PathBuf| std::fs::metadata(p).map(|m| m.len()).ok();
            minute.sqlite_db_bytes = size(path.clone());
            let mut wal = path.clone().into_os_string();
            wal.push("-wal");
            minute.sqlite_wal_bytes = size(wal.into());
        }
        if let Some(conn) = self.postgres.as_mut() {
            let row: std::result::Result<(i64, Option<i64>, Option<i64>), _> = sqlx::query_as(
                "SELECT pg_database_size(current_database()), \
                 (SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'tasks' \
                  AND schemaname = current_schema()), \
                 (SELECT n_live_tup FROM pg_stat_user_tables WHERE relname = 'tasks' \
                  AND schemaname = current_schema())",
            )
            .fetch_one(&mut *conn)
            .await;
            if let Ok((size, dead, live)) = row {
                minute.pg_database_bytes = Some(size);
                minute.tasks_dead_tuples = dead;
                minute.tasks_live_tuples = live;
            }
        }
        minute.load_1m = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|l| l.split_whitespace().next()?.parse().ok());
    }
}

/// VmRSS of `pid` in MiB (Linux).
fn rss_mib(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some((kib / 1024.0 * 10.0).round() / 10.0)
}

/// The steps of one arrival, moved into the minute's recorder at its end
/// (a [`Recorder`] per arrival would allocate its histograms each time).
#[derive(Default)]
struct Steps {
    timings: Vec<(&'static str, Duration)>,
    errors: u64,
}

impl Record for Steps {
    fn record(&mut self, route: &'static str, elapsed: Duration) {
        self.timings.push((route, elapsed));
    }

    fn error(&mut self) {
        self.errors += 1;
    }
}

/// What the arrivals and the sampler share.
struct Shared {
    /// The current minute's timings; swapped out at each minute's end.
    minute: Mutex<Recorder>,
    /// The same, for all lifecycle routes together.
    lifecycle: Mutex<Recorder>,
    done: AtomicU64,
    arrived: AtomicU64,
    waiting: AtomicU64,
    in_flight: AtomicU64,
    log_rows: AtomicU64,
    errors: Arc<FirstError>,
}

impl Shared {
    fn add(&self, steps: Steps) {
        let mut minute = self.minute.lock().unwrap_or_else(|e| e.into_inner());
        let mut lifecycle = self.lifecycle.lock().unwrap_or_else(|e| e.into_inner());
        for (route, elapsed) in steps.timings {
            minute.record(route, elapsed);
            if LIFECYCLE_ROUTES.contains(&route) {
                lifecycle.record("lifecycle", elapsed);
            }
        }
        minute.errors += steps.errors;
    }
}

pub async fn run(target: &Target, args: SoakArgs, json_on_stdout: bool) -> Result<Outcome> {
    if args.rate.is_nan()
        || args.rate <= 0.0
        || args.minutes == 0
        || args.agents == 0
        || args.log_rate < 0.0
    {
        bail!(
            "--rate must be positive, --minutes and --agents at least 1, --log-rate not negative"
        );
    }
    let parameters = json!({
        "rate": args.rate, "minutes": args.minutes, "log_rate": args.log_rate,
        "agents": args.agents, "autovacuum_off": args.autovacuum_off,
    });
    let mut probes = Probes::new(target, &args).await?;
    if args.autovacuum_off {
        let Some(conn) = probes.postgres.as_mut() else {
            bail!(
                "--autovacuum-off needs PostgreSQL (--embedded postgres://... or --database-url)"
            );
        };
        for table in HOT_TABLES {
            // The names are ours, never input.
            let sql = format!("ALTER TABLE {table} SET (autovacuum_enabled = false)");
            sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
                .execute(&mut *conn)
                .await
                .with_context(|| format!("cannot turn autovacuum off for {table}"))?;
        }
    }
    let agents = register_agents(&target.client, args.agents, "bench-soak").await?;
    let (free_tx, free_rx) = tokio::sync::mpsc::unbounded_channel::<Uuid>();
    for agent_id in agents {
        let _ = free_tx.send(agent_id);
    }
    let free_rx = Arc::new(tokio::sync::Mutex::new(free_rx));
    let shared = Arc::new(Shared {
        minute: Mutex::new(Recorder::new()),
        lifecycle: Mutex::new(Recorder::new()),
        done: AtomicU64::new(0),
        arrived: AtomicU64::new(0),
        waiting: AtomicU64::new(0),
        in_flight: AtomicU64::new(0),
        log_rows: AtomicU64::new(0),
        errors: Arc::new(FirstError::default()),
    });
    let started_at = orchestrator_client::api::Timestamp::now().to_string();
    let total = Duration::from_secs(args.minutes * 60);
    let started = Instant::now();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));

    // The arrival clock, on a thread of its own (tokio's timers tick in
    // whole milliseconds; see claim_latency).
    let runtime = tokio::runtime::Handle::current();
    let period = Duration::from_secs_f64(1.0 / args.rate);
    let clock = {
        let (shared, client, stop) = (shared.clone(), target.client.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut i = 0u64;
            loop {
                let scheduled = started + period.mul_f64(i as f64);
                if scheduled >= started + total || stop.load(Ordering::Relaxed) {
                    break;
                }
                if let Some(ahead) = scheduled.checked_duration_since(Instant::now()) {
                    std::thread::sleep(ahead);
                }
                i += 1;
                shared.arrived.fetch_add(1, Ordering::Relaxed);
                shared.in_flight.fetch_add(1, Ordering::Relaxed);
                let (shared, client) = (shared.clone(), client.clone());
                let (free_rx, free_tx) = (free_rx.clone(), free_tx.clone());
                // Not awaited: `in_flight` says when the last one is done.
                drop(runtime.spawn(async move {
                    arrival(&client, i, scheduled, &shared, &free_rx, &free_tx).await;
                    shared.in_flight.fetch_sub(1, Ordering::Relaxed);
                }));
            }
        })
    };
    let logs = (args.log_rate > 0.0).then(|| {
        tokio::spawn(ingest_logs(
            target.client.clone(),
            args.log_rate,
            started + total,
            shared.clone(),
        ))
    });

    if !json_on_stdout {
        crate::output::print_out(&format!(
            "{:>4} {:>6} {:>6} {:>7} {:>8} {:>8} {:>8} {:>7} {:>9} {:>10} {:>10} {:>6}",
            "min",
            "done",
            "errors",
            "backlog",
            "p50 ms",
            "p99 ms",
            "task p99",
            "rss MiB",
            "log rows",
            "db MiB",
            "wal|dead",
            "load"
        ));
    }
    let mut minutes: Vec<Minute> = Vec::new();
    let mut all = Recorder::new();
    let (mut done_before, mut arrived_before, mut logs_before) = (0, 0, 0);
    for m in 1..=args.minutes {
        let end = started + Duration::from_secs(m * 60);
        tokio::time::sleep_until(end.into()).await;
        let recorder =
            std::mem::take(&mut *shared.minute.lock().unwrap_or_else(|e| e.into_inner()));
        let lifecycle =
            std::mem::take(&mut *shared.lifecycle.lock().unwrap_or_else(|e| e.into_inner()));
        let (done, arrived, logged) = (
            shared.done.load(Ordering::Relaxed),
            shared.arrived.load(Ordering::Relaxed),
            shared.log_rows.load(Ordering::Relaxed),
        );
        let summaries = recorder.summaries();
        let whole = lifecycle.summaries().remove("lifecycle");
        let mut minute = Minute {
            minute: m,
            tasks_done: done - done_before,
            arrivals: arrived - arrived_before,
            backlog: shared.waiting.load(Ordering::Relaxed),
            errors: recorder.errors,
            lifecycle_p50_ms: whole.as_ref().map_or(0.0, |l| l.p50_ms),
            lifecycle_p99_ms: whole.as_ref().map_or(0.0, |l| l.p99_ms),
            task_p99_ms: summaries
                .get("task (from arrival)")
                .map_or(0.0, |l| l.p99_ms),
            log_rows: logged - logs_before,
            routes: summaries
                .iter()
                .map(|(route, l)| (route.clone(), route_minute(l)))
                .collect(),
            server_rss_mib: None,
            sqlite_db_bytes: None,
            sqlite_wal_bytes: None,
            pg_database_bytes: None,
            tasks_dead_tuples: None,
            tasks_live_tuples: None,
            load_1m: None,
        };
        (done_before, arrived_before, logs_before) = (done, arrived, logged);
        probes.sample(&mut minute).await;
        let line = minute_line(&minute);
        if json_on_stdout {
            eprintln!("{line}");
        } else {
            crate::output::print_out(&line);
        }
        all.merge(recorder);
        minutes.push(minute);
        if let Some(path) = &args.json_file {
            write_json(path, &parameters, target, &started_at, &minutes)?;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let _ = tokio::task::spawn_blocking(move || clock.join()).await;
    if let Some(logs) = logs {
        let _ = logs.await;
    }
    // The last arrivals finish (not counted in any minute).
    let drain = Instant::now();
    while shared.in_flight.load(Ordering::Relaxed) > 0 && drain.elapsed() < Duration::from_secs(60)
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let elapsed = started.elapsed();
    shared.errors.report();
    let tail = std::mem::take(&mut *shared.minute.lock().unwrap_or_else(|e| e.into_inner()));
    all.merge(tail);

    let first = minutes.first().map_or(0.0, |m| m.lifecycle_p99_ms);
    let last = minutes.last().map_or(0.0, |m| m.lifecycle_p99_ms);
    let mut results = BTreeMap::new();
    results.insert(
        "tasks_arrived",
        json!(shared.arrived.load(Ordering::Relaxed)),
    );
    results.insert("tasks_done", json!(shared.done.load(Ordering::Relaxed)));
    results.insert(
        "tasks_per_s",
        json!(stats::rate(shared.done.load(Ordering::Relaxed), elapsed)),
    );
    results.insert("log_rows", json!(shared.log_rows.load(Ordering::Relaxed)));
    results.insert("first_minute_p99_ms", json!(first));
    results.insert("last_minute_p99_ms", json!(last));
    results.insert(
        "last_over_first_p99",
        json!(if first > 0.0 {
            stats::round3(last / first)
        } else {
            0.0
        }),
    );
    if json_on_stdout {
        // The table already showed them one line a minute.
        results.insert("minutes", serde_json::to_value(&minutes)?);
    }
    Ok(Outcome {
        workload: "soak",
        parameters,
        duration: elapsed,
        results,
        latency: all.summaries(),
        errors: all.errors,
    })
}

/// One arrival: create a task, then one lifecycle turn with a free agent.
async fn arrival(
    client: &orchestrator_client::Client,
    i: u64,
    scheduled: Instant,
    shared: &Shared,
    free_rx: &tokio::sync::Mutex<tokio::sync::mpsc::UnboundedReceiver<Uuid>>,
    free_tx: &tokio::sync::mpsc::UnboundedSender<Uuid>,
) {
    let mut steps = Steps::default();
    let request = CreateTask {
        title: format!("soak task {i}"),
        task_type: "analysis".into(),
        input: Some(json!({ "n": i })),
        ..Default::default()
    };
    let t = Instant::now();
    match client.tasks().create(&request).await {
        Ok(_) => steps.record("POST /tasks", t.elapsed()),
        Err(e) => {
            steps.error();
            shared.errors.note(&e);
            shared.add(steps);
            return;
        }
    }
    shared.waiting.fetch_add(1, Ordering::Relaxed);
    let agent_id = free_rx.lock().await.recv().await;
    shared.waiting.fetch_sub(1, Ordering::Relaxed);
    let Some(agent_id) = agent_id else {
        return;
    };
    let outcome = turn(client, agent_id, &mut steps, &shared.errors).await;
    let _ = free_tx.send(agent_id);
    if outcome == Turn::Completed {
        steps.record("task (from arrival)", scheduled.elapsed());
        shared.done.fetch_add(1, Ordering::Relaxed);
    }
    shared.add(steps);
}

/// Log rows at `rate` per second until `until`: a batch every 100 ms, each
/// sent without waiting for the previous one.
async fn ingest_logs(
    client: orchestrator_client::Client,
    rate: f64,
    until: Instant,
    shared: Arc<Shared>,
) {
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut owed = 0.0f64;
    let mut sent = Vec::new();
    while Instant::now() < until {
        tick.tick().await;
        owed += rate / 10.0;
        while owed >= 1.0 {
            let rows = (owed.floor() as usize).min(1000);
            owed -= rows as f64;
            let entries: Vec<NewLogEntry> = (0..rows)
                .map(|i| {
                    let mut entry = NewLogEntry::new(LogCategory::Tool, "soak.step");
                    entry.level = Some(LogLevel::Info);
                    entry.payload = Some(json!({ "i": i, "cmd": "cargo test" }));
                    entry
                })
                .collect();
            let (client, shared) = (client.clone(), shared.clone());
            sent.push(tokio::spawn(async move {
                let t = Instant::now();
                let mut steps = Steps::default();
                match client.logs().ingest(entries).await {
                    Ok(ingested) => {
                        steps.record("POST /logs/ingest", t.elapsed());
                        shared
                            .log_rows
                            .fetch_add(ingested.inserted, Ordering::Relaxed);
                    }
                    Err(e) => {
                        steps.error();
                        shared.errors.note(&e);
                    }
                }
                shared.add(steps);
            }));
        }
        sent.retain(|h| !h.is_finished());
    }
    for handle in sent {
        let _ = handle.await;
    }
}

fn route_minute(l: &Latency) -> RouteMinute {
    RouteMinute {
        count: l.count,
        p50_ms: l.p50_ms,
        p99_ms: l.p99_ms,
    }
}

fn minute_line(m: &Minute) -> String {
    let mib =
        |bytes: Option<u64>| bytes.map_or("-".into(), |b| format!("{:.1}", b as f64 / 1048576.0));
    let (db, second) = match (m.sqlite_db_bytes, m.pg_database_bytes) {
        (Some(db), _) => (mib(Some(db)), mib(m.sqlite_wal_bytes)),
        (None, Some(db)) => (
            mib(u64::try_from(db).ok()),
            m.tasks_dead_tuples.map_or("-".into(), |d| d.to_string()),
        ),
        (None, None) => ("-".into(), "-".into()),
    };
    format!(
        "{:>4} {:>6} {:>6} {:>7} {:>8} {:>8} {:>8} {:>7} {:>9} {:>10} {:>10} {:>6}",
        m.minute,
        m.tasks_done,
        m.errors,
        m.backlog,
        m.lifecycle_p50_ms,
        m.lifecycle_p99_ms,
        m.task_p99_ms,
        m.server_rss_mib.map_or("-".into(), |r| r.to_string()),
        m.log_rows,
        db,
        second,
        m.load_1m.map_or("-".into(), |l| l.to_string()),
    )
}

fn write_json(
    path: &std::path::Path,
    parameters: &Value,
    target: &Target,
    started_at: &str,
    minutes: &[Minute],
) -> Result<()> {
    let file = SoakFile {
        workload: "soak",
        parameters,
        backend: &target.backend,
        build_profile: super::build_profile(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        started_at,
        minutes,
    };
    let text = serde_json::to_string_pretty(&file)?;
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}
