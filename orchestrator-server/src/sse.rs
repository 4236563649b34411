//! Streamed bodies: Server-Sent Events and chunked downloads.
//!
//! A producer task writes frames into a bounded channel that the response
//! body drains, so a slow client only ever holds back its own producer
//! (which reads rows from the table at its own pace) and never a writer.
//! A client that takes no frame for the configured slow-consumer timeout
//! (`CoreConfig::stream_slow_consumer_timeout`, 30 s by default) gets a final
//! `event: error` frame (`{"error":"slow_consumer"}`) and the stream ends.
//!
//! A replica holds at most `ServerConfig::max_streams` streams at once
//! ([`StreamCap`]); past it a new one is refused with `503`. A stream whose
//! credential is revoked (its key revoked or deleted, its session signed
//! out) gets a final `{"error":"unauthorized"}` frame and ends, within the
//! time a request with that credential starts to fail.

use crate::app::App;
use crate::error::ApiError;
use crate::metrics::OpenGuard;
use crate::request::Req;
use crate::response::{Body, Reply};
use bytes::Bytes;
use futures_util::stream;
use http::{HeaderValue, header};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use orchestrator_core::ControlPlane;
use orchestrator_core::auth::HeldCredential;
use orchestrator_core::store::{Dialect, Topic};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Poll;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{mpsc, oneshot, watch};

/// Frames buffered per stream.
const STREAM_BUFFER: usize = 256;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The producer's end of a streamed body.
pub(crate) struct Sender {
    frames: mpsc::Sender<Result<Bytes, BoxError>>,
    last: Option<oneshot::Sender<Bytes>>,
    /// How long to wait for room before giving up on the client.
    patience: Duration,
    /// Counts the stream in `orch_open_streams` while it is fed.
    _open: Option<OpenGuard>,
    /// Its place under the replica's stream cap.
    _slot: Option<StreamSlot>,
}

/// The cap on event streams open at once on this replica: each holds a
/// connection, a task, its buffers and a wake-up subscription.
pub(crate) struct StreamCap {
    max: usize,
    open: Arc<AtomicUsize>,
}

/// A place under the [`StreamCap`], given back when dropped.
pub(crate) struct StreamSlot(Arc<AtomicUsize>);

