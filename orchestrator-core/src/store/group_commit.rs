//! Group commit: the write transactions of many requests share one database
//! commit.
//!
//! Why: a task's lifecycle is four small write requests. Committed one by
//! one, each pays a whole commit (SQLite: the pages it dirtied appended to
//! the WAL again, plus the BEGIN/COMMIT round trips to the connection's
//! worker thread; PostgreSQL: a WAL flush) for a few rows of work, and on
//! SQLite every request queues behind the one writer for all of it.
//!
//! How: a store has a few *writers* (SQLite: one, its single writer
//! connection; PostgreSQL: one by default, more on request), each a dedicated connection behind
//! a lock. [`Writer::begin`] takes the lock, opens the writer's *batch* (one
//! outer database transaction) if none is open, and opens a savepoint for
//! this request: the request's [`super::Tx`] runs its statements inside it.
//! At [`Turn::commit`] the savepoint is released and the request joins the
//! batch; if other requests are waiting for the writer (and the batch is
//! neither full nor old), the lock passes to the next one, whose savepoint
//! follows in the same outer transaction. The request that ends its turn
//! with nobody waiting commits the batch once, and every member is answered
//! only then: acknowledged still means committed. A request that fails or is
//! dropped rolls back to its savepoint: it leaves no trace and the others in
//! its batch are untouched. A failed batch commit fails every member (none
//! of them was acknowledged).
//!
//! Under light load a batch holds one request, committed at once (no added
//! delay); under load the batch grows to whatever arrived while it ran.
//!
//! Every step that a cancelled request future could leave half done (the
//! savepoint release and the batch commit, the rollback of a dropped
//! request) runs in a spawned task that finishes whatever happens to the
//! request, so a batch is never left open without someone to end it; a
//! member waiting for its batch also checks on it now and then and commits
//! it itself if it finds the writer idle with its batch still open.
//!
//! The events a member recorded are published by whoever commits the batch,
//! after the commit, in the members' order (the commit order).
//!
//! **Unguarded turns.** A savepoint costs a round trip per request (to the
//! SQLite connection's worker thread, or to the PostgreSQL server), and the
//! writer is the serial resource: the hot task transitions (create, claim,
//! start, complete) are one write statement each. [`Writer::begin`] with
//! `guarded: false` therefore opens no savepoint; the request's statements
//! run straight in the batch and its commit costs no round trip. The price
//! is paid only on failure: an unguarded request that ran any statement and
//! then fails (or is dropped) rolls back the whole batch, whose members are
//! told the commit failed (none of them was acknowledged), so nothing is
//! ever half written. [`Turn::guard`] opens the savepoint late, for a
//! request whose first statement turned out to change nothing (a fast path
//! that did not apply) and that goes on to do more, which may fail in the
//! ordinary way (404, 409). PostgreSQL honours unguarded turns only with
//! one writer: with several, two batches can wait on each other's rows, and
//! the deadlock that ends it would then fail a whole batch.

use super::{Access, Buses, Db, Deferred, Topic};
use crate::api::Event;
use crate::error::{Error, Result};
use sqlx::postgres::PgConnectOptions;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, PgConnection, SqliteConnection};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::time::{Duration, Instant};
use tokio::sync::{Mutex, OwnedMutexGuard, watch};

/// How long [`Writer::begin`] waits for a writer before answering 503.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(30);

/// How often a member waiting for its batch checks that the batch still
/// has someone to commit it (only matters when a request was cancelled
/// while waiting for the writer).
const STRANDED_CHECK: Duration = Duration::from_millis(5);

/// The savepoint each request's transaction runs in.
const SAVEPOINT: &str = "SAVEPOINT orch_request";
const RELEASE: &str = "RELEASE SAVEPOINT orch_request";
/// A request's release and the next request's savepoint, in one round trip
/// (when the turn passes to a waiting request).
const RELEASE_AND_NEXT: &str = "RELEASE SAVEPOINT orch_request; SAVEPOINT orch_request";
const ROLLBACK_TO: &str = "ROLLBACK TO SAVEPOINT orch_request; RELEASE SAVEPOINT orch_request";

