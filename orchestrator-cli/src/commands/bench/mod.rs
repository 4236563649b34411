//! `orch bench`: a load generator for any deployment (`--url`, `--api-key`)
//! or for a server it starts itself (`--embedded sqlite|postgres://...`).
//!
//! Workloads (one module each): `lifecycle` (create, then C agents loop
//! claim → start → complete), `claim-latency` (open loop at a fixed arrival
//! rate), `ingest` (log batches from C clients), `stream` (wake-up latency
//! of a waiting worker), `noop` (`GET /api/v1/auth/me`: route + auth +
//! envelope, the server's own ceiling), `limits` (the lifecycle plain and
//! with flow limits, as a ratio), `soak` (the lifecycle at a fixed rate for
//! minutes, reported per minute). Every run states its parameters,
//! backend, machine (cores) and build profile; percentiles come from
//! hdrhistogram. Build with `--release`: a debug build says so in its report.
//! Every request goes through the SDK, as a user's client would.

pub mod claim_latency;
pub mod embedded;
pub mod ingest;
pub mod lifecycle;
mod lifecycle_batch;
pub mod limits;
pub mod noop;
pub mod preload;
pub mod retention;
pub mod soak;
pub mod stats;
pub mod stream;

use crate::cli::{GlobalOpts, OutputFormat};
use crate::config;
use crate::output::{self, print_out};
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use embedded::{Embedded, ServerMemory};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use orchestrator_client::Client;
use serde::Serialize;
use serde_json::Value;
use stats::Latency;
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(subcommand)]
    pub workload: Workload,
}