impl StreamCap {
    pub(crate) fn new(max: usize) -> Self {
        Self {
            max,
            open: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// A place for one more stream, or `503` at the cap.
    fn take(&self) -> Result<StreamSlot, ApiError> {
        self.open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < self.max).then_some(open + 1)
            })
            .map(|_| StreamSlot(Arc::clone(&self.open)))
            .map_err(|_| ApiError::Busy {
                message: format!(
                    "this server holds its maximum of {} open event streams",
                    self.max
                ),
                retry_after_secs: 5,
            })
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A body fed by the returned [`Sender`] (`capacity` chunks in flight).
pub(crate) fn channel(capacity: usize, patience: Duration) -> (Sender, Body) {
    let (frames, mut rx) = mpsc::channel::<Result<Bytes, BoxError>>(capacity);
    let (last_tx, last_rx) = oneshot::channel::<Bytes>();
    let mut last_rx = Some(last_rx);
    let mut done = false;
    let body = stream::poll_fn(move |cx| {
        if done {
            return Poll::Ready(None);
        }
        if let Some(last) = last_rx.as_mut()
            && let Poll::Ready(result) = std::pin::Pin::new(last).poll(cx)
        {
            last_rx = None;
            if let Ok(bytes) = result {
                done = true;
                return Poll::Ready(Some(Ok(Frame::data(bytes))));
            }
        }
        match rx.poll_recv(cx) {
            Poll::Ready(Some(Ok(bytes))) => Poll::Ready(Some(Ok(Frame::data(bytes)))),
            Poll::Ready(Some(Err(e))) => {
                done = true;
                Poll::Ready(Some(Err(e)))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    });
    (
        Sender {
            frames,
            last: Some(last_tx),
            patience,
            _open: None,
            _slot: None,
        },
        StreamBody::new(body).boxed_unsync(),
    )
}

/// An SSE body with the default buffer and the server's slow-consumer
/// timeout, counted as an open stream (and under the stream cap) until its
/// producer ends; `503` at the cap.
pub(crate) fn sse_channel(app: &App) -> Result<(Sender, Body), ApiError> {
    let slot = app.streams.take()?;
    let (mut sender, body) = channel(
        STREAM_BUFFER,
        app.core.config().stream_slow_consumer_timeout,
    );
    sender._open = Some(app.metrics.stream_opened());
    sender._slot = Some(slot);
    Ok((sender, body))
}

impl Sender {
    /// Queues a chunk. `false` when the client is gone or too slow (then a
    /// final error frame has been queued and the stream should end).
    pub async fn send(&mut self, bytes: impl Into<Bytes>) -> bool {
        match tokio::time::timeout(self.patience, self.frames.send(Ok(bytes.into()))).await {
            Ok(Ok(())) => true,
            Ok(Err(_)) => false,
            Err(_) => {
                self.finish_with(frame(
                    None,
                    "error",
                    &serde_json::json!({"error": "slow_consumer"}),
                ));
                false
            }
        }
    }

    /// Ends the stream after one last chunk, delivered before anything
    /// still buffered.
    pub fn finish_with(&mut self, bytes: impl Into<Bytes>) {
        if let Some(last) = self.last.take() {
            let _ = last.send(bytes.into());
        }
    }

    /// Aborts the body with an error (the client sees a broken transfer).
    pub async fn fail(&mut self, message: String) {
        let _ = self.frames.send(Err(message.into())).await;
    }

    /// Resolves when the client has gone away.
    pub async fn closed(&self) {
        self.frames.closed().await
    }
}

/// The reply of an SSE route: `text/event-stream`, never cached, and not
/// buffered by reverse proxies (`X-Accel-Buffering: no`), so each frame
/// reaches the client as it is written.
pub(crate) fn reply(body: Body) -> Reply {
    Reply::typed_stream("text/event-stream", body)
        .with_header(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"))
        .with_header(
            header::HeaderName::from_static("x-accel-buffering"),
            HeaderValue::from_static("no"),
        )
}

/// One SSE frame.
pub(crate) fn frame(id: Option<&str>, event: &str, data: &impl serde::Serialize) -> Bytes {
    let data = serde_json::to_string(data).unwrap_or_else(|_| "{}".to_owned());
    let mut out = String::with_capacity(data.len() + 40);
    if let Some(id) = id {
        out.push_str("id: ");
        out.push_str(id);
        out.push('\n');
    }
    out.push_str("event: ");
    out.push_str(event);
    out.push_str("\ndata: ");
    out.push_str(&data);
    out.push_str("\n\n");
    Bytes::from(out)
}

/// The `Last-Event-ID` header, or an `after`-style query value.
pub(crate) fn resume_id(last_event_id: Option<&str>, after: Option<&str>) -> Option<i64> {
    last_event_id
        .or(after)
        .and_then(|v| v.trim().parse::<i64>().ok())
        .filter(|v| *v >= 0)
}

/// How many items a follower reads per round.
pub(crate) const STREAM_BATCH: u32 = 200;

/// How often a stream re-reads without a wake-up: a safety net for missed
/// notifications, and on PostgreSQL for rows held back by the high-water
/// mark until an unrelated transaction ends.
pub(crate) fn poll_interval(core: &ControlPlane) -> Duration {
    match core.store().dialect() {
        Dialect::Postgres => Duration::from_millis(500),
        Dialect::Sqlite => Duration::from_secs(5),
    }
}

/// What a followed stream reads; the log stream and the event streams share
/// [`follow`] and differ only here.
pub(crate) struct Feed<K, R> {
    /// The wake-up topic that means "new items for this feed".
    pub topic: Topic,
    /// Where the stream stands: the key of the last item sent.
    pub key: K,
    /// Up to [`STREAM_BATCH`] items after a key, each with its key and frame.
    pub read: R,
    /// The frame an idle stream sends every `stream_heartbeat`.
    pub heartbeat: fn() -> Bytes,
    /// Whether the stream is over once it stands at this key (a stream of
    /// one task ends after its terminal status; the others never end).
    pub ends: fn(&K) -> bool,
}

/// Runs [`follow`] in its own task for the stream `req` opened, with the
/// credential it was opened with.
pub(crate) fn spawn_follow<K, R, F>(app: &App, req: &Req, feed: Feed<K, R>, sender: Sender)
where
    K: Copy + Send + 'static,
    R: FnMut(K) -> F + Send + 'static,
    F: Future<Output = orchestrator_core::error::Result<Vec<(K, Bytes)>>> + Send + 'static,
{
    let held = crate::credentials::held(&app.core, req);
    tokio::spawn(follow(
        app.core.clone(),
        feed,
        sender,
        app.stopping.clone(),
        held,
    ));
}

/// Replays, then follows: reads batches after the last key until one comes
/// back short, then waits for a wake-up on the feed's topic (a commit here,
/// or LISTEN/NOTIFY from another replica), the poll fallback or the
/// heartbeat, and reads again. Holds no database connection while it waits.
/// Ends when the client goes away, the server stops, a read fails (the
/// client is told `read_failed`), the credential is revoked (the client is
/// told `unauthorized`) or the feed says it [`Feed::ends`].
async fn follow<K, R, F>(
    core: ControlPlane,
    mut feed: Feed<K, R>,
    mut sender: Sender,
    mut stopping: watch::Receiver<bool>,
    held: Option<HeldCredential>,
) where
    K: Copy,
    R: FnMut(K) -> F,
    F: Future<Output = orchestrator_core::error::Result<Vec<(K, Bytes)>>>,
{
    // Subscribe before the first read so nothing committed in between is missed.
    let mut wake = core.store().wakeups();
    let heartbeat = core.config().stream_heartbeat;
    let poll = poll_interval(&core);
    let mut next_heartbeat = tokio::time::Instant::now() + heartbeat;
    let revoked = crate::credentials::revoked(&core, held);
    tokio::pin!(revoked);
    loop {
        if *stopping.borrow() {
            return;
        }
        loop {
            let items = match (feed.read)(feed.key).await {
                Ok(items) => items,
                Err(e) => {
                    tracing::warn!(error = %e, "stream read failed");
                    sender.finish_with(frame(
                        None,
                        "error",
                        &serde_json::json!({"error": "read_failed"}),
                    ));
                    return;
                }
            };
            let count = items.len();
            for (key, bytes) in items {
                // An empty frame only moves the position (an item the feed
                // reads but does not send).
                if !bytes.is_empty() {
                    if !sender.send(bytes).await {
                        return;
                    }
                    next_heartbeat = tokio::time::Instant::now() + heartbeat;
                }
                feed.key = key;
            }
            if (feed.ends)(&feed.key) {
                return;
            }
            if count < STREAM_BATCH as usize {
                break;
            }
        }
        let poll_timer = tokio::time::sleep(poll);
        tokio::pin!(poll_timer);
        loop {
            tokio::select! {
                _ = stopping.changed() => return,
                _ = sender.closed() => return,
                _ = &mut revoked => {
                    sender.finish_with(frame(
                        None,
                        "error",
                        &serde_json::json!({"error": "unauthorized"}),
                    ));
                    return;
                }
                woke = wake.recv() => match woke {
                    Ok(topic) if topic == feed.topic => {}
                    Err(RecvError::Lagged(_)) => {}
                    // Another feed's topic: wait again without reading.
                    Ok(_) => continue,
                    Err(RecvError::Closed) => return,
                },
                _ = &mut poll_timer => {}
                _ = tokio::time::sleep_until(next_heartbeat) => {
                    if !sender.send((feed.heartbeat)()).await {
                        return;
                    }
                    next_heartbeat = tokio::time::Instant::now() + heartbeat;
                }
            }
            break;
        }
    }
}
