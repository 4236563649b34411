//! The state behind a writer's lock, and the ways a batch ends early
//! (rollbacks, failures told to its members).

use super::WriterConn;
use super::batch::{Batch, Failed};
use crate::error::{DbFault, db_fault};

/// The state behind a writer's lock.
pub(crate) struct Slot {
    /// `None` once the connection broke; reopened by the next turn.
    pub(super) conn: Option<WriterConn>,
    pub(super) batch: Option<Batch>,
    /// A request's savepoint is (or may be) open.
    pub(super) in_request: bool,
    /// The previous turn opened the next request's savepoint already.
    pub(super) savepoint_ready: bool,
    /// The request runs without a savepoint (`group_commit` module docs):
    /// how many statements it has run so far. `None` for a guarded request.
    pub(super) unguarded: Option<u32>,
}

/// The connection of a slot that has one (checked at the start of a turn).
pub(super) fn conn(slot: &mut Slot) -> &mut WriterConn {
    slot.conn
        .as_mut()
        .expect("a turn starts by reopening a broken writer connection")
}

/// Forgets the connection when the error says it is gone, so the next turn
/// opens a new one.
pub(super) fn drop_broken(slot: &mut Slot, error: &sqlx::Error) {
    let lost = matches!(
        error,
        sqlx::Error::Io(_)
            | sqlx::Error::Protocol(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::WorkerCrashed
    );
    // The server ended the session (57P01 and the like): the socket is
    // closing, the next statement on it would only fail again.
    if lost || db_fault(error) == Some(DbFault::Unreachable) {
        slot.conn = None;
    }
}

/// Rolls the whole outer transaction back (its members are told by the
/// caller); a connection that cannot even roll back is dropped.
pub(super) async fn rollback_all(slot: &mut Slot, cause: &sqlx::Error) {
    drop_broken(slot, cause);
    roll_back(slot).await;
}

/// Rolls the outer transaction back on a connection that is still sound.
pub(super) async fn roll_back(slot: &mut Slot) {
    if let Some(conn) = slot.conn.as_mut()
        && let Err(e) = conn.run("ROLLBACK").await
    {
        tracing::warn!(error = %e, "writer connection dropped after a failed rollback");
        slot.conn = None;
    }
}

/// Fails the open batch: rolls it back and tells its members why.
pub(super) async fn abort_batch(slot: &mut Slot, cause: &sqlx::Error) {
    tracing::error!(error = %cause, "write batch aborted");
    rollback_all(slot, cause).await;
    tell_failed(slot, &cause.to_string());
}

/// Ends the open batch as failed (after its rollback) and tells its members.
pub(super) fn tell_failed(slot: &mut Slot, message: &str) {
    if let Some(batch) = slot.batch.take() {
        batch.done.send_replace(Some(Err(Failed::unsent(message))));
    }
}