/// How batches are formed: how many requests one commit may carry and how
/// long the first of them may wait for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupCommit {
    /// Most requests in one batch; 1 turns group commit off (every request
    /// commits alone, as a plain transaction would).
    pub max_batch: usize,
    /// A batch older than this is committed by the next request that ends
    /// its turn, even if others are waiting, so a steady stream of arrivals
    /// cannot hold the first members' answers for long. `None`: the
    /// backend's default ([`GroupCommit::SQLITE_MAX_DELAY`],
    /// [`GroupCommit::POSTGRES_MAX_DELAY`]).
    pub max_delay: Option<Duration>,
}

impl GroupCommit {
    /// SQLite's statements take tens of microseconds: a short bound already
    /// lets a batch gather every waiting request.
    pub const SQLITE_MAX_DELAY: Duration = Duration::from_millis(2);
    /// A PostgreSQL statement is a network round trip (about 0.3 ms here), so
    /// a 2 ms bound cut batches to a handful of requests, each batch paying
    /// its flush and a WAL fsync; 10 ms lets them gather (BENCHMARKS.md).
    /// A batch only stays open while others wait, so this delays nothing
    /// under light load.
    pub const POSTGRES_MAX_DELAY: Duration = Duration::from_millis(10);
}

impl Default for GroupCommit {
    fn default() -> Self {
        Self {
            max_batch: 128,
            max_delay: None,
        }
    }
}

/// A writer's [`GroupCommit`], with the backend's defaults filled in.
#[derive(Debug, Clone, Copy)]
struct Policy {
    max_batch: usize,
    max_delay: Duration,
}

/// How to open a writer connection again after it broke.
#[derive(Clone)]
pub(crate) enum Opener {
    Sqlite(SqliteConnectOptions),
    Postgres(PgConnectOptions),
}

impl Opener {
    async fn open(&self) -> std::result::Result<WriterConn, sqlx::Error> {
        Ok(match self {
            Self::Sqlite(options) => WriterConn::Sqlite(options.connect().await?),
            Self::Postgres(options) => WriterConn::Postgres(options.connect().await?),
        })
    }

    /// Opens a batch and (`guarded`) its first request's savepoint, in one
    /// round trip.
    fn begin_sql(&self, guarded: bool) -> &'static str {
        match (self, guarded) {
            // Take the write lock at once: a batch never starts as a reader.
            (Self::Sqlite(_), true) => "BEGIN IMMEDIATE; SAVEPOINT orch_request",
            (Self::Sqlite(_), false) => "BEGIN IMMEDIATE",
            (Self::Postgres(_), true) => "BEGIN; SAVEPOINT orch_request",
            (Self::Postgres(_), false) => "BEGIN",
        }
    }
}

/// A writer's dedicated connection.
pub(crate) enum WriterConn {
    Sqlite(SqliteConnection),
    Postgres(PgConnection),
}

impl WriterConn {
    async fn run(&mut self, sql: &'static str) -> std::result::Result<(), sqlx::Error> {
        match self {
            Self::Sqlite(c) => sqlx::raw_sql(sql).execute(c).await.map(|_| ()),
            Self::Postgres(c) => sqlx::raw_sql(sql).execute(c).await.map(|_| ()),
        }
    }

    pub(crate) fn db(&mut self) -> Db<'_> {
        match self {
            Self::Sqlite(c) => Db::Sqlite(c),
            Self::Postgres(c) => Db::Postgres(c),
        }
    }
}

/// What a finished batch tells its members: committed, or why not.
type Outcome = Option<std::result::Result<(), Arc<str>>>;

/// The open outer transaction of a writer and the requests that joined it.
struct Batch {
    id: u64,
    started: Instant,
    members: usize,
    events: Vec<Event>,
    deferred: Vec<Deferred>,
    logs_written: bool,
    done: watch::Sender<Outcome>,
}

/// The state behind a writer's lock.
pub(crate) struct Slot {
    /// `None` once the connection broke; reopened by the next turn.
    conn: Option<WriterConn>,
    batch: Option<Batch>,
    /// A request's savepoint is (or may be) open.
    in_request: bool,
    /// The previous turn opened the next request's savepoint already.
    savepoint_ready: bool,
    /// The request runs without a savepoint (module docs): how many
    /// statements it has run so far. `None` for a guarded request.
    unguarded: Option<u32>,
}

/// One writer connection with its batches.
pub(crate) struct Writer {
    slot: Arc<Mutex<Slot>>,
    /// [`Writer::begin`] calls waiting for the lock: a turn that ends while
    /// some are waiting leaves the batch open for them.
    waiting: AtomicUsize,
    next_batch: AtomicU64,
    policy: Policy,
    opener: Opener,
    buses: Arc<Buses>,
    /// Whether turns may run without a savepoint (module docs).
    unguarded_turns: bool,
}

