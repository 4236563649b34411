//! One request's hold on a writer.

use super::batch::{Failed, Outcome};
use super::slot::{Slot, abort_batch, conn};
use super::writer::Writer;
use super::{RELEASE, RELEASE_AND_NEXT, SAVEPOINT};
use crate::api::Event;
use crate::error::{Error, Result};
use crate::store::{Db, Deferred};
use std::sync::Arc;
use tokio::sync::{OwnedMutexGuard, watch};

/// One request's hold on a writer: its savepoint is open until
/// [`Turn::commit`]; dropped without it, the savepoint is rolled back.
pub(crate) struct Turn {
    guard: Option<OwnedMutexGuard<Slot>>,
    writer: Arc<Writer>,
}

impl Turn {
    pub(super) fn new(guard: OwnedMutexGuard<Slot>, writer: Arc<Writer>) -> Self {
        Self {
            guard: Some(guard),
            writer,
        }
    }

    /// Whether this turn's writer gives way: a PostgreSQL task writer other
    /// than the first, whose statements wait for a row lock at most
    /// [`crate::store::PG_GIVE_WAY_AFTER`]. Those are the writers that do
    /// not honour unguarded turns (connect.rs sets both).
    pub(crate) fn gives_way(&self) -> bool {
        !self.writer.unguarded_turns
    }

    pub(crate) fn slot(&mut self) -> &mut Slot {
        self.guard
            .as_mut()
            .expect("a turn holds its writer until it ends")
    }

    /// The request's connection, inside its savepoint (or, unguarded,
    /// straight in the batch: each call counts as a statement run).
    pub(crate) fn db(&mut self) -> Db<'_> {
        let slot = self.slot();
        if let Some(statements) = slot.unguarded.as_mut() {
            *statements += 1;
        }
        conn(slot).db()
    }

    /// Opens the request's savepoint now, if it runs without one. Only for a
    /// request whose statements so far changed nothing: they stay outside
    /// the savepoint.
    pub(crate) async fn guard(&mut self) -> Result<()> {
        let slot = self.slot();
        if slot.unguarded.is_none() {
            return Ok(());
        }
        // Cleared first: if this future is dropped mid-way, the savepoint may
        // exist, and the rollback that follows copes with either.
        slot.unguarded = None;
        if let Err(e) = conn(slot).run(SAVEPOINT).await {
            slot.in_request = false;
            abort_batch(slot, &e).await;
            return Err(e.into());
        }
        Ok(())
    }

    /// Releases the savepoint, joins the batch with the request's events and
    /// waits until the batch has committed. `members`: how many requests
    /// the turn carried (more than one for a combined statement, 0 for one
    /// that served nobody in the end).
    pub(crate) async fn commit(
        mut self,
        events: Vec<Event>,
        deferred: Vec<Deferred>,
        logs_written: bool,
        members: usize,
    ) -> Result<()> {
        let mut guard = self.guard.take().expect("a turn is committed once");
        let writer = self.writer.clone();
        if guard.unguarded.take().is_some() {
            // Nothing to release: the request joins here, with no await (so
            // no point where a dropped request could leave it half done).
            // Only a batch that must commit now needs the spawned task; a
            // turn passed on costs no task switch (the writer is the serial
            // resource, BENCHMARKS.md item 8).
            guard.in_request = false;
            guard.savepoint_ready = false;
            let (id, done) = join(&mut guard, events, deferred, logs_written, members);
            if writer.passes_on(&guard) {
                drop(guard);
            } else {
                let committer = writer.clone();
                // The commit runs to completion even if this request is
                // dropped while it does.
                tokio::spawn(async move { committer.commit_batch(&mut guard).await })
                    .await
                    .map_err(Error::internal)?;
            }
            return writer.outcome(id, done).await;
        }
        // The release and the end of the turn run to completion even if the
        // request is dropped while they do.
        let joined = tokio::spawn(async move {
            // Passing the turn on opens the next request's savepoint in
            // the same round trip as this one's release (counted as this
            // request joined: members + 1).
            let passes_on = writer.passes_on(&guard)
                && guard
                    .batch
                    .as_ref()
                    .is_some_and(|b| b.members + 1 < writer.policy.max_batch);
            let released = conn(&mut guard)
                .run(if passes_on { RELEASE_AND_NEXT } else { RELEASE })
                .await;
            if let Err(e) = released {
                if passes_on {
                    // Which of the two failed is unknown: fail the batch
                    // (nobody in it was answered yet).
                    guard.in_request = false;
                    abort_batch(&mut guard, &e).await;
                } else {
                    // The request alone fails: back to its savepoint (which
                    // a failed RELEASE leaves in place).
                    writer.abandon(&mut guard).await;
                }
                return Err(Error::from(e));
            }
            guard.in_request = false;
            guard.savepoint_ready = passes_on;
            let joined = join(&mut guard, events, deferred, logs_written, members);
            writer.end_turn(&mut guard).await;
            Ok(joined)
        })
        .await
        .map_err(Error::internal)??;
        self.writer.outcome(joined.0, joined.1).await
    }
}

/// Counts a finished turn's requests into the open batch with what they
/// leave for the commit; returns the batch's id and its outcome to wait on.
fn join(
    slot: &mut Slot,
    events: Vec<Event>,
    deferred: Vec<Deferred>,
    logs_written: bool,
    members: usize,
) -> (u64, watch::Receiver<Outcome>) {
    let batch = slot
        .batch
        .as_mut()
        .expect("a request's statements run in an open batch");
    batch.members += members;
    batch.turns += 1;
    batch.events.extend(events);
    batch.deferred.extend(deferred);
    batch.logs_written |= logs_written;
    (batch.id, batch.done.subscribe())
}

impl Drop for Turn {
    fn drop(&mut self) {
        let Some(mut guard) = self.guard.take() else {
            return;
        };
        let writer = self.writer.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move { writer.abandon(&mut guard).await });
            }
            Err(_) => {
                // No runtime to roll back on: forget the connection (its
                // transaction dies with it); the next turn opens another.
                guard.conn = None;
                if let Some(batch) = guard.batch.take() {
                    batch
                        .done
                        .send_replace(Some(Err(Failed::unsent("the writer was dropped"))));
                }
                guard.in_request = false;
                guard.unguarded = None;
            }
        }
    }
}