/// Where the load goes.
#[derive(Debug, Clone, Args)]
pub struct TargetArgs {
    /// Start a child `orch serve` for the run: `sqlite` (temporary data
    /// directory) or a `postgres://` URL (a fresh database is created on that
    /// server and dropped after). Without it, `--url`/`--api-key` (or the
    /// saved profile) name the deployment.
    #[arg(long, global = true)]
    pub embedded: Option<String>,
    /// Database connections of the embedded server (its `--max-connections`).
    #[arg(long, global = true)]
    pub server_max_connections: Option<u32>,
    /// No progress bar.
    #[arg(long, global = true)]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
pub enum Workload {
    /// N tasks created, then C agents loop claim → start → complete until all are done.
    Lifecycle(lifecycle::LifecycleArgs),
    /// Open-loop claims at a fixed arrival rate (default: half the measured maximum).
    ClaimLatency(claim_latency::ClaimLatencyArgs),
    /// Log batches from C clients: rows/s and request latency.
    Ingest(ingest::IngestArgs),
    /// Wake-up latency: task created → a waiting worker's event stream has it.
    Stream(stream::StreamArgs),
    /// `GET /api/v1/auth/me` from C clients: the server's own ceiling.
    Noop(noop::NoopArgs),
    /// The lifecycle plain, then with flow limits (K concurrency keys of
    /// limit L and one rate key): tasks/s of both and their ratio.
    Limits(limits::LimitsArgs),
    /// The lifecycle at a fixed open-loop rate for minutes (plus optional
    /// log rows): per minute tasks done, p50/p99, server RSS and database size.
    Soak(soak::SoakArgs),
}

/// What a workload runs against.
pub struct Target {
    pub client: Client,
    pub url: String,
    pub backend: String,
    pub embedded: Option<Embedded>,
    pub quiet: bool,
}

impl Target {
    /// A progress bar on stderr (hidden with `--quiet` or off a terminal).
    pub fn progress(&self, length: u64, message: &str) -> ProgressBar {
        let bar = if self.quiet {
            ProgressBar::hidden()
        } else {
            ProgressBar::with_draw_target(Some(length), ProgressDrawTarget::stderr())
        };
        bar.set_style(
            ProgressStyle::with_template(
                "{msg:>12} [{elapsed_precise}] {wide_bar} {pos}/{len} ({per_sec}, eta {eta})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.set_message(message.to_owned());
        bar
    }
}

/// Facts about the run, printed with every result.
#[derive(Debug, Clone, Serialize)]
pub struct Environment {
    pub backend: String,
    /// `embedded` (a child server this run started) or `remote`.
    pub target: &'static str,
    pub url: String,
    pub cores: usize,
    pub build_profile: &'static str,
    pub os: &'static str,
    pub arch: &'static str,
    pub started_at: String,
}

/// The whole result of one run (`-o json` prints exactly this).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub workload: &'static str,
    pub parameters: Value,
    pub environment: Environment,
    pub duration_s: f64,
    pub results: BTreeMap<&'static str, Value>,
    pub latency_ms: BTreeMap<String, Latency>,
    pub errors: u64,
    /// The embedded server's memory (absent for a remote target).
    pub server: Option<ServerMemory>,
}

pub fn build_profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

pub async fn run(global: &GlobalOpts, args: BenchArgs) -> Result<()> {
    if cfg!(debug_assertions) {
        eprintln!(
            "warning: this is a debug build; benchmark with `cargo run --release -p orchestrator-cli -- bench ...`"
        );
    }
    let started_at = orchestrator_client::api::Timestamp::now().to_string();
    let mut target = connect(global, &args.target).await?;
    let environment = Environment {
        backend: target.backend.clone(),
        target: if target.embedded.is_some() {
            "embedded"
        } else {
            "remote"
        },
        url: target.url.clone(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        build_profile: build_profile(),
        os: std::env::consts::OS,
        arch: std::env::consts::ARCH,
        started_at,
    };
    let outcome = match args.workload {
        Workload::Lifecycle(a) => lifecycle::run(&target, a).await,
        Workload::ClaimLatency(a) => claim_latency::run(&target, a).await,
        Workload::Ingest(a) => ingest::run(&target, a).await,
        Workload::Stream(a) => stream::run(&target, a).await,
        Workload::Noop(a) => noop::run(&target, a).await,
        Workload::Limits(a) => limits::run(&target, a).await,
        Workload::Soak(a) => soak::run(&target, a, global.format() == OutputFormat::Json).await,
    };
    let server = target.embedded.as_ref().and_then(Embedded::memory);
    if let Some(embedded) = target.embedded.as_mut() {
        embedded.stop().await;
    }
    let outcome = outcome?;
    let report = Report {
        workload: outcome.workload,
        parameters: outcome.parameters,
        environment,
        duration_s: stats::round3(outcome.duration.as_secs_f64()),
        results: outcome.results,
        latency_ms: outcome.latency,
        errors: outcome.errors,
        server,
    };
    print_report(global.format(), &report);
    Ok(())
}

/// What a workload hands back.
pub struct Outcome {
    pub workload: &'static str,
    pub parameters: Value,
    pub duration: Duration,
    pub results: BTreeMap<&'static str, Value>,
    pub latency: BTreeMap<String, Latency>,
    pub errors: u64,
}

async fn connect(global: &GlobalOpts, target: &TargetArgs) -> Result<Target> {
    let (client, url, embedded) = match &target.embedded {
        Some(spec) => {
            let embedded = Embedded::start(spec, target.server_max_connections).await?;
            let client = Client::builder(&embedded.url)
                .bearer(&embedded.api_key)
                .build()?;
            (client, embedded.url.clone(), Some(embedded))
        }
        None => {
            let client = config::client(global)?;
            (client.clone(), client.base_url().to_owned(), None)
        }
    };
    let backend = match &embedded {
        Some(e) => e.backend.to_owned(),
        None => client
            .health()
            .ready()
            .await
            .ok()
            .map(|ready| ready.database)
            .unwrap_or_else(|| "unknown".into()),
    };
    client
        .auth()
        .me()
        .await
        .context("the bench credential is not accepted by the server")?;
    Ok(Target {
        client,
        url,
        backend,
        embedded,
        quiet: target.quiet,
    })
}

fn print_report(format: OutputFormat, report: &Report) {
    if format == OutputFormat::Json {
        output::emit(format, report, || output::fields(&[]));
        return;
    }
    let mut rows: Vec<(&str, String)> = vec![
        ("workload", report.workload.to_owned()),
        ("backend", report.environment.backend.clone()),
        (
            "target",
            format!("{} ({})", report.environment.target, report.environment.url),
        ),
        (
            "machine",
            format!(
                "{} cores, {}/{}",
                report.environment.cores, report.environment.os, report.environment.arch
            ),
        ),
        ("build", report.environment.build_profile.to_owned()),
        ("started_at", report.environment.started_at.clone()),
        ("parameters", compact(&report.parameters)),
        ("duration_s", report.duration_s.to_string()),
    ];
    for (name, value) in &report.results {
        rows.push((name, compact(value)));
    }
    rows.push(("errors", report.errors.to_string()));
    if let Some(server) = &report.server {
        rows.push((
            "server_rss_mib",
            format!("peak {} (now {})", server.peak_rss_mib, server.rss_mib),
        ));
    }
    print_out(&output::fields(&rows).to_string());
    let mut latency = output::table(&[
        "route", "count", "mean ms", "p50 ms", "p95 ms", "p99 ms", "max ms",
    ]);
    for (route, l) in &report.latency_ms {
        latency.add_row(vec![
            route.clone(),
            l.count.to_string(),
            l.mean_ms.to_string(),
            l.p50_ms.to_string(),
            l.p95_ms.to_string(),
            l.p99_ms.to_string(),
            l.max_ms.to_string(),
        ]);
    }
    print_out(&latency.to_string());
}

fn compact(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{k}={}", compact(v)))
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    }
}

/// Keeps the first error message of a run (printed on stderr at the end).
#[derive(Debug, Default)]
pub struct FirstError(std::sync::Mutex<Option<String>>);

impl FirstError {
    pub fn note(&self, error: &dyn std::fmt::Display) {
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(error.to_string());
        }
    }

