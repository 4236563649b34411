//! Storage on sqlx: an embedded SQLite file by default, PostgreSQL for several
//! replicas.
//!
//! Repository code is written once. A repository function takes
//! `&mut impl Access` (a [`Tx`] for writes, a [`Conn`] for reads) and runs its
//! query through `on_db!`, which expands the same expression once per
//! backend so each copy is type-checked against its own driver. SQL text uses
//! `$1`-style parameters, which both drivers accept; where the dialects really
//! differ, the `sqlite:` / `postgres:` form of the macro takes two bodies.
//!
//! Writes go through a few dedicated writer connections with group commit
//! (`group_commit`): a request's [`Tx`] is a savepoint inside its writer's
//! open batch, and one commit answers every request of the batch. SQLite
//! allows one writer, so it has exactly one (in-process writers queue instead
//! of failing with `SQLITE_BUSY`) and reads go through a separate pool, with
//! WAL so readers never block the writer; PostgreSQL has a small set of
//! writers beside its pool.
//!
//! Events written inside a [`Tx`] are published to the in-process bus only
//! after the batch that holds it commits.

mod access;
mod checkpoint;
mod combine;
mod connect;
mod data_lock;
mod deferred;
mod file_mode;
mod group_commit;
mod health;
mod notify;
pub mod offline;
mod options;
mod search;
mod stored_json;
mod writer_thread;
pub use access::{Access, Conn, Db};
pub use checkpoint::{DEFAULT_WAL_RESTART_BYTES, MIN_WAL_RESTART_BYTES};
pub(crate) use combine::{Combine, Combined, Post};
pub(crate) use connect::{POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS};
pub use data_lock::{DataLock, LockFailure};
pub(crate) use deferred::{DeferKind, Deferred, WithParts, arg_count, push_arg};
pub use group_commit::GroupCommit;
use group_commit::{Opener, Turn, Writer, WriterConn, Writers};
use health::Health;
pub(crate) use notify::PgNotifier;
pub use options::{
    DEFAULT_PG_WRITERS, Dialect, PG_APPEND_WRITERS, PG_GIVE_WAY_AFTER, StoreOptions,
};
pub use search::MAX_SEARCH_CHARS;
pub(crate) use search::contains_pattern;
pub use stored_json::{StoredJson, UNREADABLE_KEY};
use writer_thread::WriterThread;

use crate::api::{Event, Timestamp};
use crate::clock::Clock;
use crate::error::Result;
use sqlx::{PgPool, SqlitePool};
use std::sync::Arc;
use tokio::sync::broadcast;

/// Runs one expression against whichever backend `access` is on.
///
/// `on_db!(tx, c => sqlx::query("...").bind(x).execute(c).await.map(|r| r.rows_affected()))` expands the
/// body once per backend, with `c` bound to that backend's connection. Use
/// `&mut *c` to run several statements in one body. The two-body form takes
/// dialect-specific SQL: `on_db!(tx, c => sqlite: ..., postgres: ...)`.
macro_rules! on_db {
    ($access:expr, $c:ident => sqlite: $sqlite:expr, postgres: $postgres:expr $(,)?) => {
        match $crate::store::Access::db($access) {
            $crate::store::Db::Sqlite($c) => $sqlite,
            $crate::store::Db::Postgres($c) => $postgres,
        }
    };
    ($access:expr, $c:ident => $body:expr) => {
        match $crate::store::Access::db($access) {
            $crate::store::Db::Sqlite($c) => $body,
            $crate::store::Db::Postgres($c) => $body,
        }
    };
}
pub(crate) use on_db;

/// What changed, for the wake-up bus that streams wait on. Streams read the
/// rows themselves from the table after a wake-up (by cursor), so a wake-up
/// carries no data and a missed or duplicated one is harmless.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    /// New log rows were committed.
    Logs,
    /// New events were committed.
    Events,
}

enum Backend {
    Sqlite {
        read: SqlitePool,
        writers: Writers,
        /// Checkpoints the WAL off the write path ([`checkpoint`]).
        checkpointer: tokio::task::AbortHandle,
        /// Where the hot writes run, beside the writer connection's own
        /// thread ([`writer_thread`]).
        writer_thread: WriterThread,
        /// Held while the store lives ([`data_lock`]).
        _lock: Option<DataLock>,
    },
    Postgres {
        pool: PgPool,
        writers: Writers,
        /// Log ingest's own writers ([`PG_APPEND_WRITERS`]).
        append: Writers,
        /// The LISTEN task that turns other replicas' NOTIFYs into wake-ups.
        listener: tokio::task::AbortHandle,
        /// Sends this replica's NOTIFYs (requested by the writers after each
        /// commit, coalesced).
        notifier_task: tokio::task::AbortHandle,
    },
}