/// Decrements a counter when dropped (a cancelled wait counts out too).
struct Counted<'a>(&'a AtomicUsize);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

impl Writer {
    pub(crate) fn new(
        conn: WriterConn,
        opener: Opener,
        policy: GroupCommit,
        buses: Arc<Buses>,
        unguarded_turns: bool,
    ) -> Arc<Self> {
        let max_delay = policy.max_delay.unwrap_or(match opener {
            Opener::Sqlite(_) => GroupCommit::SQLITE_MAX_DELAY,
            Opener::Postgres(_) => GroupCommit::POSTGRES_MAX_DELAY,
        });
        Arc::new(Self {
            slot: Arc::new(Mutex::new(Slot {
                conn: Some(conn),
                batch: None,
                in_request: false,
                savepoint_ready: false,
                unguarded: None,
            })),
            waiting: AtomicUsize::new(0),
            next_batch: AtomicU64::new(1),
            policy: Policy {
                max_batch: policy.max_batch.max(1),
                max_delay,
            },
            opener,
            buses,
            unguarded_turns,
        })
    }

    /// Whether nobody holds this writer right now (for the metrics gauge).
    pub(crate) fn is_idle(&self) -> bool {
        self.slot.try_lock().is_ok()
    }

    /// Requests waiting for this writer (to pick the least busy one).
    pub(crate) fn queue_len(&self) -> usize {
        self.waiting.load(SeqCst)
    }

    /// Takes the writer if nobody holds it.
    pub(crate) fn try_take(self: &Arc<Self>) -> Option<OwnedMutexGuard<Slot>> {
        self.slot.clone().try_lock_owned().ok()
    }

    /// Waits for the writer, then opens this request's savepoint (and the
    /// batch, if none is open). `guarded: false` asks for no savepoint
    /// (module docs); honoured where this writer allows unguarded turns, and
    /// only when the previous turn has not opened the savepoint already
    /// (then it costs nothing).
    pub(crate) async fn begin(
        self: &Arc<Self>,
        held: Option<OwnedMutexGuard<Slot>>,
        guarded: bool,
    ) -> Result<Turn> {
        let guard = match held {
            Some(guard) => guard,
            None => {
                self.waiting.fetch_add(1, SeqCst);
                let counted = Counted(&self.waiting);
                let acquired =
                    tokio::time::timeout(ACQUIRE_TIMEOUT, self.slot.clone().lock_owned()).await;
                drop(counted);
                acquired.map_err(|_| {
                    Error::Unavailable("the database writer stayed busy for 30 s".into())
                })?
            }
        };
        let mut turn = Turn {
            guard: Some(guard),
            writer: self.clone(),
        };
        let slot = turn.slot();
        if slot.conn.is_none() {
            slot.conn = Some(
                self.opener
                    .open()
                    .await
                    .map_err(|e| Error::Unavailable(Box::new(e)))?,
            );
        }
        slot.in_request = true;
        let unguarded = !guarded && self.unguarded_turns;
        slot.unguarded = None;
        if slot.batch.is_none() {
            // Marked open before the statement: if this future is dropped
            // mid-way, the cleanup finds out with a ROLLBACK.
            let (done, _) = watch::channel(None);
            slot.batch = Some(Batch {
                id: self.next_batch.fetch_add(1, SeqCst),
                started: Instant::now(),
                members: 0,
                events: Vec::new(),
                deferred: Vec::new(),
                logs_written: false,
                done,
            });
            slot.savepoint_ready = false;
            let begin = self.opener.begin_sql(!unguarded);
            if let Err(e) = conn(slot).run(begin).await {
                // No member yet: nothing to fail but this request.
                slot.in_request = false;
                slot.batch = None;
                rollback_all(slot, &e).await;
                return Err(e.into());
            }
            if unguarded {
                slot.unguarded = Some(0);
            }
        } else if std::mem::take(&mut slot.savepoint_ready) {
            // The previous turn opened this request's savepoint: guarded
            // for free.
        } else if unguarded {
            slot.unguarded = Some(0);
        } else if let Err(e) = conn(slot).run(SAVEPOINT).await {
            slot.in_request = false;
            abort_batch(slot, &e).await;
            return Err(e.into());
        }
        Ok(turn)
    }