    pub fn report(&self) {
        if let Some(message) = self.0.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            eprintln!("first error: {message}");
        }
    }
}

/// Registers `count` agents for the run (heartbeat interval 3600 s, so
/// none goes inactive mid-run).
pub async fn register_agents(
    client: &Client,
    count: usize,
    prefix: &str,
) -> Result<Vec<uuid::Uuid>> {
    let run = uuid::Uuid::new_v4().simple().to_string();
    let mut ids = Vec::with_capacity(count);
    for i in 0..count {
        let agent = client
            .agents()
            .register(&orchestrator_client::api::RegisterAgent {
                name: format!("{prefix}-{}-{i}", &run[..8]),
                heartbeat_interval_seconds: Some(3600),
                ..Default::default()
            })
            .await
            .context("cannot register a bench agent")?;
        ids.push(agent.id);
    }
    Ok(ids)
}

/// Creates `count` tasks from `concurrency` clients; returns their ids.
pub async fn create_tasks(
    target: &Target,
    count: usize,
    concurrency: usize,
    recorder: &mut stats::Recorder,
    errors: &std::sync::Arc<FirstError>,
) -> Vec<uuid::Uuid> {
    create_tasks_with(target, count, concurrency, recorder, errors, None).await
}

/// What a workload adds to task `i`'s create (e.g. flow-limit keys).
pub type Decorate =
    std::sync::Arc<dyn Fn(usize, &mut orchestrator_client::api::CreateTask) + Send + Sync>;

/// [`create_tasks`], with `decorate` applied to each request.
pub async fn create_tasks_with(
    target: &Target,
    count: usize,
    concurrency: usize,
    recorder: &mut stats::Recorder,
    errors: &std::sync::Arc<FirstError>,
    decorate: Option<Decorate>,
) -> Vec<uuid::Uuid> {
    let bar = target.progress(count as u64, "create");
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut handles = Vec::new();
    for _ in 0..concurrency.max(1) {
        let client = target.client.clone();
        let next = next.clone();
        let bar = bar.clone();
        let errors = errors.clone();
        let decorate = decorate.clone();
        handles.push(tokio::spawn(async move {
            let mut local = stats::Recorder::new();
            let mut ids = Vec::new();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= count {
                    break;
                }
                let mut request = orchestrator_client::api::CreateTask {
                    title: format!("bench task {i}"),
                    task_type: "analysis".into(),
                    input: Some(serde_json::json!({ "n": i })),
                    ..Default::default()
                };
                if let Some(decorate) = &decorate {
                    decorate(i, &mut request);
                }
                let t = std::time::Instant::now();
                match client.tasks().create(&request).await {
                    Ok(task) => {
                        local.record("POST /tasks", t.elapsed());
                        ids.push(task.id);
                    }
                    Err(e) => {
                        local.errors += 1;
                        errors.note(&e);
                    }
                }
                bar.inc(1);
            }
            (local, ids)
        }));
    }
    let ids = join_creators(handles, count, recorder).await;
    bar.finish_and_clear();
    ids
}

/// The ids the creating clients made, their records merged into
/// `recorder`.
pub(super) async fn join_creators(
    handles: Vec<tokio::task::JoinHandle<(stats::Recorder, Vec<uuid::Uuid>)>>,
    count: usize,
    recorder: &mut stats::Recorder,
) -> Vec<uuid::Uuid> {
    let mut ids = Vec::with_capacity(count);
    for handle in handles {
        if let Ok((local, mine)) = handle.await {
            recorder.merge(local);
            ids.extend(mine);
        }
    }
    ids
}
