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

/// PostgreSQL writer connections when none are configured: two, so the
/// combined claims' batch and the combined starts', completions' and
/// creates' batch run side by side on two backends (one writer's backend
/// waits out every round trip alone and left a third of a 2-core machine
/// idle; bench/HISTORY.md items 45, 48 and 51).
///
/// Two open batches could wait on each other's rows (say a completion that
/// locks its workflow's row on one writer while a claim in the other's
/// batch updates it, each behind other work) and deadlock. They cannot
/// here, by construction: only the first writer waits for locks without a
/// bound. Every other writer's connection runs with a `lock_timeout` of
/// [`PG_GIVE_WAY_AFTER`] and carries only work that can give way when it
/// fires: the combined groups of its kinds, whose requests then take their
/// ordinary path on the first writer (`combine`), and `claim-batch`
/// batches, which run again there (`crate::lifecycle`). Every other write
/// takes the first writer. So a wait between the two writers ends within
/// that timeout, without an error any client sees, and the first writer's
/// batches keep the one-writer layout's unguarded turns.
/// `--db-writers 1` gives the single writer of earlier releases.
pub const DEFAULT_PG_WRITERS: u32 = 2;

/// How long a PostgreSQL writer other than the first waits for a row lock
/// before its statement gives way ([`DEFAULT_PG_WRITERS`]). The first
/// writer's batches hold their locks for at most their age bound
/// ([`super::GroupCommit::POSTGRES_MAX_DELAY`], 10 ms) plus their last
/// statements and commit, so a wait past this is a wait that would not end
/// soon (a cycle, or a batch stuck behind another client's lock), not the
/// ordinary wait for a batch to commit; PostgreSQL's own deadlock detector
/// would take a second (`deadlock_timeout`).
pub const PG_GIVE_WAY_AFTER: std::time::Duration = std::time::Duration::from_millis(50);

/// PostgreSQL writers for log ingest (`Store::begin_append`), beside the
/// others. An ingest batch only inserts `logs` rows, which have no foreign
/// keys and no unique key but their generated id, so its transaction takes
/// no lock another one waits for: several can run at once with no lock
/// waits between them at all, and the database then spreads the
/// rows' index and heap work over two backends instead of one, while the
/// task writes keep their own writer. Two measured 1.31x one
/// (BENCHMARKS.md, item 11); three and four measured the same as two on the
/// 2-core host.
pub const PG_APPEND_WRITERS: u32 = 2;
