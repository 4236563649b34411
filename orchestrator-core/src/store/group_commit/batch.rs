//! A writer's open batch: the outer transaction and what its members
//! brought to it, written or published when it commits.

use super::WriterConn;
use crate::api::Event;
use crate::store::{Db, DeferKind, Deferred, WithParts};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::watch;

/// What a finished batch tells its members: committed, or why not.
pub(super) type Outcome = Option<std::result::Result<(), Failed>>;

/// Why a batch did not commit, and whether its `COMMIT` had been sent (then
/// the outcome is unknown; otherwise nothing of it was written, and its
/// members may run again).
#[derive(Debug, Clone)]
pub(super) struct Failed {
    pub(super) message: Arc<str>,
    pub(super) commit_sent: bool,
}

impl Failed {
    /// A batch that ended before its `COMMIT` was sent.
    pub(super) fn unsent(message: impl Into<Arc<str>>) -> Self {
        Self {
            message: message.into(),
            commit_sent: false,
        }
    }
}

/// The open outer transaction of a writer and the requests that joined it.
pub(super) struct Batch {
    pub(super) id: u64,
    pub(super) started: Instant,
    pub(super) members: usize,
    /// Turns that joined (requests; a combined statement, which carries
    /// several members, is one).
    pub(super) turns: usize,
    pub(super) events: Vec<Event>,
    pub(super) deferred: Vec<Deferred>,
    pub(super) logs_written: bool,
    pub(super) done: watch::Sender<Outcome>,
}

/// One deferred row, opaque here (its flush knows its type).
type DeferredRow = Box<dyn std::any::Any + Send>;

/// Writes a batch's deferred rows, one flush per kind (kinds in the order
/// they first appear), and returns the events they inserted. On PostgreSQL,
/// when one kind [hosts](DeferKind::hosts) and every other kind has a
/// `WITH` part, all of them are one statement. A failure is reported as a
/// database error so the batch fails as a failed commit would.
pub(super) async fn flush_deferred(
    conn: &mut WriterConn,
    deferred: Vec<Deferred>,
) -> std::result::Result<Vec<Event>, sqlx::Error> {
    let mut kinds: Vec<(&'static DeferKind, Vec<DeferredRow>)> = Vec::new();
    for item in deferred {
        match kinds
            .iter_mut()
            .find(|(kind, _)| std::ptr::eq(*kind, item.kind))
        {
            Some((_, rows)) => rows.push(item.row),
            None => kinds.push((item.kind, vec![item.row])),
        }
    }
    let failed = |kind: &str, e: crate::error::Error| {
        sqlx::Error::Protocol(format!(
            "writing the batch's deferred {kind} rows failed: {e:?}"
        ))
    };
    let postgres = matches!(conn.db(), Db::Postgres(_));
    let host = kinds.iter().position(|(kind, _)| kind.hosts);
    if let Some(host) = host.filter(|_| postgres && kinds.len() > 1)
        && kinds
            .iter()
            .enumerate()
            .all(|(i, (kind, _))| i == host || kind.with_part.is_some())
    {
        let (host_kind, host_rows) = kinds.remove(host);
        let mut parts = WithParts {
            statements: Vec::new(),
            args: Default::default(),
        };
        for (kind, rows) in kinds {
            if let Some(with_part) = kind.with_part {
                let statements =
                    with_part(rows, &mut parts.args).map_err(|e| failed(kind.name, e))?;
                parts.statements.extend(statements);
            }
        }
        return (host_kind.flush)(conn, host_rows, Some(parts))
            .await
            .map_err(|e| failed(host_kind.name, e));
    }
    let mut events = Vec::new();
    for (kind, rows) in kinds {
        events.extend(
            (kind.flush)(conn, rows, None)
                .await
                .map_err(|e| failed(kind.name, e))?,
        );
    }
    Ok(events)
}
