//! Combined statements: the fast-path statement of every waiting request of
//! one kind, run as one statement.
//!
//! Why: with one writer, every statement is a round trip that the writer
//! waits out alone (BENCHMARKS.md item 13: on PostgreSQL ~265 µs a request,
//! saturated at ~3,800 requests/s while the machine stays a third idle).
//! Group commit already shares the commit; this shares the statement. A
//! task's start and its completion are one `UPDATE ... RETURNING` each, the
//! same text for every task, so the starts (or completions) waiting for the
//! writer can all be done by one `UPDATE ... FROM` a list of their
//! parameters: one round trip for all of them. The kinds:
//! [`crate::lifecycle`]'s starts and completions (`UPDATE ... FROM
//! unnest(...)`) and claims (a function that claims for each agent in turn),
//! and [`crate::tasks`]' plain creates (`INSERT ... SELECT FROM unnest(...)`).
//!
//! How: a request of a combinable kind ([`Combine`]) leaves its parameters,
//! its follow-up ([`Post`]) and a reply channel in its kind's queue. The
//! first to find the queue without a leader spawns one. The leader waits for
//! a writer turn ([`Store::begin_unguarded`]), then takes the whole queue
//! (everything that arrived while it waited), runs the kind's statement once
//! for all of it ([`Combine::run`]), then each served request's follow-up
//! (its event and platform log row, which are deferred to the batch's
//! commit, and whatever else its move writes) in the same turn, and commits
//! the turn as carrying every served request. Each is answered only after
//! its batch has committed: acknowledged still means committed. A request
//! whose row the statement did not change is answered [`Combined::Missed`]
//! at once and takes its ordinary path under a turn of its own; so is the
//! second of two requests for the same row in one queue (it then sees the
//! row as the first left it).
//!
//! The leader is a spawned task: a request whose client goes away cannot
//! leave the others in its queue unanswered, nor a statement half answered.
//!
//! Waiting requests are combined only on PostgreSQL ([`Store::combines`]).
//! Each kind's leader takes the writer its kind names
//! ([`Combine::WRITER`]): the claims the first, the others the second
//! (the first again where there is one writer). On the first writer the
//! statement runs without a savepoint, as an unguarded request's does: a
//! follow-up that fails fails the whole batch, and every request in it is
//! told to retry (nothing of it was acknowledged). On any other writer the
//! turn is guarded, one savepoint for the whole group, because that
//! writer gives way: a statement of the group that waits for a row lock
//! past [`super::PG_GIVE_WAY_AFTER`] fails, the group rolls back, and each
//! of its requests is answered `Missed` and takes its ordinary path on the
//! first writer ([`super::DEFAULT_PG_WRITERS`] says why this rules out
//! deadlocks between the writers). Follow-ups fail only on database
//! errors. The items of one batch request (`complete-batch`) are served
//! together on SQLite as well ([`Store::combined_together`]): one request's
//! items, one leader's turn.

use super::{Store, Tx};
use crate::error::{DbFault, Error, NotCommitted, Result};
use futures_util::future::BoxFuture;
use std::any::{Any, TypeId};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::sync::oneshot;
use uuid::Uuid;

/// A fast-path statement that many requests can share.
pub(crate) trait Combine: Send + Sync + 'static {
    /// One request's parameters.
    type Item: Send + Sync + 'static;
    /// The row the statement returns for an item it changed.
    type Row: Send + 'static;
    /// What a served request answers.
    type Out: Send + 'static;
    /// The row an item changes (no two items of one statement share one).
    fn key(item: &Self::Item) -> Uuid;
    /// The key of a returned row ([`Combine::key`] of its item).
    fn row_key(row: &Self::Row) -> Uuid;
    /// Runs the statement for all `items` (never empty) and returns the rows
    /// it changed, in any order.
    fn run<'a>(tx: &'a mut Tx, items: &'a [Self::Item]) -> BoxFuture<'a, Result<Vec<Self::Row>>>;
    /// Whether a statement that failed with `error` should leave each of
    /// its requests to its ordinary path rather than fail them (a race
    /// that the ordinary path knows how to retry). The statement's batch is
    /// rolled back either way.
    fn alone_after(error: &Error) -> bool {
        let _ = error;
        false
    }
    /// The writer this kind's leader takes where a store has several (its
    /// index, modulo their number). Claims take the first and every other
    /// kind the second, so on two writers the claims' batch runs on one
    /// backend while the starts', completions' and creates' runs on the
    /// other: the one writer's backend waits for every round trip and
    /// leaves the machine a third idle (bench/HISTORY.md items 45 and 48).
    const WRITER: usize = 1;
}

