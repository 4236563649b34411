//! One writer: its lock, its batches and the turns taken on it.

use super::batch::{Batch, Failed, Outcome, flush_deferred};
use super::slot::{Slot, abort_batch, conn, drop_broken, roll_back, rollback_all, tell_failed};
use super::{GroupCommit, Opener, Policy, ROLLBACK_TO, SAVEPOINT, Turn, WriterConn};
use crate::error::{DbFault, Error, NotCommitted, Result, db_fault, text_fault};
use crate::store::health::PROBE_TIMEOUT;
use crate::store::{Buses, Topic};
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

/// One writer connection with its batches.
pub(crate) struct Writer {
    pub(super) slot: Arc<Mutex<Slot>>,
    /// [`Writer::begin`] calls waiting for the lock: a turn that ends while
    /// some are waiting leaves the batch open for them.
    pub(super) waiting: AtomicUsize,
    pub(super) next_batch: AtomicU64,
    /// Batches committed, and the requests they carried (for the metrics:
    /// their ratio is the mean batch size).
    committed_batches: AtomicU64,
    committed_requests: AtomicU64,
    pub(super) policy: Policy,
    pub(super) opener: Opener,
    pub(super) buses: Arc<Buses>,
    /// Whether turns may run without a savepoint (`group_commit` module
    /// docs): on PostgreSQL only on the first task writer, the one that
    /// never gives way ([`crate::store::DEFAULT_PG_WRITERS`]).
    pub(super) unguarded_turns: bool,
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
            Opener::Postgres(..) => GroupCommit::POSTGRES_MAX_DELAY,
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
            committed_batches: AtomicU64::new(0),
            committed_requests: AtomicU64::new(0),
            policy: Policy {
                max_batch: policy.max_batch.max(1),
                max_delay,
                split_queue: matches!(opener, Opener::Sqlite(_)),
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

    /// Batches begun on this writer so far (the checkpointer's sign that
    /// something was written).
    pub(crate) fn batches_begun(&self) -> u64 {
        self.next_batch.load(SeqCst) - 1
    }

    /// Batches committed on this writer so far, and the requests in them.
    pub(crate) fn committed(&self) -> (u64, u64) {
        (
            self.committed_batches.load(SeqCst),
            self.committed_requests.load(SeqCst),
        )
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
    /// (`group_commit` module docs); honoured where this writer allows
    /// unguarded turns, and only when the previous turn has not opened the
    /// savepoint already (then it costs nothing).
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
        let mut turn = Turn::new(guard, self.clone());
        let slot = turn.slot();
        if slot.conn.is_none() {
            // Bounded: a server that swallows packets would otherwise hold
            // this request (and the writer) for the kernel's connect timeout.
            let opened = tokio::time::timeout(PROBE_TIMEOUT, self.opener.open())
                .await
                .unwrap_or(Err(sqlx::Error::PoolTimedOut));
            match opened {
                Ok(conn) => slot.conn = Some(conn),
                Err(e) => {
                    self.buses.3.saw_sqlx(&e);
                    return Err(Error::Unavailable(Box::new(e)));
                }
            }
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
                turns: 0,
                events: Vec::new(),
                deferred: Vec::new(),
                logs_written: false,
                done,
            });
            slot.savepoint_ready = false;
            let begin = self.opener.begin_sql(!unguarded);
            if let Err(e) = conn(slot).run(begin).await {
                self.buses.3.saw_sqlx(&e);
                // No member yet: nothing to fail but this request, which
                // wrote nothing and may run again when the connection was
                // lost (the next turn opens a new one).
                slot.in_request = false;
                slot.batch = None;
                rollback_all(slot, &e).await;
                return Err(match db_fault(&e) {
                    Some(DbFault::Unreachable) => {
                        Error::Unavailable(Box::new(NotCommitted(e.to_string())))
                    }
                    _ => e.into(),
                });
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
    /// (or the batch is full, old or split off: [`Writer::passes_on`]),
    /// else leaves it open for the next.
    pub(super) async fn end_turn(&self, slot: &mut Slot) {
        if !self.passes_on(slot) {
            self.commit_batch(slot).await;
        }
    }

    /// Whether the open batch stays open for a request waiting for the
    /// writer (it is neither full nor old, nor, on SQLite, as large as the
    /// queue behind it: [`Policy::splits`]).
    pub(super) fn passes_on(&self, slot: &Slot) -> bool {
        slot.batch.as_ref().is_some_and(|batch| {
            let waiting = self.waiting.load(SeqCst);
            waiting > 0
                && batch.members < self.policy.max_batch
                && batch.started.elapsed() < self.policy.max_delay
                && !self.policy.splits(batch.turns, waiting)
        })
    }

    /// Commits the open batch and tells its members; on success publishes
    /// their events in order and wakes the streams.
    pub(super) async fn commit_batch(&self, slot: &mut Slot) {
        slot.savepoint_ready = false;
        let Some(mut batch) = slot.batch.take() else {
            return;
        };
        let mut commit_sent = false;
        let committed = match flush_deferred(conn(slot), std::mem::take(&mut batch.deferred)).await
        {
            Ok(events) => {
                batch.events.extend(events);
                commit_sent = true;
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
                self.committed_batches.fetch_add(1, SeqCst);
                self.committed_requests
                    .fetch_add(batch.members as u64, SeqCst);
                crate::store::writer_thread::note_batch(batch.members);
                let (bus, wake, notifier, health) = &*self.buses;
                health.committed();
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
                self.buses.3.saw_sqlx(&e);
                tracing::error!(error = %e, members = batch.members, "batch commit failed");
                rollback_all(slot, &e).await;
                batch.done.send_replace(Some(Err(Failed {
                    message: e.to_string().into(),
                    commit_sent,
                })));
            }
        }
    }

    /// Waits for the outcome of batch `id`. If the writer is found idle with
    /// that batch still open (the request that should have gone on was
    /// cancelled while waiting), commits it.
    pub(super) async fn outcome(
        self: &Arc<Self>,
        id: u64,
        mut done: watch::Receiver<Outcome>,
    ) -> Result<()> {
        loop {
            let current = done.borrow_and_update().clone();
            if let Some(outcome) = current {
                return outcome
                    .map_err(|failed| batch_failure(failed.commit_sent, &failed.message));
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
    pub(super) async fn abandon(&self, slot: &mut Slot) {
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

    /// Runs `sql` on this writer's own connection between two batches: it
    /// waits for the writer like a request, commits a batch left open for
    /// requests queued behind it, and runs `sql` outside any transaction.
    /// `None` when it cannot run now: the connection is broken (the next
    /// turn reopens it), or a cancelled request's cleanup holds the batch.
    ///
    /// For the SQLite checkpointer's WAL restarts (`store::checkpoint`): a
    /// connection that finds the WAL restarted by another connection drops
    /// its whole page cache, so a restart made elsewhere cost the writer a
    /// cold cache after every restart; made here, the cache stays.
    pub(crate) async fn between_batches(
        self: &Arc<Self>,
        sql: &'static str,
    ) -> Option<std::result::Result<(), sqlx::Error>> {
        let writer = self.clone();
        // Uncancellable, as the stranded batch's commit in `outcome`: a
        // checkpointer aborted when the store closes must not cut short the
        // commit of a batch with members waiting for it.
        tokio::spawn(async move { writer.run_between_batches(sql).await })
            .await
            .ok()
            .flatten()
    }

    async fn run_between_batches(
        &self,
        sql: &'static str,
    ) -> Option<std::result::Result<(), sqlx::Error>> {
        let mut guard = self.slot.clone().lock_owned().await;
        if !guard.in_request {
            self.commit_batch(&mut guard).await;
        }
        if guard.batch.is_some() {
            // A cancelled request's cleanup still owns the batch.
            return None;
        }
        let ran = guard.conn.as_mut()?.run(sql).await;
        if let Err(e) = &ran {
            drop_broken(&mut guard, e);
        }
        Some(ran)
    }

    /// Commits the open batch, if any (at shutdown).
    pub(crate) async fn flush(self: &Arc<Self>) {
        let mut guard = self.slot.clone().lock_owned().await;
        if !guard.in_request {
            self.commit_batch(&mut guard).await;
        }
    }
}

/// The error a request gets when its batch failed. A full disk says so
/// (writes fail until space is freed, and retrying now would fail again);
/// anything else is the database being unreachable, retried by the server
/// when the commit was never sent.
fn batch_failure(commit_sent: bool, message: &str) -> Error {
    if text_fault(message) == Some(DbFault::DiskFull) {
        return Error::StorageFull(format!("a write batch failed: {message}").into());
    }
    match commit_sent {
        true => Error::Unavailable(format!("the database commit failed: {message}").into()),
        false => Error::Unavailable(Box::new(NotCommitted(message.to_string()))),
    }
}
