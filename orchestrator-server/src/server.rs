//! Sockets and lifecycle: bind, accept, serve HTTP/1.1 with keep-alive, and
//! shut down gracefully (stop accepting, let in-flight requests finish within
//! the grace period).

use crate::app::App;
use crate::config::ServerConfig;
use crate::connections::{self, Connections, Limits};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use orchestrator_core::ControlPlane;
use orchestrator_core::api::Scope;
use orchestrator_core::control_plane::GeneratedBootstrapKey;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("could not open the control plane: {0}")]
    Core(#[from] orchestrator_core::Error),
    #[error("could not listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("could not wait for the shutdown signal: {0}")]
    Signal(std::io::Error),
}

/// A running server.
pub struct ServerHandle {
    addr: SocketAddr,
    dashboard_addr: Option<SocketAddr>,
    metrics_addr: Option<SocketAddr>,
    core: ControlPlane,
    generated_keys: Vec<GeneratedBootstrapKey>,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerHandle")
            .field("addr", &self.addr)
            .finish()
    }
}

impl ServerHandle {
    /// The bound address (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The bound dashboard address, when `dashboard_listen` was set.
    pub fn dashboard_addr(&self) -> Option<SocketAddr> {
        self.dashboard_addr
    }

    /// The bound metrics address, when `metrics_listen` was set.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_addr
    }

    /// The embedded control plane.
    pub fn control_plane(&self) -> &ControlPlane {
        &self.core
    }

    /// Bootstrap keys this first start generated; empty on later starts.
    pub fn generated_keys(&self) -> &[GeneratedBootstrapKey] {
        &self.generated_keys
    }

    /// Stops accepting, waits for in-flight requests (up to the grace
    /// period), then closes the database.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
        self.core.store().close().await;
    }
}

/// Binds the listeners, opens the control plane and starts serving in the
/// background. The addresses are bound first: a start that cannot listen
/// (a port in use) fails before it creates the database or generates the
/// first keys, so the next start still shows them.
pub async fn start(config: ServerConfig) -> Result<ServerHandle, ServeError> {
    // Descriptors first: the connection cap is derived from the limit.
    let descriptors = connections::raise_descriptor_limit();
    let (listener, addr) = bind(config.listen).await?;
    let dashboard = match config.dashboard_listen {
        Some(at) => Some(bind(at).await?),
        None => None,
    };
    let dashboard_addr = dashboard.as_ref().map(|(_, addr)| *addr);
    let metrics = match config.metrics_listen {
        Some(at) => Some(bind(at).await?),
        None => None,
    };
    let metrics_addr = metrics.as_ref().map(|(_, addr)| *addr);
    let core = ControlPlane::open(config.core.clone()).await?;
    let generated_keys = core.take_generated_keys();
    let (stop, stopped) = watch::channel(false);
    let app = Arc::new(App::new(
        core.clone(),
        config.rate_limit_per_minute,
        config.max_streams,
        stopped.clone(),
    ));
    let limits = Limits {
        header_read_timeout: config.header_read_timeout,
        idle_timeout: config.idle_timeout,
        max_open: connections::cap_under(descriptors, config.max_open_connections),
    };
    let connections = Connections::new(limits, Arc::clone(&app.metrics));
    // The dashboard address serves the same application, so its pages and
    // the API they call share one origin (and its cookies).
    let second = dashboard.map(|(listener, _)| {
        tokio::spawn(accept_loop(
            listener,
            Arc::clone(&app),
            Arc::clone(&connections),
            stopped.clone(),
            config.shutdown_grace,
        ))
    });
    // The metrics address has an application of its own (one open route)
    // over the same instruments.
    let third = metrics.map(|(listener, _)| {
        tokio::spawn(accept_loop(
            listener,
            Arc::new(App::metrics_only(&app)),
            Arc::clone(&connections),
            stopped.clone(),
            config.shutdown_grace,
        ))
    });
    let first = tokio::spawn(accept_loop(
        listener,
        app,
        connections,
        stopped.clone(),
        config.shutdown_grace,
    ));
    let task = tokio::spawn(async move {
        let _ = first.await;
        for other in [second, third].into_iter().flatten() {
            let _ = other.await;
        }
    });
    // Liveness, timeouts, retention and every other job that runs on time.
    let background = core.clone();
    tokio::spawn(async move { background.run_background(stopped).await });
    tracing::info!(
        %addr,
        database = core.store().dialect().as_str(),
        open_file_limit = descriptors,
        max_open_connections = limits.max_open,
        "orch control plane listening"
    );
    Ok(ServerHandle {
        addr,
        dashboard_addr,
        metrics_addr,
        core,
        generated_keys,
        stop,
        task,
    })
}