/// What a served request does in the leader's transaction once its row has
/// changed: records its event and log row (deferred) and anything else its
/// move writes, and gives the request's answer.
pub(crate) type Post<Row, Out> =
    Box<dyn for<'a> FnOnce(&'a mut Tx, Row) -> BoxFuture<'a, Result<Out>> + Send>;

/// One request's fast path, for [`Store::combined_together`]: its
/// statement's item and its follow-up.
pub(crate) type Request<C> = (
    <C as Combine>::Item,
    Post<<C as Combine>::Row, <C as Combine>::Out>,
);

/// How a request of a combinable kind came out.
pub(crate) enum Combined<T> {
    /// Served and committed.
    Done(T),
    /// The statement did not change the request's row: take the ordinary
    /// path, in this (guarded) transaction.
    Missed(Tx),
}

/// What the leader tells a waiting request.
enum Answer<T> {
    Done(T),
    Missed,
}

/// One waiting request.
struct Entry<C: Combine> {
    item: C::Item,
    post: Post<C::Row, C::Out>,
    reply: Reply<C::Out>,
}

type Reply<T> = oneshot::Sender<Result<Answer<T>>>;

/// A kind's queue, and whether a leader is on its way to serve it.
struct Queue<C: Combine> {
    entries: Vec<Entry<C>>,
    leading: bool,
}

struct Line<C: Combine>(Mutex<Queue<C>>);

impl<C: Combine> Line<C> {
    fn lock(&self) -> MutexGuard<'_, Queue<C>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A store's queues, one per [`Combine`] kind (created on first use), and
/// what they have done.
#[derive(Default)]
pub(super) struct Combiners {
    lines: Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
    /// Combined statements run, and the requests they served (for the
    /// metrics: their ratio is the mean number of requests per statement).
    statements: AtomicU64,
    served: AtomicU64,
    /// Writes that gave way on a writer other than the first
    /// ([`Store::gave_way`]).
    pub(super) gave_way: AtomicU64,
}

impl Combiners {
    /// Combined statements run so far, and the requests they served.
    pub(super) fn done(&self) -> (u64, u64) {
        (self.statements.load(SeqCst), self.served.load(SeqCst))
    }

    fn line<C: Combine>(&self) -> Arc<Line<C>> {
        let mut lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        let line = lines.entry(TypeId::of::<C>()).or_insert_with(|| {
            Arc::new(Line::<C>(Mutex::new(Queue {
                entries: Vec::new(),
                leading: false,
            })))
        });
        line.clone()
            .downcast::<Line<C>>()
            .unwrap_or_else(|_| unreachable!("each kind's queue is stored under its own type id"))
    }
}

impl Store {
    /// Whether this store combines statements ([`combine`](self)): a
    /// PostgreSQL store with group commit on (a combined statement's
    /// requests share its commit, which `max_batch = 1` rules out). With
    /// one writer the leader's turn runs without a savepoint; with several,
    /// under one savepoint for the group (they measured 0.31x of one writer
    /// when every request took its own turn instead, bench/HISTORY.md
    /// item 47). SQLite does not:
    /// its statements are calls into the same process, and combining
    /// waiting requests through a JSON list measured no faster
    /// (BENCHMARKS.md item 14: 0.86x and 0.96x of the single-row
    /// statements, about seven requests a list). The items of one batch
    /// request are served together on SQLite too
    /// ([`Store::combined_together`]: 1.08x, item 28).
    pub(crate) fn combines(&self) -> bool {
        let writers = self.writers();
        self.dialect() == super::Dialect::Postgres && writers.share_commits()
    }

