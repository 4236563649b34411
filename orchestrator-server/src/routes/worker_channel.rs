//! The worker channel: `GET /api/v1/events` with
//! `Upgrade: websocket`, authenticated with a worker key
//! (`Authorization: Bearer`). The frames are [`ServerMessage`] and
//! [`WorkerMessage`] (protocol in `orchestrator_core::api::worker_channel`).
//!
//! One task per connection:
//! - on open, the worker becomes `online` and gets `connection.ready`, then
//!   the server assigns what is already claimable;
//! - it tries to assign again (one claim per free agent, through the claim
//!   engine, as `POST /workers/:id/next`) whenever the store's wake-up bus
//!   reports new events (fed on commit; with PostgreSQL also by LISTEN/NOTIFY
//!   from other replicas), and every [`FALLBACK`] regardless. Agents that
//!   hold a task are skipped: one read when every agent is busy;
//! - each of those rounds also forwards the `worker.signal` events recorded
//!   for the worker since the connection opened (`POST /workers/:id/signal`)
//!   as `worker.signal` frames (signals recorded while no channel was open
//!   are not delivered);
//! - every heartbeat interval the server pings the socket and refreshes the
//!   worker's and its agents' heartbeat times: an open socket keeps the
//!   worker `online` even without `worker.heartbeat` frames;
//! - `task.assignment_ack` and `signal.ack` are accepted and logged; nothing
//!   else happens without them (an unacknowledged assignment stays claimed;
//!   a worker that died is handled by the liveness rules);
//! - when the socket closes (or fails) the worker becomes `offline`; its held
//!   tasks are not released then, but by the liveness rules once its agents
//!   stay silent;
//! - on server shutdown the socket gets a close frame (1001, going away);
//! - once the worker key is revoked (or deleted), the socket gets a close
//!   frame (1008, policy violation) within the time a request with that key
//!   starts to fail (the credential cache's lifetime).

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use crate::ws::{self, Socket};
use futures_util::{SinkExt, StreamExt};
use orchestrator_core::api::{
    EventFilter, ServerMessage, SignalKind, SignalWorker, Worker, WorkerHeartbeat, WorkerMessage,
};
use orchestrator_core::auth::HeldCredential;
use orchestrator_core::events::EventKey;
use orchestrator_core::store::Topic;
use orchestrator_core::{Caller, ControlPlane};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::watch;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// The slow fallback: assignment is tried this often even without wake-ups.
const FALLBACK: Duration = Duration::from_millis(1500);

/// `GET /api/v1/events` upgraded: checks the handshake and the worker key,
/// answers `101` and serves the socket in its own task.
pub(crate) async fn connect(app: Arc<App>, mut req: Req) -> Result<Reply, ApiError> {
    let caller = req.caller()?.clone();
    let include_context = req
        .query_value("include_context")
        .is_some_and(|v| v == "true" || v == "1");
    let held = crate::credentials::held(&app.core, &req);
    let pending = ws::accept(&mut req)?;
    let worker = app.core.open_worker_channel(&caller).await?;
    let core = app.core.clone();
    let stopping = app.stopping.clone();
    let open = app.metrics.websocket_opened();
    tokio::spawn(async move {
        // Counted in `orch_open_websockets` until this task ends.
        let _open = open;
        let worker_id = worker.worker_id;
        match ws::open(pending.upgrade).await {
            Ok(socket) => {
                let connection = Connection {
                    core: core.clone(),
                    caller: caller.clone(),
                    worker,
                    include_context,
                    held,
                };
                connection.run(socket, stopping).await;
            }
            Err(e) => tracing::debug!(error = %e, %worker_id, "worker channel upgrade failed"),
        }
        if let Err(e) = core.close_worker_channel(&caller, worker_id).await {
            tracing::warn!(error = %e, %worker_id, "could not mark the worker offline");
        }
    });
    Ok(pending.reply)
}

/// `POST /workers/:id/signal` (admin, beyond the contract).
pub(crate) async fn signal(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: SignalWorker = req.json()?;
    let sent = app
        .core
        .signal_worker(req.caller()?, req.uuid("id")?, body)
        .await?;
    Ok(req.ok(&sent))
}

struct Connection {
    core: ControlPlane,
    caller: Caller,
    worker: Worker,
    include_context: bool,
    /// The key the socket was opened with, checked while it stays open.
    held: Option<HeldCredential>,
}