    /// Ends a turn: commits the batch when nobody is waiting for the writer
    /// (or the batch is full or old), else leaves it open for the next.
    async fn end_turn(&self, slot: &mut Slot) {
        if !self.passes_on(slot) {
            self.commit_batch(slot).await;
        }
    }

    /// Whether the open batch stays open for a request waiting for the
    /// writer (it is neither full nor old).
    fn passes_on(&self, slot: &Slot) -> bool {
        slot.batch.as_ref().is_some_and(|batch| {
            self.waiting.load(SeqCst) > 0
                && batch.members < self.policy.max_batch
                && batch.started.elapsed() < self.policy.max_delay
        })
    }

    /// Commits the open batch and tells its members; on success publishes
    /// their events in order and wakes the streams.
    async fn commit_batch(&self, slot: &mut Slot) {
        slot.savepoint_ready = false;
        let Some(mut batch) = slot.batch.take() else {
            return;
        };
        let committed = match flush_deferred(conn(slot), std::mem::take(&mut batch.deferred)).await
        {
            Ok(events) => {
                batch.events.extend(events);
                conn(slot).run("COMMIT").await
            }
            Err(e) => Err(e),
        };
        match committed {
            Ok(()) => {
                // Publication in id order, the order readers of the table
                // see (rows written at the flush get the batch's last ids).
                batch.events.sort_by_key(|e| e.id);
                batch.done.send_replace(Some(Ok(())));
                let (bus, wake, notifier) = &*self.buses;
                let wrote_events = !batch.events.is_empty();
                if let Some(notifier) = notifier {
                    notifier.request(wrote_events, batch.logs_written);
                }
                if wrote_events {
                    let _ = wake.send(Topic::Events);
                }
                if batch.logs_written {
                    let _ = wake.send(Topic::Logs);
                }
                for event in batch.events {
                    // No subscriber is not an error: streams come and go.
                    let _ = bus.send(Arc::new(event));
                }
            }
            Err(e) => {
                tracing::error!(error = %e, members = batch.members, "batch commit failed");
                rollback_all(slot, &e).await;
                batch.done.send_replace(Some(Err(e.to_string().into())));
            }
        }
    }

    /// Waits for the outcome of batch `id`. If the writer is found idle with
    /// that batch still open (the request that should have gone on was
    /// cancelled while waiting), commits it.
    async fn outcome(self: &Arc<Self>, id: u64, mut done: watch::Receiver<Outcome>) -> Result<()> {
        loop {
            let current = done.borrow_and_update().clone();
            if let Some(outcome) = current {
                return outcome.map_err(|message| {
                    Error::Unavailable(format!("the database commit failed: {message}").into())
                });
            }
            tokio::select! {
                changed = done.changed() => {
                    if changed.is_err() {
                        return Err(Error::internal("a write batch ended without an outcome"));
                    }
                }
                _ = tokio::time::sleep(STRANDED_CHECK) => {
                    if let Some(mut guard) = self.try_take() {
                        let open = guard.batch.as_ref().is_some_and(|b| b.id == id);
                        if open && !guard.in_request {
                            let writer = self.clone();
                            // Uncancellable: the commit finishes even if
                            // this request is dropped meanwhile.
                            let _ = tokio::spawn(async move {
                                writer.commit_batch(&mut guard).await;
                            })
                            .await;
                        }
                    }
                }
            }
        }
    }

    /// Finishes the turn of a request that ended without committing: rolls
    /// its savepoint back, then ends the turn. An unguarded request that ran
    /// a statement has no savepoint to go back to: the batch is rolled back.
    async fn abandon(&self, slot: &mut Slot) {
        if slot.in_request {
            slot.in_request = false;
            match slot.unguarded.take() {
                None => {}
                Some(0) => return self.end_turn(slot).await,
                Some(_) => {
                    tracing::warn!(
                        "a request without a savepoint failed: its batch is rolled back"
                    );
                    roll_back(slot).await;
                    tell_failed(
                        slot,
                        "a request in the same batch failed without a savepoint; retry",
                    );
                    return self.end_turn(slot).await;
                }
            }
            if let Some(conn) = slot.conn.as_mut() {
                if let Err(e) = conn.run(ROLLBACK_TO).await {
                    abort_batch(slot, &e).await;
                }
            } else {
                slot.batch = None;
            }
        }
        self.end_turn(slot).await;
    }