    /// Runs a request's fast path, `C`'s statement for `item` and then
    /// `post`: combined with the other waiting requests of its kind where
    /// the store [combines](Store::combines), else alone in an unguarded
    /// turn. `Done` once committed; `Missed` with a guarded transaction for
    /// the request's ordinary path when the statement changed nothing.
    pub(crate) async fn combined<C: Combine>(
        &self,
        item: C::Item,
        post: Post<C::Row, C::Out>,
    ) -> Result<Combined<C::Out>> {
        if !self.combines() {
            return self.alone::<C>(item, post).await;
        }
        match self.queued::<C>(item, post).await? {
            Answer::Done(out) => Ok(Combined::Done(out)),
            Answer::Missed => Ok(Combined::Missed(self.begin().await?)),
        }
    }

    /// The fast paths of several items of one request (a batch route's,
    /// `complete-batch`), served together: where the store combines, each
    /// joins its kind's queue as a request of its own would; elsewhere
    /// (SQLite) `C`'s statement runs once for all of them, then each one's
    /// follow-up, in one turn, as a leader serves its queue. One answer per
    /// item, in order: `Some` once committed; `None` where the statement did
    /// not change the item's row (the item takes its ordinary path, as
    /// [`Combined::Missed`]); an error where the turn failed, which fails
    /// every item of it (nothing of it was written).
    ///
    /// Why: on SQLite each statement is a hand-off to the writer
    /// connection's thread and back, and a batch's 32 completions run alone
    /// cost 32 statements and 32 turns (bench/HISTORY.md item 28).
    pub(crate) async fn combined_together<C: Combine>(
        &self,
        requests: Vec<Request<C>>,
    ) -> Vec<Result<Option<C::Out>>> {
        let answers = if self.combines() {
            let queued = requests
                .into_iter()
                .map(|(item, post)| self.queued::<C>(item, post));
            futures_util::future::join_all(queued).await
        } else {
            let mut waiting = Vec::with_capacity(requests.len());
            let mut entries: Vec<Entry<C>> = Vec::with_capacity(requests.len());
            for (item, post) in requests {
                let (reply, answer) = oneshot::channel();
                entries.push(Entry { item, post, reply });
                waiting.push(answer);
            }
            if entries.is_empty() {
                return Vec::new();
            }
            serve_entries(self, self.begin_unguarded().await, entries).await;
            let mut answers = Vec::with_capacity(waiting.len());
            for answer in waiting {
                answers.push(answer.await.unwrap_or_else(|_| {
                    Err(Error::internal("a combined write ended without an answer"))
                }));
            }
            answers
        };
        answers
            .into_iter()
            .map(|answer| {
                answer.map(|answer| match answer {
                    Answer::Done(out) => Some(out),
                    Answer::Missed => None,
                })
            })
            .collect()
    }

    /// [`Store::combined`] where statements are not combined.
    async fn alone<C: Combine>(
        &self,
        item: C::Item,
        post: Post<C::Row, C::Out>,
    ) -> Result<Combined<C::Out>> {
        let mut tx = self.begin_unguarded().await?;
        let row = C::run(&mut tx, std::slice::from_ref(&item)).await?.pop();
        match row {
            Some(row) => {
                let out = post(&mut tx, row).await?;
                tx.commit().await?;
                Ok(Combined::Done(out))
            }
            None => {
                // The statement changed nothing: it may stay outside the
                // savepoint.
                tx.guard().await?;
                Ok(Combined::Missed(tx))
            }
        }
    }