/// Why a connection ends.
enum End {
    /// The peer left or the socket failed.
    Gone,
    /// The server is shutting down.
    Stopping,
    /// The worker key was revoked.
    Revoked,
}

impl Connection {
    async fn run(&self, mut socket: Socket, mut stopping: watch::Receiver<bool>) {
        let end = self.serve(&mut socket, &mut stopping).await;
        let frame = match end {
            End::Gone => None,
            End::Stopping => Some(CloseFrame {
                code: CloseCode::Away,
                reason: "server shutting down".into(),
            }),
            End::Revoked => Some(CloseFrame {
                code: CloseCode::Policy,
                reason: "the worker key was revoked".into(),
            }),
        };
        if let Some(frame) = frame {
            let _ = tokio::time::timeout(
                Duration::from_secs(2),
                socket.send(Message::Close(Some(frame))),
            )
            .await;
        }
    }

    async fn serve(&self, socket: &mut Socket, stopping: &mut watch::Receiver<bool>) -> End {
        let worker_id = self.worker.worker_id;
        // Subscribe before the first read so nothing committed after it is missed.
        let mut wake = self.core.store().wakeups();
        let mut signals = match self.core.event_head(&self.caller).await {
            Ok(key) => key,
            Err(e) => {
                tracing::warn!(error = %e, %worker_id, "worker channel: event head failed");
                return End::Gone;
            }
        };
        let mut cancels = signals;
        let ready = ServerMessage::ConnectionReady {
            worker_id,
            agents: self.worker.agents.clone(),
            heartbeat_interval_seconds: self.worker.heartbeat_interval_seconds,
        };
        if send(socket, &ready).await.is_err() {
            return End::Gone;
        }
        let keepalive =
            Duration::from_secs(self.worker.heartbeat_interval_seconds.clamp(1, 3600) as u64);
        let mut next_keepalive = tokio::time::Instant::now() + keepalive;
        let mut next_fallback = tokio::time::Instant::now();
        let revoked = crate::credentials::revoked(&self.core, self.held);
        tokio::pin!(revoked);
        loop {
            if *stopping.borrow() {
                return End::Stopping;
            }
            if tokio::time::Instant::now() >= next_fallback {
                // On PostgreSQL an event becomes readable only once older
                // transactions end, so a wake-up can come early: the fallback
                // looks for signals too.
                if self
                    .deliver_signals(socket, &mut signals, &mut cancels)
                    .await
                    .is_err()
                {
                    return End::Gone;
                }
                if self.assign(socket).await.is_err() {
                    return End::Gone;
                }
                next_fallback = tokio::time::Instant::now() + FALLBACK;
            }
            tokio::select! {
                _ = stopping.changed() => return End::Stopping,
                _ = &mut revoked => return End::Revoked,
                incoming = socket.next() => match incoming {
                    Some(Ok(Message::Text(text))) => {
                        let reply = self.receive(text.as_str()).await;
                        if let Some(reply) = reply && send(socket, &reply).await.is_err() {
                            return End::Gone;
                        }
                    }
                    Some(Ok(Message::Binary(_))) => {
                        let reply = ServerMessage::Error { message: "the worker channel takes JSON text frames".into() };
                        if send(socket, &reply).await.is_err() {
                            return End::Gone;
                        }
                    }
                    // Pings are answered by the socket itself.
                    Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => {}
                    Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return End::Gone,
                },
                woke = wake.recv() => match woke {
                    Ok(Topic::Events) | Err(RecvError::Lagged(_)) => {
                        // Coalesce a burst of wake-ups into one round.
                        while let Ok(_) | Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_)) = wake.try_recv() {}
                        next_fallback = tokio::time::Instant::now();
                    }
                    Ok(Topic::Logs) => {}
                    Err(RecvError::Closed) => return End::Gone,
                },
                _ = tokio::time::sleep_until(next_fallback) => {}
                _ = tokio::time::sleep_until(next_keepalive) => {
                    if socket.send(Message::Ping(Default::default())).await.is_err() {
                        return End::Gone;
                    }
                    if let Err(e) = self.core.touch_worker_channel(&self.caller, worker_id).await {
                        tracing::warn!(error = %e, %worker_id, "worker channel: keepalive failed");
                    }
                    next_keepalive = tokio::time::Instant::now() + keepalive;
                }
            }
        }
    }

    /// Claims for the free agents and sends each claimed task.
    async fn assign(&self, socket: &mut Socket) -> Result<(), ()> {
        let assigned = match self
            .core
            .assign_worker_channel(&self.caller, self.worker.worker_id, self.include_context)
            .await
        {
            Ok(assigned) => assigned,
            Err(e) => {
                tracing::warn!(error = %e, worker_id = %self.worker.worker_id, "worker channel: claim failed");
                return Ok(());
            }
        };
        for (agent_id, task) in assigned {
            let message = ServerMessage::TaskAssigned {
                agent_id,
                task: Box::new(task),
            };
            send(socket, &message).await?;
        }
        Ok(())
    }

    /// Forwards the `worker.signal` events recorded for this worker since
    /// `from`, and the `task.cancel_requested` events of its agents' tasks
    /// (run control §4) since `cancels`.
    async fn deliver_signals(
        &self,
        socket: &mut Socket,
        from: &mut EventKey,
        cancels: &mut EventKey,
    ) -> Result<(), ()> {
        let filter = EventFilter {
            event_type: Some("worker.signal".into()),
            entity_type: Some("worker".into()),
            entity_id: Some(self.worker.worker_id),
            ..Default::default()
        };
        let cancel_filter = EventFilter {
            event_type: Some("task.cancel_requested".into()),
            ..Default::default()
        };
        let mut events = Vec::new();
        for (filter, key) in [(&filter, &mut *from), (&cancel_filter, &mut *cancels)] {
            match self
                .core
                .read_events_forward(&self.caller, filter, *key, 100)
                .await
            {
                Ok(read) => {
                    if let Some((last, _)) = read.last() {
                        *key = *last;
                    }
                    events.extend(read);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "worker channel: signal read failed");
                    return Ok(());
                }
            }
        }
        for (_, event) in events {
            if event.event_type == "task.cancel_requested" {
                let id = |field: &str| {
                    event
                        .data
                        .get(field)
                        .and_then(|v| v.as_str())
                        .and_then(|v| v.parse::<uuid::Uuid>().ok())
                };
                if id("worker_id") == Some(self.worker.worker_id)
                    && let Some(task_id) = id("task_id")
                {
                    let agent_id = id("agent_id");
                    send(
                        socket,
                        &ServerMessage::TaskCancelRequested { task_id, agent_id },
                    )
                    .await?;
                }
                continue;
            }
            let signal = match event.data.get("signal").and_then(|s| s.as_str()) {
                Some("drain") => SignalKind::Drain,
                Some("cancel_task") => SignalKind::CancelTask,
                _ => continue,
            };
            let task_id = event
                .data
                .get("task_id")
                .and_then(|t| t.as_str())
                .and_then(|t| t.parse().ok());
            send(socket, &ServerMessage::WorkerSignal { signal, task_id }).await?;
        }
        Ok(())
    }

    /// Handles one worker frame; answers an `error` frame for a bad one.
    async fn receive(&self, text: &str) -> Option<ServerMessage> {
        let worker_id = self.worker.worker_id;
        if let Err(e) = crate::schema::refuse_deep(text.as_bytes()) {
            return Some(ServerMessage::Error {
                message: format!("unreadable frame: {e}"),
            });
        }
        let message: WorkerMessage = match serde_json::from_str(text) {
            Ok(message) => message,
            Err(e) => {
                return Some(ServerMessage::Error {
                    message: format!("unreadable frame: {e}"),
                });
            }
        };
        match message {
            WorkerMessage::TaskAssignmentAck { task_id } => {
                tracing::debug!(%worker_id, %task_id, "task assignment acknowledged");
                None
            }
            WorkerMessage::SignalAck { signal, task_id } => {
                tracing::debug!(%worker_id, signal = signal.as_str(), ?task_id, "signal acknowledged");
                None
            }
            WorkerMessage::Heartbeat {
                status,
                current_task_id,
                metrics,
                containers,
            } => {
                let heartbeat = WorkerHeartbeat {
                    status,
                    current_task_id,
                    metrics,
                    containers,
                };
                match self
                    .core
                    .worker_heartbeat(&self.caller, worker_id, heartbeat)
                    .await
                {
                    Ok(_) => None,
                    Err(e) => Some(ServerMessage::Error {
                        message: e.to_string(),
                    }),
                }
            }
        }
    }
}

async fn send(socket: &mut Socket, message: &ServerMessage) -> Result<(), ()> {
    let text = serde_json::to_string(message).map_err(|_| ())?;
    socket.send(Message::text(text)).await.map_err(|_| ())
}
