//! Configuration of the control plane itself (what the server's config wraps).

use crate::clock::{Clock, SystemClock};
use std::sync::Arc;
use std::time::Duration;

/// Everything the core needs to open its store and issue credentials.
#[derive(Debug, Clone)]
pub struct CoreConfig {
    /// `sqlite://PATH` or `postgres://...`.
    pub database_url: String,
    /// Connection pool upper bound.
    pub max_connections: u32,
    /// Writer connections with group commit (0: the backend's default; see
    /// [`crate::store::StoreOptions::writers`]).
    pub db_writers: u32,
    /// How many requests one commit may carry and how long the first may
    /// wait (see [`crate::store::GroupCommit`]).
    pub group_commit: crate::store::GroupCommit,
    /// Master secret; generated and stored in the database when absent.
    pub secret_key: Option<String>,
    /// An `orch_admin_...` key made valid for the default tenant at start.
    pub bootstrap_admin_key: Option<String>,
    /// An `orch_service_...` key made valid for the default tenant at start.
    pub bootstrap_service_key: Option<String>,
    /// Lifetime of access tokens.
    pub access_token_ttl: Duration,
    /// Lifetime of refresh sessions.
    pub refresh_token_ttl: Duration,
    /// How long a credential check may be served from memory.
    pub credential_cache_ttl: Duration,
    /// How often the server runs the liveness and timeout sweep.
    pub liveness_interval: Duration,
    /// How long an inactive agent's task stays held before it is released.
    pub liveness_grace: Duration,
    /// A directory that replaces the bundled community catalog
    /// (`ORCH_CATALOG_DIR`); see [`crate::catalog`] for its layout.
    pub catalog_dir: Option<std::path::PathBuf>,
    /// How often the background runner looks for hot tables that grew by
    /// [`crate::statistics::GROWTH`] since their statistics (PostgreSQL;
    /// default 60 s).
    pub statistics_interval: Duration,
    /// SQLite: the WAL size in bytes past which a `RESTART` checkpoint
    /// starts the WAL over (`ORCH_SQLITE_WAL_RESTART_BYTES`; default
    /// [`crate::store::DEFAULT_WAL_RESTART_BYTES`], 64 MiB). Under sustained
    /// writes the WAL file stays near this plus two seconds of writes, and
    /// a file larger than this is truncated once writes stop.
    pub sqlite_wal_restart_bytes: u64,
    /// How long ended runs, events and log rows are kept
    /// (`ORCH_HISTORY_RETENTION_DAYS`); `None`, the default, keeps them.
    /// See [`crate::retention`].
    pub history_retention: Option<Duration>,
    /// How often the retention sweep runs when it last found nothing more
    /// to delete (default 60 s; a sweep that ran out of its time budget
    /// comes back at once).
    pub retention_interval: Duration,
    /// How often an idle stream sends a heartbeat (default 15 s).
    pub stream_heartbeat: Duration,
    /// How long a stream waits for a client that takes no frames before it
    /// sends `event: error` `{"error":"slow_consumer"}` and closes (30 s).
    pub stream_slow_consumer_timeout: Duration,
    /// Whether URLs the server itself contacts (verify-git-access) may name
    /// loopback, link-local or private addresses or `file://` paths
    /// (`ORCH_ALLOW_PRIVATE_NETWORK=true`). Off by default: a tenant admin
    /// must not probe the operator's network through the server.
    pub allow_private_network: bool,
    // Execution environments (issue 11).
    /// A directory that replaces the bundled environment catalog
    /// (`ORCH_ENV_CATALOG_DIR`).
    pub env_catalog_dir: Option<std::path::PathBuf>,
    /// Run the verification probe in a local shell instead of a container
    /// (`ORCH_PROBE=host`).
    pub host_probe: bool,
    /// Container runtimes tried in order for verification (names on `PATH`
    /// or paths): `docker`, then `podman`.
    pub container_runtimes: Vec<String>,
    /// How long one verification may take (pull included).
    pub probe_timeout: Duration,
    /// Where the control plane reads "now" (the system clock; tests give a
    /// [`crate::clock::ManualClock`] to move time without sleeping).
    pub clock: Arc<dyn Clock>,
}

impl CoreConfig {
    /// Defaults for a database URL: 1 h access tokens, 7 d refresh sessions.
    pub fn new(database_url: impl Into<String>) -> Self {
        Self {
            database_url: database_url.into(),
            max_connections: 10,
            db_writers: 0,
            group_commit: crate::store::GroupCommit::default(),
            secret_key: None,
            bootstrap_admin_key: None,
            bootstrap_service_key: None,
            access_token_ttl: Duration::from_secs(3600),
            refresh_token_ttl: Duration::from_secs(7 * 24 * 3600),
            credential_cache_ttl: Duration::from_secs(2),
            liveness_interval: Duration::from_secs(10),
            liveness_grace: Duration::from_secs(60),
            catalog_dir: None,
            statistics_interval: Duration::from_secs(60),
            sqlite_wal_restart_bytes: crate::store::DEFAULT_WAL_RESTART_BYTES,
            history_retention: None,
            retention_interval: Duration::from_secs(60),
            stream_heartbeat: Duration::from_secs(15),
            stream_slow_consumer_timeout: Duration::from_secs(30),
            allow_private_network: false,
            env_catalog_dir: None,
            host_probe: false,
            container_runtimes: vec!["docker".into(), "podman".into()],
            probe_timeout: Duration::from_secs(300),
            clock: Arc::new(SystemClock::new()),
        }
    }
}
