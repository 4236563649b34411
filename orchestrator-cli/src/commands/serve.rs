//! `orch serve`: runs the control plane in this process.

use anyhow::Context;
use clap::{Args, ValueEnum};
use orchestrator_server::ServerConfig;
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use tracing_subscriber::EnvFilter;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "ORCH_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// `postgres://...` for PostgreSQL (several replicas may share it);
    /// default: an embedded SQLite file in the data directory.
    #[arg(long, env = "ORCH_DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
    /// Where the embedded database lives (default: the user's data directory).
    #[arg(long, env = "ORCH_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Requests a minute per API key; 0 turns the limiter off.
    #[arg(long, env = "ORCH_RATE_LIMIT_PER_MINUTE", default_value_t = orchestrator_server::config::DEFAULT_RATE_LIMIT_PER_MINUTE)]
    pub rate_limit_per_minute: u32,
    /// Database connections to keep at most.
    #[arg(long, env = "ORCH_MAX_CONNECTIONS", default_value_t = 10)]
    pub max_connections: u32,
    /// Writer connections with group commit; 0 picks the backend's default
    /// (SQLite: 1, its one writer; PostgreSQL: 2, the claims on the first and
    /// the combined starts, completions and creates on the second, which
    /// gives way to the first when it waits for a row lock past 50 ms).
    #[arg(long, env = "ORCH_DB_WRITERS", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=64))]
    pub db_writers: u32,
    /// Most write requests one database commit may carry (group commit); 1
    /// turns group commit off.
    #[arg(long, env = "ORCH_GROUP_COMMIT_MAX", default_value_t = orchestrator_core::store::GroupCommit::default().max_batch as u32, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub group_commit_max: u32,
    /// Microseconds after which an open write batch is committed even while
    /// more requests wait to join it [default: 2000 on SQLite, 10000 on
    /// PostgreSQL, whose statements are network round trips].
    #[arg(long, env = "ORCH_GROUP_COMMIT_DELAY_US", value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub group_commit_delay_us: Option<u64>,
    /// Log format on stderr.
    #[arg(long, env = "ORCH_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// A directory that replaces the bundled community playbook catalog.
    #[arg(long, env = "ORCH_CATALOG_DIR")]
    pub catalog_dir: Option<PathBuf>,
    /// Seconds between liveness sweeps (silent agents and workers, task
    /// timeouts).
    #[arg(long, env = "ORCH_LIVENESS_INTERVAL_SECONDS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub liveness_interval_seconds: u64,
    /// Seconds an inactive agent's task stays held before it is released.
    #[arg(long, env = "ORCH_LIVENESS_GRACE_SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(0..=86400))]
    pub liveness_grace_seconds: u64,
    /// Let verify-git-access reach loopback, link-local and private
    /// addresses and file:// paths.
    #[arg(long, env = "ORCH_ALLOW_PRIVATE_NETWORK", default_value_t = false, action = clap::ArgAction::Set)]
    pub allow_private_network: bool,
    /// A directory that replaces the bundled execution environment catalog.
    #[arg(long, env = "ORCH_ENV_CATALOG_DIR")]
    pub env_catalog_dir: Option<PathBuf>,
    /// Where environment verification runs: `container` (docker or podman
    /// on PATH) or `host` (the server's own shell).
    #[arg(long, env = "ORCH_PROBE", value_enum, default_value_t = Probe::Container)]
    pub probe: Probe,
    /// A second address serving the dashboard (and the API it calls), for
    /// example 127.0.0.1:3000; off by default (the dashboard is always at
    /// `/` on --listen).
    #[arg(long, env = "ORCH_DASHBOARD_LISTEN")]
    pub dashboard_listen: Option<SocketAddr>,
    /// Also serve `GET /metrics` on this address, without credentials (bind
    /// it where only your Prometheus reaches; without it, `/metrics` on
    /// --listen needs an admin key).
    #[arg(long, env = "ORCH_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,
    /// Seconds a request head may take from its first byte (and a new
    /// connection to send its first request).
    #[arg(long, env = "ORCH_HEADER_READ_TIMEOUT_SECONDS", default_value_t = orchestrator_server::config::DEFAULT_HEADER_READ_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_read_timeout_seconds: u64,
    /// Seconds a keep-alive connection may wait for its next request before
    /// it is closed.
    #[arg(long, env = "ORCH_IDLE_TIMEOUT_SECONDS", default_value_t = orchestrator_server::config::DEFAULT_IDLE_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub idle_timeout_seconds: u64,
    /// Client connections held at most; 0 derives the cap from the
    /// open-file limit (raised to its hard limit at start), which also
    /// bounds a larger number. At the cap the longest-idle connection makes
    /// room; with every connection busy a new one gets 503.
    #[arg(long, env = "ORCH_MAX_OPEN_CONNECTIONS", default_value_t = 0)]
    pub max_open_connections: usize,
    /// Server-sent event streams open at most on this replica; past it a
    /// new stream gets 503.
    #[arg(long, env = "ORCH_MAX_STREAMS", default_value_t = orchestrator_server::config::DEFAULT_MAX_STREAMS)]
    pub max_streams: usize,
    /// SQLite: the WAL size in bytes past which the checkpointer restarts
    /// the WAL; under sustained writes the WAL file stays near this plus
    /// two seconds of writes, and it is truncated once writes stop.
    #[arg(long, env = "ORCH_SQLITE_WAL_RESTART_BYTES", default_value_t = orchestrator_core::store::DEFAULT_WAL_RESTART_BYTES, value_parser = clap::value_parser!(u64).range(orchestrator_core::store::MIN_WAL_RESTART_BYTES..))]
    pub sqlite_wal_restart_bytes: u64,
    /// Days ended workflows, ended tasks, events and log rows are kept;
    /// 0 keeps them forever. Artifacts and workspace files stay.
    #[arg(long, env = "ORCH_HISTORY_RETENTION_DAYS", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=36500))]
    pub history_retention_days: u32,
    /// Seconds between retention sweeps (expired request ids and sessions,
    /// and history past --history-retention-days); a sweep with more left
    /// than it deleted in half a second runs again at once.
    #[arg(long, env = "ORCH_RETENTION_INTERVAL_SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub retention_interval_seconds: u64,
    /// Export request spans as OTLP traces (protobuf over HTTP) to this
    /// collector, e.g. http://127.0.0.1:4318 (sent to `<URL>/v1/traces`).
    #[cfg(feature = "otel")]
    #[arg(long, env = "OTEL_EXPORTER_OTLP_ENDPOINT")]
    pub otel_endpoint: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Probe {
    Container,
    Host,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    // Kept until the server stops; dropping it flushes the last spans.
    #[cfg(feature = "otel")]
    let otel = match &args.otel_endpoint {
        Some(endpoint) => {
            orchestrator_client::install_crypto_provider();
            Some(
                orchestrator_server::otel::OtelTraces::new(endpoint)
                    .with_context(|| format!("cannot export traces to {endpoint}"))?,
            )
        }
        None => None,
    };
    #[cfg(feature = "otel")]
    init_tracing(args.log_format, otel.as_ref());
    #[cfg(not(feature = "otel"))]
    init_tracing(args.log_format);
    let database_url = database_url(args.database_url, args.data_dir)?;
    let mut config = ServerConfig::new(args.listen, database_url);
    config.rate_limit_per_minute = args.rate_limit_per_minute;
    config.core.max_connections = args.max_connections;
    config.core.db_writers = args.db_writers;
    config.core.group_commit = orchestrator_core::store::GroupCommit {
        max_batch: args.group_commit_max as usize,
        max_delay: args
            .group_commit_delay_us
            .map(std::time::Duration::from_micros),
    };
    configure_secrets(&mut config.core);
    config.core.catalog_dir = args.catalog_dir;
    config.core.liveness_interval = std::time::Duration::from_secs(args.liveness_interval_seconds);
    config.core.liveness_grace = std::time::Duration::from_secs(args.liveness_grace_seconds);
    config.core.allow_private_network = args.allow_private_network;
    config.core.env_catalog_dir = args.env_catalog_dir;
    config.core.host_probe = args.probe == Probe::Host;
    config.core.sqlite_wal_restart_bytes = args.sqlite_wal_restart_bytes;
    config.core.history_retention = (args.history_retention_days > 0)
        .then(|| std::time::Duration::from_secs(u64::from(args.history_retention_days) * 86_400));
    config.core.retention_interval =
        std::time::Duration::from_secs(args.retention_interval_seconds);
    config.dashboard_listen = args.dashboard_listen;
    config.metrics_listen = args.metrics_listen;
    config.header_read_timeout = std::time::Duration::from_secs(args.header_read_timeout_seconds);
    config.idle_timeout = std::time::Duration::from_secs(args.idle_timeout_seconds);
    config.max_open_connections = args.max_open_connections;
    config.max_streams = args.max_streams;
    orchestrator_server::serve(config).await?;
    Ok(())
}

