//! Open connections and their limits: a flood of sockets that never send a
//! request must not lock everyone else out (issue 33, defect 4).
//!
//! - **Header-read timeout**: a request head must arrive whole within
//!   `header_read_timeout` (10 s) of its first byte, and a new connection
//!   must send its first head within that time too.
//! - **Idle timeout**: a keep-alive connection with no request in progress
//!   is closed after `idle_timeout` (60 s) without a new one.
//! - **Cap**: the server holds at most `max_open` connections, a number below
//!   the process's descriptor limit (see [`descriptor_limit`]), so database
//!   connections and files always find a descriptor. At the cap, the
//!   connection idle the longest gives its place to the new one (idle
//!   keep-alive sockets are what a flood is made of); when every connection
//!   is busy the new one gets a `503` in the error envelope and is closed.
//!   Refusals are logged at most every [`REFUSAL_LOG_EVERY`], with a count.
//!
//! A request counts as in progress from its head until its response body has
//! been sent (an SSE stream is in progress for as long as it is open), and a
//! connection upgraded to a websocket is never idle: its handler watches it.

use crate::error::ApiError;
use crate::metrics::Metrics;
use crate::response::Body;
use futures_util::task::AtomicWaker;
use http::Response;
use http_body_util::BodyExt;
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

/// How often a refusal is logged at most (the others are counted).
pub(crate) const REFUSAL_LOG_EVERY: Duration = Duration::from_secs(10);

/// Descriptors kept free for everything that is not a client connection
/// (database connections, files, listeners), on top of an eighth of the
/// limit.
const RESERVED_DESCRIPTORS: u64 = 64;

/// The timeouts and the cap.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub header_read_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_open: usize,
}

/// Raises the soft limit on open descriptors to the hard limit (many hosts
/// start services at a soft 1,024, far below what the hard limit allows)
/// and returns the soft limit now in force; `None` where it is unknown.
pub(crate) fn raise_descriptor_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
        let limit = getrlimit(Resource::Nofile);
        // No hard limit: ask for a large but finite number (some systems
        // refuse "unlimited" for descriptors).
        let wanted = limit.maximum.unwrap_or(1 << 20);
        let current = limit.current.unwrap_or(wanted);
        if current >= wanted {
            return Some(current);
        }
        let raised = Rlimit {
            current: Some(wanted),
            maximum: limit.maximum,
        };
        match setrlimit(Resource::Nofile, raised) {
            Ok(()) => {
                tracing::debug!(from = current, to = wanted, "raised the open-file limit");
                Some(wanted)
            }
            Err(e) => {
                tracing::warn!(error = %e, limit = current, "could not raise the open-file limit");
                Some(current)
            }
        }
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The connection cap that leaves room under a descriptor limit: an eighth
/// of it and [`RESERVED_DESCRIPTORS`] more stay free. `configured` (0 for
/// "derive it") never goes above that.
pub(crate) fn cap_under(descriptors: Option<u64>, configured: usize) -> usize {
    let room = descriptors.map(|limit| {
        let free = limit / 8 + RESERVED_DESCRIPTORS;
        usize::try_from(limit.saturating_sub(free).max(16)).unwrap_or(usize::MAX)
    });
    match (configured, room) {
        (0, Some(room)) => room,
        (0, None) => 10_000,
        (wanted, Some(room)) if wanted > room => {
            tracing::warn!(
                wanted,
                allowed = room,
                "the connection cap is above what the open-file limit allows; using the lower one"
            );
            room
        }
        (wanted, _) => wanted,
    }
}

/// Every open connection of a server, across its listeners (descriptors
/// belong to the process).
pub(crate) struct Connections {
    limits: Limits,
    open: Mutex<HashMap<u64, Arc<Activity>>>,
    next_id: AtomicU64,
    refusals: Mutex<RefusalLog>,
    metrics: Arc<Metrics>,
}

#[derive(Default)]
struct RefusalLog {
    last: Option<Instant>,
    unlogged: u64,
}

