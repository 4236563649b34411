//! Server configuration: where to listen and the limits of the HTTP layer,
//! around the core's own configuration.

use orchestrator_core::CoreConfig;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

/// Default requests a minute per key.
pub const DEFAULT_RATE_LIMIT_PER_MINUTE: u32 = 1200;
/// Largest JSON body a route accepts unless it says otherwise (1 MiB).
pub const DEFAULT_JSON_BODY_LIMIT: usize = 1024 * 1024;
/// Largest body of a file upload route (16 MiB).
pub const UPLOAD_BODY_LIMIT: usize = 16 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Address to bind; port 0 picks a free port.
    pub listen: SocketAddr,
    pub core: CoreConfig,
    /// Requests a minute per API key (and per client address for the
    /// unauthenticated auth routes); 0 turns the limiter off.
    pub rate_limit_per_minute: u32,
    /// How long shutdown waits for in-flight requests.
    pub shutdown_grace: Duration,
    /// A second address serving the same application (the dashboard and the
    /// API it calls on one origin); `None` by default.
    pub dashboard_listen: Option<SocketAddr>,
    /// An address serving only `GET /metrics`, without credentials (for a
    /// Prometheus scraper on a private network); `None` by default, when
    /// `/metrics` on the API address needs an admin key.
    pub metrics_listen: Option<SocketAddr>,
    /// How long a request head may take from its first byte (and a new
    /// connection to send its first one).
    pub header_read_timeout: Duration,
    /// How long a keep-alive connection may wait for its next request.
    pub idle_timeout: Duration,
    /// Client connections held at most; 0 derives the cap from the
    /// open-file limit (which the server raises to its hard limit at start),
    /// and a larger number is lowered to it.
    pub max_open_connections: usize,
    /// Server-sent event streams open at most on this replica; past it a
    /// new stream is refused with `503`.
    pub max_streams: usize,
}

/// Default time a request head may take to arrive (from its first byte, or
/// from the connection's opening for its first request).
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Default time a keep-alive connection may wait for its next request.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Default cap on open event streams per replica.
pub const DEFAULT_MAX_STREAMS: usize = 5000;

impl ServerConfig {
    pub fn new(listen: SocketAddr, database_url: impl Into<String>) -> Self {
        Self {
            listen,
            core: CoreConfig::new(database_url),
            rate_limit_per_minute: DEFAULT_RATE_LIMIT_PER_MINUTE,
            shutdown_grace: Duration::from_secs(30),
            dashboard_listen: None,
            metrics_listen: None,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_open_connections: 0,
            max_streams: DEFAULT_MAX_STREAMS,
        }
    }

    /// The embedded default: a SQLite file in `data_dir`.
    pub fn sqlite_url(data_dir: &Path) -> String {
        format!("sqlite://{}", data_dir.join("orch.db").display())
    }
}