    /// Commits the open batch, if any (at shutdown).
    pub(crate) async fn flush(self: &Arc<Self>) {
        let mut guard = self.slot.clone().lock_owned().await;
        if !guard.in_request {
            self.commit_batch(&mut guard).await;
        }
    }
}

/// One deferred row, opaque here (its flush knows its type).
type DeferredRow = Box<dyn std::any::Any + Send>;

/// Writes a batch's deferred rows, one flush per kind (kinds in the order
/// they first appear), and returns the events they inserted. A failure is
/// reported as a database error so the batch fails as a failed commit would.
async fn flush_deferred(
    conn: &mut WriterConn,
    deferred: Vec<Deferred>,
) -> std::result::Result<Vec<Event>, sqlx::Error> {
    let mut kinds: Vec<(&'static str, super::FlushFn, Vec<DeferredRow>)> = Vec::new();
    for item in deferred {
        match kinds.iter_mut().find(|(kind, ..)| *kind == item.kind) {
            Some((_, _, rows)) => rows.push(item.row),
            None => kinds.push((item.kind, item.flush, vec![item.row])),
        }
    }
    let mut events = Vec::new();
    for (kind, flush, rows) in kinds {
        match flush(conn, rows).await {
            Ok(inserted) => events.extend(inserted),
            Err(e) => {
                return Err(sqlx::Error::Protocol(format!(
                    "writing the batch's deferred {kind} rows failed: {e:?}"
                )));
            }
        }
    }
    Ok(events)
}

impl Access for WriterConn {
    fn db(&mut self) -> Db<'_> {
        WriterConn::db(self)
    }
}

/// The connection of a slot that has one (checked at the start of a turn).
fn conn(slot: &mut Slot) -> &mut WriterConn {
    slot.conn
        .as_mut()
        .expect("a turn starts by reopening a broken writer connection")
}

