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

mod checkpoint;
mod combine;
mod data_lock;
mod deferred;
mod file_mode;
mod group_commit;
mod health;
mod notify;
pub mod offline;
mod stored_json;
mod writer_thread;
pub use checkpoint::{DEFAULT_WAL_RESTART_BYTES, MIN_WAL_RESTART_BYTES};
pub(crate) use combine::{Combine, Combined, Post};
pub use data_lock::{DataLock, LockFailure};
pub(crate) use deferred::{DeferKind, Deferred, WithParts, arg_count, push_arg};
pub use group_commit::GroupCommit;
use group_commit::{Opener, Turn, Writer, WriterConn, Writers};
use health::Health;
pub(crate) use notify::PgNotifier;
use notify::{spawn_listener, spawn_notifier};
pub use stored_json::{StoredJson, UNREADABLE_KEY};
use writer_thread::WriterThread;

use crate::api::Event;
use crate::error::{Error, Result};
use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{ConnectOptions, PgConnection, PgPool, SqliteConnection, SqlitePool};
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
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

pub(crate) static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("./migrations/sqlite");
pub(crate) static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("./migrations/postgres");

/// How many committed events the in-process bus buffers for slow subscribers.
const EVENT_BUS_CAPACITY: usize = 4096;

/// How many wake-ups the in-process wake bus buffers (a lagging receiver
/// just re-reads; the bus only says "something new").
const WAKE_BUS_CAPACITY: usize = 1024;

/// What changed, for the wake-up bus that streams wait on. Streams read the
/// rows themselves from the table after a wake-up (by cursor), so a wake-up
/// carries no data and a missed or duplicated one is harmless.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    Logs,
    Events,
}

/// Which SQL dialect a store speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Postgres => "postgres",
        }
    }
}

/// Where the data lives and how many connections to keep.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// `sqlite://PATH` or `postgres://...`.
    pub url: String,
    /// Upper bound of the (read) pool.
    pub max_connections: u32,
    /// Writer connections with group commit: 0 picks the default (SQLite:
    /// always 1, its one writer; PostgreSQL: [`DEFAULT_PG_WRITERS`]).
    pub writers: u32,
    /// How write batches are formed.
    pub group_commit: GroupCommit,
    /// SQL each PostgreSQL writer connection runs when it opens (and opens
    /// again after a failure): session-local objects its statements call,
    /// such as the temporary function of combined claims
    /// ([`crate::lifecycle`]). Kept out of migrations so the SQL has one
    /// source, the Rust that also builds the single-request statement, and
    /// so replicas of different versions each run their own. Empty: none.
    pub writer_session: &'static str,
    /// SQLite: the WAL size (bytes) past which the checkpointer restarts
    /// the WAL, and the `journal_size_limit` ([`checkpoint`]); 0 picks
    /// [`DEFAULT_WAL_RESTART_BYTES`]. Configurable so an operator can trade
    /// disk for fewer RESTART checkpoints, and so a test can see the bound
    /// hold in seconds instead of minutes.
    pub wal_restart_bytes: u64,
}

/// PostgreSQL writer connections when none are configured: one, so the
/// writes of a replica never wait on each other's row or index locks across
/// batches. With several writers a batch can wait for a lock another open
/// batch holds while that batch waits for it (say two claims for the same
/// agent in two batches, each behind other work); PostgreSQL then aborts one
/// statement as a deadlock and its request answers 409 "retry". Seen with 4
/// writers in the 32-agents × 4-concurrent-claims test; `--db-writers N`
/// trades that for throughput where requests rarely touch the same rows.
pub const DEFAULT_PG_WRITERS: u32 = 1;

/// PostgreSQL writers for log ingest (`Store::begin_append`), beside the
/// others. An ingest batch only inserts `logs` rows, which have no foreign
/// keys and no unique key but their generated id, so its transaction takes
/// no lock another one waits for: several can run at once without the
/// deadlocks of [`DEFAULT_PG_WRITERS`], and the database then spreads the
/// rows' index and heap work over two backends instead of one, while the
/// task writes keep their own writer. Two measured 1.31x one
/// (BENCHMARKS.md, item 11); three and four measured the same as two on the
/// 2-core host.
pub const PG_APPEND_WRITERS: u32 = 2;

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
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("dialect", &self.dialect())
            .finish()
    }
}