/// A handle to the database; cheap to clone.
#[derive(Clone)]
pub struct Store {
    backend: Arc<Backend>,
    bus: broadcast::Sender<Arc<Event>>,
    wake: broadcast::Sender<Topic>,
    /// The queues of combined statements, one per kind ([`combine`]).
    combiners: Arc<combine::Combiners>,
    /// What every PostgreSQL writer connection ran when it opened
    /// ([`StoreOptions::writer_session`]).
    writer_session: &'static str,
    /// The circuit breaker and the full-disk flag ([`health`]).
    health: Arc<Health>,
    /// PostgreSQL: this replica's NOTIFY sender ([`Store::wake_claimers`]).
    notifier: Option<Arc<PgNotifier>>,
    /// The control plane's clock ([`StoreOptions::clock`]).
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("dialect", &self.dialect())
            .finish()
    }
}

impl Store {
    /// The set-up SQL of the PostgreSQL writer connections
    /// ([`StoreOptions::writer_session`]); empty on SQLite.
    pub(crate) fn writer_session(&self) -> &'static str {
        match self.dialect() {
            Dialect::Sqlite => "",
            Dialect::Postgres => self.writer_session,
        }
    }

    /// Now, by the control plane's clock ([`StoreOptions::clock`]), in the
    /// wire's milliseconds: for the few writes made outside a transaction
    /// or before the control plane exists.
    pub(crate) fn now(&self) -> Timestamp {
        Timestamp::from(self.clock.now())
    }

    /// Which backend this store runs on, for the few places whose SQL or
    /// behaviour differs.
    pub fn dialect(&self) -> Dialect {
        match *self.backend {
            Backend::Sqlite { .. } => Dialect::Sqlite,
            Backend::Postgres { .. } => Dialect::Postgres,
        }
    }

    /// Starts a write transaction: a savepoint in the open batch of the
    /// first writer (`group_commit`), the one that never gives way
    /// ([`DEFAULT_PG_WRITERS`]). Waits while it is busy.
    pub async fn begin(&self) -> Result<Tx> {
        self.begin_turn(true).await
    }

    /// [`Store::begin`] on whichever writer is free first, for a
    /// transaction that can run again when it gives way on a writer other
    /// than the first: a `claim-batch`, whose batches spread over the
    /// writers measured 1.30x of all on one (bench/HISTORY.md item 49). A
    /// failure with [`Error::is_race`](crate::error::Error) there means
    /// run it again with [`Store::begin`] (and count it with
    /// [`Store::gave_way`]).
    pub(crate) async fn begin_spread(&self) -> Result<Tx> {
        self.turn(self.writers(), true).await
    }

    /// Counts a write that gave way on a writer other than the first and
    /// ran again on the first ([`WriteBatches::gave_way`]).
    pub(crate) fn gave_way(&self) {
        self.combiners
            .gave_way
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// [`Store::begin`] without the savepoint where the writer allows it
    /// ([`group_commit`], unguarded turns), for a request whose one
    /// write is a single statement. If that statement changed nothing and
    /// the request goes on, call [`Tx::guard`] first. Once it has run a
    /// statement, an unguarded transaction that fails rolls back its whole
    /// batch: keep whatever can fail in the ordinary way (validation, 404,
    /// 403, 409) before its first statement or after [`Tx::guard`].
    pub(crate) async fn begin_unguarded(&self) -> Result<Tx> {
        self.begin_turn(false).await
    }

    /// [`Store::begin`] for a transaction that only inserts `logs` rows
    /// (log ingest): on PostgreSQL it runs on writers of its own
    /// ([`PG_APPEND_WRITERS`]), beside the task writes; SQLite has one
    /// writer for everything.
    pub(crate) async fn begin_append(&self) -> Result<Tx> {
        let writers = match &*self.backend {
            Backend::Postgres { append, .. } => append,
            Backend::Sqlite { writers, .. } => writers,
        };
        self.turn(writers, true).await
    }

    /// [`Store::begin_unguarded`] on the writer of index `writer` (modulo
    /// their number) where the store has several ([`Writers::begin_on`]).
    pub(crate) async fn begin_unguarded_on(&self, writer: usize) -> Result<Tx> {
        self.turn_on(writer, false).await
    }

    async fn begin_turn(&self, guarded: bool) -> Result<Tx> {
        self.turn_on(0, guarded).await
    }

    async fn turn_on(&self, writer: usize, guarded: bool) -> Result<Tx> {
        self.health.check()?;
        Ok(self.tx(self.writers().begin_on(writer, guarded).await?))
    }

    async fn turn(&self, writers: &Writers, guarded: bool) -> Result<Tx> {
        self.health.check()?;
        Ok(self.tx(writers.begin(guarded).await?))
    }

    fn tx(&self, turn: Turn) -> Tx {
        Tx {
            turn,
            pending: Vec::new(),
            deferred: Vec::new(),
            logs_written: false,
            members: 1,
            clock: self.clock.clone(),
        }
    }

    /// Runs a hot write (task create, claim, start, complete, fail; a log
    /// ingest batch) where its statements are cheapest: on SQLite on the writer
    /// thread ([`writer_thread`]), on PostgreSQL right here. `work` runs to
    /// its end even if the caller stops waiting, as a write that reached the
    /// database before its client went away does.
    pub(crate) async fn on_writer<T, F>(&self, work: F) -> Result<T>
    where
        F: std::future::Future<Output = Result<T>> + Send + 'static,
        T: Send + 'static,
    {
        match &*self.backend {
            Backend::Sqlite { writer_thread, .. } => writer_thread.run(work).await,
            Backend::Postgres { .. } => work.await,
        }
    }

    /// A connection for reads (outside any transaction).
    pub async fn read(&self) -> Result<Conn> {
        self.health.check()?;
        let conn = match &*self.backend {
            Backend::Sqlite { read, .. } => read.acquire().await.map(Conn::Sqlite),
            Backend::Postgres { pool, .. } => pool.acquire().await.map(Conn::Postgres),
        };
        conn.map_err(|e| {
            self.health.saw_sqlx(&e);
            e.into()
        })
    }

    /// Open and idle connections of each pool (for the metrics endpoint).
    pub fn pool_use(&self) -> Vec<PoolUse> {
        let of = |pool: &'static str, size: u32, idle: usize| PoolUse {
            pool,
            size,
            idle: u32::try_from(idle).unwrap_or(u32::MAX),
        };
        let writers = |pool: &'static str, w: &Writers| {
            of(pool, u32::try_from(w.len()).unwrap_or(u32::MAX), w.idle())
        };
        match &*self.backend {
            Backend::Sqlite {
                read, writers: w, ..
            } => {
                vec![
                    of("read", read.size(), read.num_idle()),
                    writers("write", w),
                ]
            }
            Backend::Postgres {
                pool,
                writers: w,
                append,
                ..
            } => vec![
                of("main", pool.size(), pool.num_idle()),
                writers("write", w),
                writers("append", append),
            ],
        }
    }

    fn writers(&self) -> &Writers {
        match &*self.backend {
            Backend::Sqlite { writers, .. } | Backend::Postgres { writers, .. } => writers,
        }
    }

    /// What this process's writers (log ingest's too) have committed so far.
    pub fn write_batches(&self) -> WriteBatches {
        let (mut batches, mut requests) = self.writers().committed();
        if let Backend::Postgres { append, .. } = &*self.backend {
            let (b, r) = append.committed();
            batches += b;
            requests += r;
        }
        let (combined_statements, combined_requests) = self.combiners.done();
        WriteBatches {
            batches,
            requests,
            combined_statements,
            combined_requests,
            gave_way: self
                .combiners
                .gave_way
                .load(std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// Subscribes to events as their transactions commit.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.bus.subscribe()
    }

    /// Wake-ups for streams: a [`Topic`] each time a transaction that wrote
    /// log rows or events commits, here or (PostgreSQL) on another replica.
    pub fn wakeups(&self) -> broadcast::Receiver<Topic> {
        self.wake.subscribe()
    }

    /// Commits the writers' open batches and closes every pool (waits for
    /// checked-out connections to return).
    pub async fn close(&self) {
        match &*self.backend {
            Backend::Sqlite {
                read,
                writers,
                checkpointer,
                ..
            } => {
                writers.flush().await;
                checkpointer.abort();
                read.close().await;
            }
            Backend::Postgres {
                pool,
                writers,
                append,
                listener,
                notifier_task,
            } => {
                writers.flush().await;
                append.flush().await;
                listener.abort();
                notifier_task.abort();
                pool.close().await
            }
        }
    }
}

/// What a committed batch tells: the event bus, the wake-up bus,
/// (PostgreSQL) the NOTIFY sender, and the store's [`Health`].
type Buses = (
    broadcast::Sender<Arc<Event>>,
    broadcast::Sender<Topic>,
    Option<Arc<PgNotifier>>,
    Arc<Health>,
);

/// A write transaction: a savepoint in a writer's batch (`group_commit`).
/// Dropping it without [`Tx::commit`] rolls the savepoint back, and the
/// events it recorded are never published.
pub struct Tx {
    turn: Turn,
    pending: Vec<Event>,
    deferred: Vec<Deferred>,
    logs_written: bool,
    /// Requests this transaction carries (more than one for a combined
    /// statement, [`combine`]): what its batch counts at the commit.
    members: usize,
    clock: Arc<dyn Clock>,
}

impl Tx {
    /// Whether this transaction runs on a writer that gives way
    /// ([`PG_GIVE_WAY_AFTER`]): where [`Error::is_race`](crate::error::Error)
    /// means run it again on the first writer ([`Store::begin`]).
    pub(crate) fn gives_way(&self) -> bool {
        self.turn.gives_way()
    }

    /// Now, by the control plane's clock, in the wire's milliseconds: what
    /// the rows this transaction writes are stamped with.
    pub(crate) fn now(&self) -> Timestamp {
        Timestamp::from(self.clock.now())
    }

    /// Opens the savepoint of a transaction begun unguarded
    /// ([`Store::begin_unguarded`]); a no-op otherwise. Only while nothing
    /// it ran so far changed a row.
    pub(crate) async fn guard(&mut self) -> Result<()> {
        self.turn.guard().await
    }

    /// Notes that this transaction wrote log rows, so log streams (on every
    /// replica) wake up when it commits.
    pub(crate) fn mark_logs_written(&mut self) {
        self.logs_written = true;
    }

    /// Queues an event (already inserted in this transaction) for publication
    /// after commit.
    pub(crate) fn publish_after_commit(&mut self, event: Event) {
        self.pending.push(event);
    }

    /// Leaves an append-only row (an event, a platform log row) for the
    /// batch to write at its commit, with the rows of the same `kind` that
    /// the batch's other requests left, in one multi-row statement: two
    /// round trips to the database fewer per task transition. The row is
    /// invisible to this transaction's own reads, so only rows nothing reads
    /// back before the commit are deferred, into tables without foreign
    /// keys (a failed flush fails the whole batch).
    pub(crate) fn defer<T: std::any::Any + Send>(&mut self, kind: &'static DeferKind, row: T) {
        self.deferred.push(Deferred {
            kind,
            row: Box::new(row),
        });
    }

    /// Commits: returns once the batch holding this transaction has
    /// committed, after its events were published. On PostgreSQL a batch
    /// that wrote events or log rows then has a NOTIFY sent (by
    /// `PgNotifier`, after the commit, never inside the transaction), which
    /// wakes every replica's listener.
    pub async fn commit(self) -> Result<()> {
        self.turn
            .commit(self.pending, self.deferred, self.logs_written, self.members)
            .await
    }
}

impl Access for Tx {
    fn db(&mut self) -> Db<'_> {
        self.turn.db()
    }
}

