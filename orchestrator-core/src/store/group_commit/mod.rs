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
//! connection; PostgreSQL: two by default), each a dedicated connection behind
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
//! delay); under load the batch grows to whatever arrived while it ran (on
//! SQLite, to half of a deep queue: `Policy::splits`).
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
//! run straight in the batch and its commit costs no round trip (nor, when
//! the batch stays open for the next request, a spawned task: its join has
//! no await, so nothing can be left half done). The price
//! is paid only on failure: an unguarded request that ran any statement and
//! then fails (or is dropped) rolls back the whole batch, whose members are
//! told the commit failed (none of them was acknowledged), so nothing is
//! ever half written. [`Turn::guard`] opens the savepoint late, for a
//! request whose first statement turned out to change nothing (a fast path
//! that did not apply) and that goes on to do more, which may fail in the
//! ordinary way (404, 409). PostgreSQL honours unguarded turns only on its
//! first writer: the others give way when they wait for a row lock too long
//! ([`super::DEFAULT_PG_WRITERS`]), and a statement that gave way would then
//! fail a whole batch.

mod batch;
mod conn;
mod slot;
mod turn;
mod writer;
mod writers;

pub(crate) use conn::{Opener, WriterConn};
pub(crate) use turn::Turn;
pub(crate) use writer::Writer;
pub(crate) use writers::Writers;

use std::time::Duration;

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
    /// Whether a batch of [`SPLIT_FROM`] turns or more stops growing once it
    /// holds as many turns as requests wait behind it ([`Policy::splits`]).
    split_queue: bool,
}

/// The least batch that [`Policy::splits`] ends early: smaller batches take
/// everyone waiting, as before, so light load never pays an extra commit.
const SPLIT_FROM: usize = 8;

impl Policy {
    /// Whether a batch that `turns` requests joined, with `waiting` more
    /// queued for the writer, commits now instead of taking them (SQLite
    /// only). Turns, not members: a batched request (`complete-batch`) is
    /// one client waiting however many items it carries.
    ///
    /// Why: with a fixed set of clients (agents in a loop: claim, start,
    /// complete) a batch that takes everyone waiting gathers nearly all of
    /// them, and they then travel together: while their answers go out over
    /// HTTP and their next requests come back, the writer has nothing to do,
    /// and while it runs the batch, the HTTP side waits. Committing once
    /// the batch holds half of the queue splits the clients into two groups
    /// that take turns: one group's batch runs while the other's answers and
    /// next requests cross the network. Measured with the SQLite lifecycle
    /// at 32 agents (`orch bench lifecycle --tasks 10000 --agents 32`, three
    /// rounds): batches capped at 12 to 20 requests drained 1.25x faster
    /// than uncapped ones (about 3,100 against 2,470 tasks/s), while a fixed
    /// cap of 16 at 64 and 128 agents drained 0.93x; half the queue adapts
    /// to the number of clients (bench/HISTORY.md, item 40). PostgreSQL's
    /// writer is bound by its backend, not by idle gaps (a cap of 16 there
    /// changed nothing), so there batches keep taking everyone waiting and
    /// pay fewer WAL flushes.
    fn splits(&self, turns: usize, waiting: usize) -> bool {
        self.split_queue && turns >= SPLIT_FROM && turns >= waiting
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(split_queue: bool) -> Policy {
        Policy {
            max_batch: 128,
            max_delay: GroupCommit::SQLITE_MAX_DELAY,
            split_queue,
        }
    }

    /// A deep queue is split in two; a short one is taken whole, and a
    /// writer that does not split (PostgreSQL) takes everyone.
    #[test]
    fn a_batch_stops_at_half_of_a_deep_queue() {
        let sqlite = policy(true);
        // 32 clients queued: the batch takes 16, the other 16 form the next.
        assert!(!sqlite.splits(15, 17));
        assert!(sqlite.splits(16, 16));
        // Below SPLIT_FROM turns a batch takes everyone waiting.
        assert!(!sqlite.splits(SPLIT_FROM - 1, 1));
        assert!(sqlite.splits(SPLIT_FROM, SPLIT_FROM));
        assert!(!sqlite.splits(SPLIT_FROM, SPLIT_FROM + 1));
        assert!(!policy(false).splits(64, 1));
    }
}