impl Store {
    /// Opens (creating it if needed) the database and applies the embedded
    /// migrations of its dialect.
    pub async fn connect(options: &StoreOptions) -> Result<Self> {
        let url = options.url.as_str();
        let (wake, _) = broadcast::channel(WAKE_BUS_CAPACITY);
        let (bus, _) = broadcast::channel(EVENT_BUS_CAPACITY);
        let unavailable = |e: sqlx::Error| Error::Unavailable(Box::new(e));
        let health = Health::new();
        let mut notifier_handle = None;
        let backend = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let connect = PgConnectOptions::from_str(url)
                .map_err(|e| Error::validation(format!("invalid PostgreSQL URL: {e}")))?
                .application_name("orch")
                .options([
                    // A transaction left open anywhere stalls vacuum for the
                    // whole cluster; never let one linger.
                    ("idle_in_transaction_session_timeout", "60000"),
                    ("statement_timeout", "60000"),
                    // Plan each execution with its values: a generic plan
                    // cached while a table was empty would keep scanning it
                    // after it grew (issue 33, defect 9).
                    ("plan_cache_mode", "force_custom_plan"),
                ]);
            let pool = PgPoolOptions::new()
                // One more for the LISTEN connection, which stays checked out.
                .max_connections(options.max_connections.max(2) + 1)
                // Short: while the server is unreachable a request should
                // hear so soon (the breaker in [`health`] then answers at once).
                .acquire_timeout(health::PROBE_TIMEOUT)
                .connect_with(connect.clone())
                .await
                .map_err(unavailable)?;
            POSTGRES_MIGRATIONS
                .run(&pool)
                .await
                .map_err(Error::internal)?;
            // Fresh statistics for the hot tables, whatever autovacuum does.
            sqlx::raw_sql("ANALYZE tasks, events, logs")
                .execute(&pool)
                .await
                .map_err(unavailable)?;
            let listener = spawn_listener(pool.clone(), wake.clone());
            let notifier = Arc::new(PgNotifier::default());
            notifier_handle = Some(notifier.clone());
            let notifier_task = spawn_notifier(pool.clone(), notifier.clone());
            health.probe_with(connect.clone());
            let buses = Arc::new((
                bus.clone(),
                wake.clone(),
                Some(notifier.clone()),
                health.clone(),
            ));
            let count = match options.writers {
                0 => DEFAULT_PG_WRITERS,
                n => n,
            };
            let mut list = Vec::new();
            for _ in 0..count + PG_APPEND_WRITERS {
                let opener = Opener::Postgres(connect.clone(), options.writer_session);
                let conn = opener.open().await.map_err(unavailable)?;
                list.push(Writer::new(
                    conn,
                    opener,
                    options.group_commit,
                    buses.clone(),
                    // Unguarded turns need the writer to be the only one
                    // (group_commit module docs); ingest never asks.
                    count == 1,
                ));
            }
            let append = list.split_off(count as usize);
            Backend::Postgres {
                pool,
                writers: Writers::new(list),
                append: Writers::new(append),
                listener,
                notifier_task,
            }
        } else if let Some(path) = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
        {
            let path = path.split('?').next().unwrap_or(path);
            file_mode::prepare(Path::new(path))?;
            let lock = data_lock::for_store(Path::new(path))?;
            let wal_restart_bytes = match options.wal_restart_bytes {
                0 => DEFAULT_WAL_RESTART_BYTES,
                n => n.max(MIN_WAL_RESTART_BYTES),
            };
            let connect = SqliteConnectOptions::new()
                .filename(path)
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .busy_timeout(Duration::from_secs(10))
                .foreign_keys(true)
                // Reads straight from the mapped file instead of copying each
                // page into SQLite's cache (pages count in RSS only as they
                // are touched), and a 16 MiB page cache per connection (the
                // default is 2 MiB) so a write batch's index pages stay hot.
                .pragma("mmap_size", "268435456")
                .pragma("cache_size", "-16384")
                .pragma("journal_size_limit", wal_restart_bytes.to_string());
            // The one writer connection, outside any pool: group commit
            // holds it for the store's lifetime. It never checkpoints: the
            // checkpointer does, off the write path ([`checkpoint`]).
            let writer_options = connect.clone().pragma("wal_autocheckpoint", "0");
            // Opened from the writer thread, where sqlx starts the
            // connection's own worker thread ([`writer_thread`]).
            let writer_thread = WriterThread::start()?;
            let opening = writer_options.clone();
            let mut writer: SqliteConnection = writer_thread
                .setup(async move { opening.connect().await })
                .await?
                .map_err(unavailable)?;
            SQLITE_MIGRATIONS
                .run(&mut writer)
                .await
                .map_err(Error::internal)?;
            // No liveness ping before each acquire: a local file connection
            // does not go stale, and on SQLite the ping is one more round
            // trip to the connection's worker thread per read.
            let read = SqlitePoolOptions::new()
                .max_connections(options.max_connections.max(1))
                .test_before_acquire(false)
                .acquire_timeout(Duration::from_secs(30))
                .connect_with(connect.clone().read_only(true))
                .await
                .map_err(unavailable)?;
            let buses = Arc::new((bus.clone(), wake.clone(), None, health.clone()));
            let writer = Writer::new(
                WriterConn::Sqlite(writer),
                Opener::Sqlite(writer_options),
                options.group_commit,
                buses,
                true,
            );
            let checkpointer = checkpoint::spawn_checkpointer(connect, &writer, wal_restart_bytes);
            Backend::Sqlite {
                read,
                writers: Writers::new(vec![writer]),
                checkpointer,
                writer_thread,
                _lock: lock,
            }
        } else {
            return Err(Error::validation(
                "database URL must start with sqlite:// or postgres://".to_string(),
            ));
        };
        Ok(Self {
            backend: Arc::new(backend),
            bus,
            wake,
            combiners: Arc::default(),
            writer_session: options.writer_session,
            health,
            notifier: notifier_handle,
        })
    }

    /// The set-up SQL of the PostgreSQL writer connections
    /// ([`StoreOptions::writer_session`]); empty on SQLite.
    pub(crate) fn writer_session(&self) -> &'static str {
        match self.dialect() {
            Dialect::Sqlite => "",
            Dialect::Postgres => self.writer_session,
        }
    }

    pub fn dialect(&self) -> Dialect {
        match *self.backend {
            Backend::Sqlite { .. } => Dialect::Sqlite,
            Backend::Postgres { .. } => Dialect::Postgres,
        }
    }

    /// Starts a write transaction: a savepoint in the open batch of one of
    /// the writers (`group_commit`). Waits while every writer is busy.
    pub async fn begin(&self) -> Result<Tx> {
        self.begin_turn(true).await
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

    async fn begin_turn(&self, guarded: bool) -> Result<Tx> {
        self.turn(self.writers(), guarded).await
    }

    async fn turn(&self, writers: &Writers, guarded: bool) -> Result<Tx> {
        self.health.check()?;
        Ok(Tx {
            turn: writers.begin(guarded).await?,
            pending: Vec::new(),
            deferred: Vec::new(),
            logs_written: false,
            members: 1,
        })
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

/// A borrowed connection of either backend; what `on_db!` matches on.
pub enum Db<'c> {
    Sqlite(&'c mut SqliteConnection),
    Postgres(&'c mut PgConnection),
}

/// Anything a repository function can run queries on.
pub trait Access: Send {
    fn db(&mut self) -> Db<'_>;
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
}

impl Tx {
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
    pub size: u32,
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
    /// Combined statements run (PostgreSQL, `combine`): one statement for
    /// the starts, or the completions, that were waiting for the writer.
    pub combined_statements: u64,
    /// Requests those statements served (divided by `combined_statements`:
    /// the mean number of requests per statement).
    pub combined_requests: u64,
}

/// A pooled connection for reads.
pub enum Conn {
    Sqlite(sqlx::pool::PoolConnection<sqlx::Sqlite>),
    Postgres(sqlx::pool::PoolConnection<sqlx::Postgres>),
}

impl Access for Conn {
    fn db(&mut self) -> Db<'_> {
        match self {
            Conn::Sqlite(c) => Db::Sqlite(c),
            Conn::Postgres(c) => Db::Postgres(c),
        }
    }
}

/// Whether a database error is a unique-constraint violation (a duplicate).
pub(crate) fn is_unique_violation(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.is_unique_violation())
}

/// The longest search string a list filter takes, in characters. Longer ones
/// are refused (400) rather than handed to `LIKE` (SQLite refuses patterns
/// past 50,000 bytes, and no one searches by a page of text).
pub const MAX_SEARCH_CHARS: usize = 512;

/// The `LIKE` pattern of a "contains" search for `text` (trimmed; `None`
/// when empty), with `\`, `%` and `_` escaped so the search is a literal
/// substring: use it as `column LIKE $n ESCAPE '\'` (lowercase the pattern
/// for `LOWER(column)`). Text longer than [`MAX_SEARCH_CHARS`] is a 400
/// naming `field`.
pub(crate) fn contains_pattern(field: &str, text: Option<&str>) -> Result<Option<String>> {
    let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    if text.chars().count() > MAX_SEARCH_CHARS {
        return Err(Error::invalid_field(
            field,
            format!("must be at most {MAX_SEARCH_CHARS} characters"),
        ));
    }
    let escaped = text
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    Ok(Some(format!("%{escaped}%")))
}
