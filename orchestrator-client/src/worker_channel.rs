//! The worker channel: the websocket at `/api/v1/events`.
//!
//! ```no_run
//! # async fn demo(worker_key: &str) -> Result<(), orchestrator_client::Error> {
//! use futures_util::StreamExt;
//! use orchestrator_client::api::{ServerMessage, WorkerMessage};
//! let client = orchestrator_client::Client::new("http://127.0.0.1:8080")?.with_api_key(worker_key);
//! let mut channel = client.workers().connect(false).await?;
//! while let Some(message) = channel.next().await {
//!     if let ServerMessage::TaskAssigned { task, .. } = message? {
//!         channel.send(&WorkerMessage::TaskAssignmentAck { task_id: task.id }).await?;
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! Plain `ws://` only (the base URL's `http://`): this SDK does not open
//! `wss://` websockets yet; reach a TLS deployment through a local proxy.

use crate::Workers;
use crate::error::{Error, Result};
use futures_util::{SinkExt, Stream, StreamExt};
use orchestrator_core::api::{
    ErrorEnvelope, ServerMessage, SignalSent, SignalWorker, WorkerMessage,
};
use reqwest::Method as M;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use uuid::Uuid;

/// An open worker channel: a [`Stream`] of [`ServerMessage`]s (the first is
/// `connection.ready`), and [`WorkerChannel::send`] for [`WorkerMessage`]s.
/// The stream ends when the server closes the socket.
pub struct WorkerChannel {
    socket: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl std::fmt::Debug for WorkerChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerChannel").finish_non_exhaustive()
    }
}

impl Workers<'_> {
    /// Opens the worker channel with the client's credential, which must be
    /// a worker key. `include_context`: assigned tasks carry their context
    /// packet. An HTTP refusal (401, 403) is [`Error::Api`].
    pub async fn connect(&self, include_context: bool) -> Result<WorkerChannel> {
        let base = self.client.base_url();
        let url = match base.strip_prefix("http://") {
            Some(rest) => format!("ws://{rest}/api/v1/events"),
            None => {
                return Err(Error::WebSocket(format!(
                    "the worker channel needs an http:// base URL (ws://), not `{base}`"
                )));
            }
        };
        let url = if include_context {
            format!("{url}?include_context=true")
        } else {
            url
        };
        let mut request = url
            .into_client_request()
            .map_err(|e| Error::WebSocket(e.to_string()))?;
        if let Some(credential) = self.client.bearer().await? {
            let value = HeaderValue::from_str(&format!("Bearer {credential}"))
                .map_err(|e| Error::WebSocket(e.to_string()))?;
            request.headers_mut().insert("authorization", value);
        }
        match tokio_tungstenite::connect_async(request).await {
            Ok((socket, _)) => Ok(WorkerChannel { socket }),
            Err(tungstenite::Error::Http(response)) => {
                let status = response.status().as_u16();
                let body = response.body().as_deref().unwrap_or_default();
                Err(match serde_json::from_slice::<ErrorEnvelope>(body) {
                    Ok(envelope) => Error::Api {
                        status,
                        error: envelope.error,
                        request_id: response
                            .headers()
                            .get("x-request-id")
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_owned),
                    },
                    Err(_) => Error::Decode {
                        status,
                        message: String::from_utf8_lossy(body).chars().take(500).collect(),
                    },
                })
            }
            Err(e) => Err(Error::WebSocket(e.to_string())),
        }
    }

    /// `POST /workers/:id/signal` (admin): sends `worker.signal` to the
    /// worker's open channels.
    pub async fn signal(&self, id: Uuid, request: &SignalWorker) -> Result<SignalSent> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/workers/{id}/signal"))
                    .json(request),
            )
            .await
    }
}

impl WorkerChannel {
    /// Sends one frame.
    pub async fn send(&mut self, message: &WorkerMessage) -> Result<()> {
        let text = serde_json::to_string(message).map_err(|e| Error::WebSocket(e.to_string()))?;
        self.socket
            .send(Message::text(text))
            .await
            .map_err(|e| Error::WebSocket(e.to_string()))
    }

    /// Closes the socket (the server marks the worker `offline`).
    pub async fn close(mut self) -> Result<()> {
        match self.socket.close(None).await {
            Ok(()) | Err(tungstenite::Error::ConnectionClosed) => {}
            Err(e) => return Err(Error::WebSocket(e.to_string())),
        }
        // Read until the server's close answer so the close is complete.
        while let Some(Ok(_)) = self.socket.next().await {}
        Ok(())
    }
}

impl Stream for WorkerChannel {
    type Item = Result<ServerMessage>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            return match self.socket.poll_next_unpin(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(None) | Poll::Ready(Some(Ok(Message::Close(_)))) => Poll::Ready(None),
                Poll::Ready(Some(Ok(Message::Text(text)))) => {
                    Poll::Ready(Some(serde_json::from_str(text.as_str()).map_err(|e| {
                        Error::Decode {
                            status: 101,
                            message: format!("unreadable worker channel frame: {e}"),
                        }
                    })))
                }
                Poll::Ready(Some(Ok(_))) => continue,
                Poll::Ready(Some(Err(tungstenite::Error::ConnectionClosed))) => Poll::Ready(None),
                Poll::Ready(Some(Err(e))) => {
                    Poll::Ready(Some(Err(Error::WebSocket(e.to_string()))))
                }
            };
        }
    }
}