impl Connections {
    pub(crate) fn new(limits: Limits, metrics: Arc<Metrics>) -> Arc<Self> {
        Arc::new(Self {
            limits,
            open: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            refusals: Mutex::new(RefusalLog::default()),
            metrics,
        })
    }

    /// Takes a new connection under the cap (making room by closing the
    /// connection idle the longest), or refuses it with a `503` and closes
    /// it (`None`).
    pub(crate) fn admit(self: &Arc<Self>, stream: TcpStream) -> Option<Tracked> {
        let activity = Arc::new(Activity::new());
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        {
            let mut open = self.open.lock().expect("connection table poisoned");
            if open.len() >= self.limits.max_open {
                let victim = open
                    .iter()
                    .filter(|(_, a)| a.is_idle())
                    .min_by_key(|(_, a)| a.at(a.idle_since.load(Ordering::Relaxed)))
                    .map(|(id, _)| *id);
                match victim.and_then(|id| open.remove(&id)) {
                    Some(idle) => idle.evict(),
                    None => {
                        drop(open);
                        self.refuse(&stream);
                        return None;
                    }
                }
            }
            open.insert(id, Arc::clone(&activity));
            self.metrics.connection_count(open.len());
        }
        Some(Tracked {
            io: stream,
            activity,
            limits: self.limits,
            timer: Box::pin(tokio::time::sleep(Duration::ZERO)),
            armed: None,
            _slot: Slot {
                connections: Arc::clone(self),
                id,
            },
        })
    }

    /// Answers `503` (best effort: what fits in the socket's send buffer,
    /// which a few hundred bytes always do) and counts the refusal.
    fn refuse(&self, stream: &TcpStream) {
        let bytes = ApiError::Busy {
            message: format!(
                "this server holds its maximum of {} open connections, all busy",
                self.limits.max_open
            ),
            retry_after_secs: 1,
        }
        .into_raw_response(&uuid::Uuid::new_v4().to_string());
        let _ = stream.try_write(&bytes);
        self.metrics.connection_refused();
        let mut log = self.refusals.lock().expect("refusal log poisoned");
        log.unlogged += 1;
        let now = Instant::now();
        if log
            .last
            .is_none_or(|at| now.duration_since(at) >= REFUSAL_LOG_EVERY)
        {
            tracing::warn!(
                refused = log.unlogged,
                max_open = self.limits.max_open,
                "connections refused: the server is at its connection cap with every connection busy"
            );
            log.last = Some(now);
            log.unlogged = 0;
        }
    }

    fn forget(&self, id: u64) {
        let mut open = self.open.lock().expect("connection table poisoned");
        open.remove(&id);
        self.metrics.connection_count(open.len());
    }
}

/// Removes a connection from the table when its socket is dropped.
struct Slot {
    connections: Arc<Connections>,
    id: u64,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.connections.forget(self.id);
    }
}

/// What a connection is doing, shared between its socket and its requests.
pub(crate) struct Activity {
    epoch: Instant,
    /// Requests in progress (until their response body is dropped).
    busy: AtomicUsize,
    /// Milliseconds after `epoch` when the connection last became idle.
    idle_since: AtomicU64,
    /// Milliseconds after `epoch`, plus one, when the first byte of the
    /// next request head arrived; 0 while none has.
    head_started: AtomicU64,
    /// Whether a request came yet (before it, the header timeout applies).
    served: AtomicBool,
    upgraded: AtomicBool,
    evicted: AtomicBool,
    /// The connection's task, woken when it went idle or was evicted.
    waker: AtomicWaker,
}

impl Activity {
    fn new() -> Self {
        Self {
            epoch: Instant::now(),
            busy: AtomicUsize::new(0),
            idle_since: AtomicU64::new(0),
            head_started: AtomicU64::new(0),
            served: AtomicBool::new(false),
            upgraded: AtomicBool::new(false),
            evicted: AtomicBool::new(false),
            waker: AtomicWaker::new(),
        }
    }