/// The database `orch serve` (and `orch admin`) opens: `--database-url`,
/// or the SQLite file in the data directory (the store creates the
/// directory, readable by this user only).
pub(crate) fn database_url(
    database_url: Option<String>,
    data_dir: Option<PathBuf>,
) -> anyhow::Result<String> {
    if let Some(url) = database_url {
        return Ok(url);
    }
    let dir = match data_dir {
        Some(dir) => dir,
        None => dirs::data_dir()
            .context("no data directory on this system; pass --data-dir")?
            .join("orch"),
    };
    Ok(ServerConfig::sqlite_url(&dir))
}

/// The secrets and bootstrap keys from the environment.
pub(crate) fn configure_secrets(core: &mut orchestrator_core::CoreConfig) {
    core.secret_key = env_nonempty("ORCH_SECRET_KEY");
    core.bootstrap_admin_key = env_nonempty("ORCH_BOOTSTRAP_ADMIN_KEY");
    core.bootstrap_service_key = env_nonempty("ORCH_BOOTSTRAP_SERVICE_KEY");
}

fn env_nonempty(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Logs on stderr (text or JSON), filtered by `ORCH_LOG`; with the `otel`
/// feature and an endpoint, the same spans also go out as OTLP traces.
fn init_tracing(
    format: LogFormat,
    #[cfg(feature = "otel")] otel: Option<&orchestrator_server::otel::OtelTraces>,
) {
    use tracing_subscriber::prelude::*;
    let filter =
        EnvFilter::try_from_env("ORCH_LOG").unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn"));
    let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let log = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(colour);
    let log = match format {
        LogFormat::Text => log.boxed(),
        LogFormat::Json => log.json().boxed(),
    };
    let subscriber = tracing_subscriber::registry().with(log).with(filter);
    #[cfg(feature = "otel")]
    let subscriber = subscriber.with(otel.map(|o| o.layer()));
    subscriber.init();
}
