//! A writer's open batch: the outer transaction and what its members
//! brought to it, written or published when it commits.

use super::WriterConn;
use crate::api::Event;
use crate::store::{Deferred, FlushFn};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::watch;

/// What a finished batch tells its members: committed, or why not.
pub(super) type Outcome = Option<std::result::Result<(), Arc<str>>>;

/// The open outer transaction of a writer and the requests that joined it.
pub(super) struct Batch {
    pub(super) id: u64,
    pub(super) started: Instant,
    pub(super) members: usize,
    pub(super) events: Vec<Event>,
    pub(super) deferred: Vec<Deferred>,
    pub(super) logs_written: bool,
    pub(super) done: watch::Sender<Outcome>,
}

/// One deferred row, opaque here (its flush knows its type).
type DeferredRow = Box<dyn std::any::Any + Send>;

/// Writes a batch's deferred rows, one flush per kind (kinds in the order
/// they first appear), and returns the events they inserted. A failure is
/// reported as a database error so the batch fails as a failed commit would.
pub(super) async fn flush_deferred(
    conn: &mut WriterConn,
    deferred: Vec<Deferred>,
) -> std::result::Result<Vec<Event>, sqlx::Error> {
    let mut kinds: Vec<(&'static str, FlushFn, Vec<DeferredRow>)> = Vec::new();
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