    fn millis(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn at(&self, millis: u64) -> Instant {
        self.epoch + Duration::from_millis(millis)
    }

    fn is_idle(&self) -> bool {
        self.busy.load(Ordering::Acquire) == 0 && !self.upgraded.load(Ordering::Acquire)
    }

    fn evict(&self) {
        self.evicted.store(true, Ordering::Release);
        self.waker.wake();
    }

    /// When the connection must be closed if nothing more arrives; `None`
    /// while a request is in progress.
    fn deadline(&self, limits: &Limits) -> Option<Instant> {
        if !self.is_idle() {
            return None;
        }
        let head = self.head_started.load(Ordering::Acquire);
        Some(if head > 0 {
            self.at(head - 1) + limits.header_read_timeout
        } else if !self.served.load(Ordering::Acquire) {
            self.epoch + limits.header_read_timeout
        } else {
            self.at(self.idle_since.load(Ordering::Acquire)) + limits.idle_timeout
        })
    }

    /// A request head arrived: the connection is busy until the returned
    /// guard (kept by the response body) drops.
    pub(crate) fn request_started(self: &Arc<Self>) -> InProgress {
        self.busy.fetch_add(1, Ordering::AcqRel);
        self.served.store(true, Ordering::Release);
        self.head_started.store(0, Ordering::Release);
        InProgress(Arc::clone(self))
    }

    /// The connection became a websocket: never idle from now on.
    pub(crate) fn upgraded(&self) {
        self.upgraded.store(true, Ordering::Release);
    }
}

/// A request in progress.
pub(crate) struct InProgress(Arc<Activity>);

impl InProgress {
    /// `response` with this guard riding along in its body, so the request
    /// counts as in progress until the body has been sent or dropped.
    pub(crate) fn hold_until_sent(self, response: Response<Body>) -> Response<Body> {
        response.map(|body| {
            Held {
                body,
                _in_progress: self,
            }
            .boxed_unsync()
        })
    }
}

/// A response body that keeps its request [`InProgress`] until it is sent
/// or dropped. It forwards the body's size hint, so a body of known length
/// keeps its `Content-Length`: a refused upload's `413` then goes out whole
/// in one write before the connection closes over the unread rest (sent
/// chunked, its body could be lost to the reset that close causes).
struct Held {
    body: Body,
    _in_progress: InProgress,
}

impl hyper::body::Body for Held {
    type Data = bytes::Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

impl Drop for InProgress {
    fn drop(&mut self) {
        let activity = &self.0;
        if activity.busy.fetch_sub(1, Ordering::AcqRel) == 1 {
            activity
                .idle_since
                .store(activity.millis(), Ordering::Release);
            activity.head_started.store(0, Ordering::Release);
            // The socket may be waiting for a read without a deadline.
            activity.waker.wake();
        }
    }
}

/// A client socket that enforces the timeouts and eviction on its reads
/// (hyper reads while it waits for a request head) and leaves the table
/// when dropped.
pub(crate) struct Tracked {
    io: TcpStream,
    activity: Arc<Activity>,
    limits: Limits,
    timer: Pin<Box<Sleep>>,
    armed: Option<Instant>,
    _slot: Slot,
}

impl Tracked {
    pub(crate) fn activity(&self) -> Arc<Activity> {
        Arc::clone(&self.activity)
    }
}

impl AsyncRead for Tracked {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let activity = &this.activity;
        if activity.evicted.load(Ordering::Acquire) && activity.is_idle() {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "closed to make room at the connection cap",
            )));
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before
                    && activity.is_idle()
                    && activity.head_started.load(Ordering::Acquire) == 0
                {
                    let now = activity.millis() + 1;
                    activity.head_started.store(now, Ordering::Release);
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                activity.waker.register(cx.waker());
                let Some(deadline) = activity.deadline(&this.limits) else {
                    return Poll::Pending;
                };
                if this.armed != Some(deadline) {
                    this.timer.as_mut().reset(deadline);
                    this.armed = Some(deadline);
                }
                if this.timer.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "no request within the header-read or idle timeout",
                    )));
                }
                Poll::Pending
            }
        }
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}
