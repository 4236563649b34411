//! Opening a store: connection options and pool set-up of each backend,
//! the embedded migrations, and the writers and background tasks a
//! [`Store`] owns.

use super::checkpoint::{DEFAULT_WAL_RESTART_BYTES, MIN_WAL_RESTART_BYTES};
use super::health::{self, Health};
use super::notify::{spawn_listener, spawn_notifier};
use super::writer_thread::WriterThread;
use super::{
    Backend, DEFAULT_PG_WRITERS, Opener, PG_APPEND_WRITERS, PG_GIVE_WAY_AFTER, PgNotifier, Store,
    StoreOptions, Writer, WriterConn, Writers, checkpoint, data_lock, file_mode,
};
use crate::error::{Error, Result};
use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{ConnectOptions, SqliteConnection};
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;

pub(crate) static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("./migrations/sqlite");
pub(crate) static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("./migrations/postgres");

/// How many committed events the in-process bus buffers for slow subscribers.
const EVENT_BUS_CAPACITY: usize = 4096;

/// How many wake-ups the in-process wake bus buffers (a lagging receiver
/// just re-reads; the bus only says "something new").
const WAKE_BUS_CAPACITY: usize = 1024;

/// The SQLite writer connection's page cache, in KiB (`cache_size` takes a
/// negative number as KiB): 4 MiB, a quarter of the read connections'.
///
/// Why smaller: SQLite cuts a connection's page cache back to the
/// database's size at every commit, and when a page split in that
/// transaction parked a page at its temporary number past the end of the
/// file (the lock-byte page, 262,145 at 4 KiB pages), the cut walks every
/// page in the cache without dropping one. Nearly every batch splits some
/// index page, so the writer's commits walked its whole 16 MiB cache: about
/// 3% of the writer's two threads in the batched drain's profile. At 4 MiB
/// the batched drain ran 1.07x, and neither the lifecycle at a million
/// finished tasks nor the history purge lost rate (bench/HISTORY.md, item
/// 32): a batch's working set (the right edges of the indexes it appends
/// to, the recent tasks it moves) fits in it, and the rest of the file is
/// read through the memory map.
const SQLITE_WRITER_CACHE_KIB: i64 = 4 * 1024;

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
            for index in 0..count + PG_APPEND_WRITERS {
                // Every task writer but the first gives way: its statements
                // wait for a row lock at most `PG_GIVE_WAY_AFTER`
                // (`DEFAULT_PG_WRITERS` says why that rules out deadlocks
                // between the writers). Ingest's take no row locks.
                let gives_way = index > 0 && index < count;
                let connect = match gives_way {
                    true => connect
                        .clone()
                        .options([("lock_timeout", PG_GIVE_WAY_AFTER.as_millis().to_string())]),
                    false => connect.clone(),
                };
                let opener = Opener::Postgres(connect, options.writer_session);
                let conn = opener.open().await.map_err(unavailable)?;
                list.push(Writer::new(
                    conn,
                    opener,
                    options.group_commit,
                    buses.clone(),
                    // Unguarded turns need the writer never to give way: a
                    // statement that gave way would fail its whole batch
                    // (group_commit module docs); ingest never asks.
                    index == 0,
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
                // are touched), and a 16 MiB page cache per read connection
                // (the default is 2 MiB); the writer sets its own
                // ([`SQLITE_WRITER_CACHE_KIB`]).
                .pragma("mmap_size", "268435456")
                .pragma("cache_size", "-16384")
                .pragma(
                    "journal_size_limit",
                    checkpoint::journal_size_limit(wal_restart_bytes).to_string(),
                );
            // The one writer connection, outside any pool: group commit
            // holds it for the store's lifetime. It never checkpoints: the
            // checkpointer does, off the write path ([`checkpoint`]).
            let writer_options = connect
                .clone()
                .pragma("wal_autocheckpoint", "0")
                .pragma("cache_size", (-SQLITE_WRITER_CACHE_KIB).to_string());
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
            // From here on the writer keeps its temporary storage in memory.
            // A statement over many rows inside a batch (a bulk claim, a
            // batch's completions) journals the pages it changes, so that it
            // alone can be undone, and past 64 KiB SQLite spilled that
            // journal to a new file in /var/tmp (created, unlinked, written,
            // closed) several times a second on the writer's thread
            // (bench/HISTORY.md, item 30). The journal now takes memory, as
            // much as its statement changes, so the writer's statements stay
            // bounded (write paths over many rows go in chunks); migrations,
            // which may rewrite a whole table in one statement, run before,
            // with the journal on disk.
            sqlx::query("PRAGMA temp_store = memory")
                .execute(&mut writer)
                .await
                .map_err(unavailable)?;
            let writer_options = writer_options.pragma("temp_store", "memory");
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
            clock: options.clock.clone(),
        })
    }
}