async fn bind(addr: SocketAddr) -> Result<(TcpListener, SocketAddr), ServeError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })?;
    let bound = listener
        .local_addr()
        .map_err(|source| ServeError::Bind { addr, source })?;
    Ok((listener, bound))
}

/// Serves until SIGINT or SIGTERM, then shuts down gracefully.
pub async fn serve(config: ServerConfig) -> Result<(), ServeError> {
    let handle = start(config).await?;
    eprintln!(
        "\norch is listening on http://{addr}; the dashboard is at http://{addr}/",
        addr = handle.local_addr()
    );
    if let Some(addr) = handle.dashboard_addr() {
        eprintln!("the dashboard is also at http://{addr}/");
    }
    if let Some(addr) = handle.metrics_addr() {
        eprintln!("metrics (no credentials) are at http://{addr}/metrics");
    }
    for key in handle.generated_keys() {
        eprintln!(
            "\nGenerated the first {scope} API key (shown once, store it now):\n\n    {key}\n",
            scope = key.scope,
            key = key.api_key
        );
    }
    let core = handle.control_plane();
    if handle
        .generated_keys()
        .iter()
        .any(|k| k.scope == Scope::Admin)
    {
        if let Err(e) = core.record_admin_key_shown().await {
            tracing::warn!(error = %e, "could not record that the admin key was shown");
        }
    } else if core.admin_key_never_shown().await.unwrap_or(false) {
        eprintln!("\n{ADMIN_KEY_HINT}\n");
    }
    shutdown_signal().await.map_err(ServeError::Signal)?;
    tracing::info!("shutting down: finishing in-flight requests");
    handle.shutdown().await;
    Ok(())
}

/// What a start says when the database's first admin key was never shown.
pub const ADMIN_KEY_HINT: &str = "This database's first admin API key was generated but never shown. To get one, \
stop the server and run `orch admin create-key` with the same --data-dir or --database-url, \
or start it with ORCH_BOOTSTRAP_ADMIN_KEY=orch_admin_<32 letters and digits>.";

/// Accepts until stopped, then waits for the open connections to finish
/// (each is told to shut down gracefully: in-flight requests complete, idle
/// keep-alive connections close) for up to `grace`. Connections that became
/// websockets are no longer HTTP connections: their handlers close them on
/// `stopping` themselves. Every connection goes through `connections`
/// (the cap, the header-read and idle timeouts).
async fn accept_loop(
    listener: TcpListener,
    app: Arc<App>,
    connections: Arc<Connections>,
    mut stopped: watch::Receiver<bool>,
    grace: Duration,
) {
    // Every connection task holds a sender; all dropped = all connections done.
    let (open, mut all_closed) = tokio::sync::mpsc::channel::<()>(1);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        // Out of file descriptors and the like: back off, keep serving.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let Some(stream) = connections.admit(stream) else {
                    continue;
                };
                let activity = stream.activity();
                let app = Arc::clone(&app);
                let service = service_fn(move |request| {
                    let app = Arc::clone(&app);
                    let busy = activity.request_started();
                    let activity = Arc::clone(&activity);
                    async move {
                        let response = app.handle(request, peer).await;
                        if response.status() == http::StatusCode::SWITCHING_PROTOCOLS {
                            activity.upgraded();
                        }
                        Ok::<_, Infallible>(busy.hold_until_sent(response))
                    }
                });
                let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), service).with_upgrades();
                let mut stop = stopped.clone();
                let open = open.clone();
                tokio::spawn(async move {
                    let _open = open;
                    let mut connection = std::pin::pin!(connection);
                    let result = tokio::select! {
                        result = connection.as_mut() => result,
                        _ = async { let _ = stop.wait_for(|stopping| *stopping).await; } => {
                            connection.as_mut().graceful_shutdown();
                            connection.await
                        }
                    };
                    if let Err(e) = result {
                        tracing::debug!(error = %e, %peer, "connection ended with an error");
                    }
                });
            }
            _ = stopped.changed() => break,
        }
    }
    drop(listener);
    drop(open);
    tokio::select! {
        _ = all_closed.recv() => {}
        _ = tokio::time::sleep(grace) => tracing::warn!("grace period over; dropping remaining connections"),
    }
}

async fn shutdown_signal() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            result = tokio::signal::ctrl_c() => result,
            _ = term.recv() => Ok(()),
        }
    }
    #[cfg(not(unix))]
    {
        tokio::signal::ctrl_c().await
    }
}
