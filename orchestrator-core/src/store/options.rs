//! What a store is opened with: its URL, pool and writer counts, and the
//! SQL dialect it speaks.

use super::GroupCommit;
use crate::clock::Clock;
use std::sync::Arc;

/// Which SQL dialect a store speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// The embedded SQLite file (one replica).
    Sqlite,
    /// A PostgreSQL server (one or more replicas).
    Postgres,
}

impl Dialect {
    /// The dialect's lowercase name (`sqlite`, `postgres`), as the start-up
    /// log line and the readiness answer (`database`) name it.
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
    /// the WAL; the `journal_size_limit` is eight times it (the
    /// checkpointer's module docs say why); 0 picks
    /// [`super::DEFAULT_WAL_RESTART_BYTES`]. Configurable so an
    /// operator can trade disk for fewer RESTART checkpoints, and so a test
    /// can see the bound hold in seconds instead of minutes.
    pub wal_restart_bytes: u64,
    /// Where write transactions read "now" (`Tx::now`): the
    /// control plane's clock, so rows are stamped with the time every other
    /// decision uses (a test's manual clock included).
    pub clock: Arc<dyn Clock>,
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