    /// Queues the request for its kind's leader and waits for its answer.
    async fn queued<C: Combine>(
        &self,
        item: C::Item,
        post: Post<C::Row, C::Out>,
    ) -> Result<Answer<C::Out>> {
        let line = self.combiners.line::<C>();
        let (reply, answer) = oneshot::channel();
        let lead = {
            let mut queue = line.lock();
            queue.entries.push(Entry { item, post, reply });
            !std::mem::replace(&mut queue.leading, true)
        };
        if lead {
            tokio::spawn(serve(self.clone(), line));
        }
        answer
            .await
            .map_err(|_| Error::internal("a combined write ended without an answer"))?
    }
}

/// The leader: waits for a turn, then serves the whole queue in it.
async fn serve<C: Combine>(store: Store, line: Arc<Line<C>>) {
    let begun = store.begin_unguarded_on(C::WRITER).await;
    let entries = {
        let mut queue = line.lock();
        queue.leading = false;
        std::mem::take(&mut queue.entries)
    };
    serve_entries(&store, begun, entries).await;
}

/// Serves `entries` in the turn `begun`: `C`'s statement once for all of
/// them, then each changed row's follow-up, then the commit; every entry
/// is answered.
async fn serve_entries<C: Combine>(store: &Store, begun: Result<Tx>, entries: Vec<Entry<C>>) {
    let mut tx = match begun {
        Ok(tx) => tx,
        Err(e) => return fail(entries.into_iter().map(|e| e.reply), &e, false),
    };
    let mut seen = HashSet::new();
    let mut items = Vec::with_capacity(entries.len());
    let mut rest = Vec::with_capacity(entries.len());
    for entry in entries {
        if seen.insert(C::key(&entry.item)) {
            items.push(entry.item);
            rest.push((entry.post, entry.reply));
        } else {
            let _ = entry.reply.send(Ok(Answer::Missed));
        }
    }
    let rows = match C::run(&mut tx, &items).await {
        Ok(rows) => rows,
        Err(e) => {
            // Dropping the transaction rolls back its savepoint or, if it
            // ran unguarded, its whole batch.
            drop(tx);
            if C::alone_after(&e) || e.is_race() {
                count_give_way::<C>(store, &e);
                for (_, reply) in rest {
                    let _ = reply.send(Ok(Answer::Missed));
                }
                return;
            }
            return fail(rest.into_iter().map(|(_, reply)| reply), &e, false);
        }
    };
    let mut changed: HashMap<Uuid, C::Row> =
        rows.into_iter().map(|r| (C::row_key(&r), r)).collect();
    let mut served = Vec::with_capacity(items.len());
    let mut rest = items.iter().zip(rest);
    while let Some((item, (post, reply))) = rest.next() {
        let Some(row) = changed.remove(&C::key(item)) else {
            let _ = reply.send(Ok(Answer::Missed));
            continue;
        };
        match post(&mut tx, row).await {
            Ok(out) => served.push((out, reply)),
            Err(e) if e.is_race() => {
                // Gave way (or lost a deadlock): the whole group rolled
                // back, so each of its requests takes its ordinary path,
                // on the first writer.
                drop(tx);
                count_give_way::<C>(store, &e);
                let others = served.into_iter().map(|(_, reply)| reply);
                let unserved = rest.map(|(_, (_, reply))| reply);
                for reply in others.chain(std::iter::once(reply)).chain(unserved) {
                    let _ = reply.send(Ok(Answer::Missed));
                }
                return;
            }
            Err(e) => {
                drop(tx);
                let others = served.into_iter().map(|(_, reply)| reply);
                fail(others.chain(rest.map(|(_, (_, reply))| reply)), &e, false);
                let _ = reply.send(Err(e));
                return;
            }
        }
    }
    tx.members = served.len();
    match tx.commit().await {
        Ok(()) => {
            store.combiners.statements.fetch_add(1, SeqCst);
            store
                .combiners
                .served
                .fetch_add(served.len() as u64, SeqCst);
            for (out, reply) in served {
                let _ = reply.send(Ok(Answer::Done(out)));
            }
        }
        Err(e) => fail(served.into_iter().map(|(_, reply)| reply), &e, true),
    }
}

/// Counts a combined group that gave way: a race on a writer other than the
/// first, whose statements are the only ones that wait for a lock with a
/// bound ([`super::PG_GIVE_WAY_AFTER`]).
fn count_give_way<C: Combine>(store: &Store, error: &Error) {
    if error.is_race() && C::WRITER % store.writers().len() != 0 {
        store.gave_way();
    }
}

/// Tells every request of a failed combined statement to retry. Unless
/// the failure came at the commit with its outcome unknown, nothing was
/// written ([`NotCommitted`]: the server runs such a request again).
fn fail<T>(replies: impl Iterator<Item = Reply<T>>, cause: &Error, at_commit: bool) {
    let unwritten = !at_commit || cause.nothing_committed();
    let disk_full = cause.fault() == Some(DbFault::DiskFull);
    for reply in replies {
        let message = format!("a combined write failed ({cause}); retry");
        let error = match (disk_full, unwritten) {
            (true, _) => Error::StorageFull(message.into()),
            (false, true) => Error::Unavailable(Box::new(NotCommitted(message))),
            (false, false) => Error::Unavailable(message.into()),
        };
        let _ = reply.send(Err(error));
    }
}