/// Connections of one pool: open, and of those idle (for the metrics
/// endpoint, through [`crate::gauges`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolUse {
    /// `read` (SQLite) or `main` (PostgreSQL) for the pool, `write` for the
    /// group-commit writers.
    pub pool: &'static str,
    /// Connections open now (checked out or idle).
    pub size: u32,
    /// Of those, connections waiting unused.
    pub idle: u32,
}

/// Write batches committed by this process's group-commit writers since it
/// started: `requests / batches` is the mean batch size, the figure that
/// says how much group commit saves under the current load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteBatches {
    /// Database commits made by the writers.
    pub batches: u64,
    /// Write requests those commits carried.
    pub requests: u64,
    /// Combined statements run (`combine`): one statement for the starts,
    /// or the completions, that were waiting for the writer (PostgreSQL),
    /// or for the completions of one `complete-batch` request (either
    /// database).
    pub combined_statements: u64,
    /// Requests those statements served (divided by `combined_statements`:
    /// the mean number of requests per statement).
    pub combined_requests: u64,
    /// Writes that waited for a row lock past [`PG_GIVE_WAY_AFTER`] on a
    /// PostgreSQL writer other than the first, were rolled back and ran
    /// again on the first ([`DEFAULT_PG_WRITERS`]): a combined group, or a
    /// `claim-batch` batch.
    pub gave_way: u64,
}

/// Whether a database error is a unique-constraint violation (a duplicate).
pub(crate) fn is_unique_violation(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.is_unique_violation())
}