/// Forgets the connection when the error says it is gone, so the next turn
/// opens a new one.
fn drop_broken(slot: &mut Slot, error: &sqlx::Error) {
    if matches!(
        error,
        sqlx::Error::Io(_)
            | sqlx::Error::Protocol(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::WorkerCrashed
    ) {
        slot.conn = None;
    }
}

/// Rolls the whole outer transaction back (its members are told by the
/// caller); a connection that cannot even roll back is dropped.
async fn rollback_all(slot: &mut Slot, cause: &sqlx::Error) {
    drop_broken(slot, cause);
    roll_back(slot).await;
}

/// Rolls the outer transaction back on a connection that is still sound.
async fn roll_back(slot: &mut Slot) {
    if let Some(conn) = slot.conn.as_mut()
        && let Err(e) = conn.run("ROLLBACK").await
    {
        tracing::warn!(error = %e, "writer connection dropped after a failed rollback");
        slot.conn = None;
    }
}

/// Fails the open batch: rolls it back and tells its members why.
async fn abort_batch(slot: &mut Slot, cause: &sqlx::Error) {
    tracing::error!(error = %cause, "write batch aborted");
    rollback_all(slot, cause).await;
    tell_failed(slot, &cause.to_string());
}

/// Ends the open batch as failed (after its rollback) and tells its members.
fn tell_failed(slot: &mut Slot, message: &str) {
    if let Some(batch) = slot.batch.take() {
        batch.done.send_replace(Some(Err(message.into())));
    }
}

/// One request's hold on a writer: its savepoint is open until
/// [`Turn::commit`]; dropped without it, the savepoint is rolled back.
pub(crate) struct Turn {
    guard: Option<OwnedMutexGuard<Slot>>,
    writer: Arc<Writer>,
}

impl Turn {
    pub(crate) fn slot(&mut self) -> &mut Slot {
        self.guard
            .as_mut()
            .expect("a turn holds its writer until it ends")
    }

    /// The request's connection, inside its savepoint (or, unguarded,
    /// straight in the batch: each call counts as a statement run).
    pub(crate) fn db(&mut self) -> Db<'_> {
        let slot = self.slot();
        if let Some(statements) = slot.unguarded.as_mut() {
            *statements += 1;
        }
        conn(slot).db()
    }

    /// Opens the request's savepoint now, if it runs without one. Only for a
    /// request whose statements so far changed nothing: they stay outside
    /// the savepoint.
    pub(crate) async fn guard(&mut self) -> Result<()> {
        let slot = self.slot();
        if slot.unguarded.is_none() {
            return Ok(());
        }
        // Cleared first: if this future is dropped mid-way, the savepoint may
        // exist, and the rollback that follows copes with either.
        slot.unguarded = None;
        if let Err(e) = conn(slot).run(SAVEPOINT).await {
            slot.in_request = false;
            abort_batch(slot, &e).await;
            return Err(e.into());
        }
        Ok(())
    }

    /// Releases the savepoint, joins the batch with the request's events and
    /// waits until the batch has committed.
    pub(crate) async fn commit(
        mut self,
        events: Vec<Event>,
        deferred: Vec<Deferred>,
        logs_written: bool,
    ) -> Result<()> {
        let mut guard = self.guard.take().expect("a turn is committed once");
        let writer = self.writer.clone();
        // The release and the end of the turn run to completion even if the
        // request is dropped while they do.
        let joined = tokio::spawn(async move {
            // Passing the turn on opens the next request's savepoint in
            // the same round trip as this one's release (counted as this
            // request joined: members + 1). An unguarded request has nothing
            // to release, and leaves the next one to open its own savepoint
            // if it wants one.
            let unguarded = guard.unguarded.take().is_some();
            let passes_on = !unguarded
                && writer.passes_on(&guard)
                && guard
                    .batch
                    .as_ref()
                    .is_some_and(|b| b.members + 1 < writer.policy.max_batch);
            let released = if unguarded {
                Ok(())
            } else {
                conn(&mut guard)
                    .run(if passes_on { RELEASE_AND_NEXT } else { RELEASE })
                    .await
            };
            if let Err(e) = released {
                if passes_on {
                    // Which of the two failed is unknown: fail the batch
                    // (nobody in it was answered yet).
                    guard.in_request = false;
                    abort_batch(&mut guard, &e).await;
                } else {
                    // The request alone fails: back to its savepoint (which
                    // a failed RELEASE leaves in place).
                    writer.abandon(&mut guard).await;
                }
                return Err(Error::from(e));
            }
            guard.in_request = false;
            guard.savepoint_ready = passes_on;
            let batch = guard
                .batch
                .as_mut()
                .expect("a request's savepoint lives in an open batch");
            batch.members += 1;
            batch.events.extend(events);
            batch.deferred.extend(deferred);
            batch.logs_written |= logs_written;
            let joined = (batch.id, batch.done.subscribe());
            writer.end_turn(&mut guard).await;
            Ok(joined)
        })
        .await
        .map_err(Error::internal)??;
        self.writer.outcome(joined.0, joined.1).await
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let Some(mut guard) = self.guard.take() else {
            return;
        };
        let writer = self.writer.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move { writer.abandon(&mut guard).await });
            }
            Err(_) => {
                // No runtime to roll back on: forget the connection (its
                // transaction dies with it); the next turn opens another.
                guard.conn = None;
                if let Some(batch) = guard.batch.take() {
                    batch
                        .done
                        .send_replace(Some(Err("the writer was dropped".into())));
                }
                guard.in_request = false;
                guard.unguarded = None;
            }
        }
    }
}

/// The writers of a store; a request takes an idle one, or queues on the
/// least busy.
pub(crate) struct Writers {
    list: Vec<Arc<Writer>>,
    next: AtomicUsize,
}

impl Writers {
    pub(crate) fn new(list: Vec<Arc<Writer>>) -> Self {
        assert!(!list.is_empty(), "a store has at least one writer");
        Self {
            list,
            next: AtomicUsize::new(0),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    pub(crate) fn idle(&self) -> usize {
        self.list.iter().filter(|w| w.is_idle()).count()
    }

    pub(crate) async fn begin(&self, guarded: bool) -> Result<Turn> {
        let n = self.list.len();
        let start = self.next.fetch_add(1, SeqCst) % n;
        for i in 0..n {
            let writer = &self.list[(start + i) % n];
            if let Some(guard) = writer.try_take() {
                return writer.begin(Some(guard), guarded).await;
            }
        }
        let least_busy = (0..n)
            .map(|i| &self.list[(start + i) % n])
            .min_by_key(|w| w.queue_len())
            .expect("at least one writer");
        least_busy.begin(None, guarded).await
    }

    pub(crate) async fn flush(&self) {
        for writer in &self.list {
            writer.flush().await;
        }
    }
}
