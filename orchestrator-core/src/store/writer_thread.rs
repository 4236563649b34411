//! SQLite's hot writes on a thread of their own, on one CPU with the writer
//! connection.
//!
//! Why: on SQLite every statement of a write is a round trip between the
//! task that holds the writer and the writer connection's worker thread
//! (sqlx runs each SQLite connection on a thread of its own), and the writer
//! passes from one request's task to the next: thread wake-ups, one after
//! another, on the writer's serial path. When the threads sit on different
//! cores, each wake-up is a cross-core interrupt, and on a virtual machine
//! waking an idle virtual CPU costs tens of microseconds. Measured on the
//! 2-core host (BENCHMARKS.md, item 12): the same server ran the SQLite
//! lifecycle 1.5x faster pinned to one core with `taskset` than free on
//! two, while about a third of the machine sat idle.
//!
//! How: the task transitions agents make all day (create; claim, also
//! through `/workers/:id/next`; start, complete and fail) and log ingest's
//! batches run on a single-threaded runtime on this thread
//! ([`super::Store::on_writer`]), and the writer connection is opened from it, so sqlx's worker thread for
//! the connection starts here and inherits its CPU: both are kept on the
//! last CPU the process may use. The serial chain (a statement, its answer,
//! the next request's statement, the batch's commit) then passes between two
//! threads of one core, and the writer's lock passes between tasks of one
//! thread. The requests' HTTP work stays on the server's runtime, which
//! hands each request over and back once (off the serial path: many
//! requests are in flight at once). An ingest batch's 500-row statement is
//! built, bound and run on the same core, so its values are not carried
//! across cores either.
//!
//! Other writes (rare, and several statements each) still run wherever their
//! request runs. PostgreSQL has no such thread: its statements are round
//! trips to another process, which no affinity of ours can place.
//!
//! Under load the thread runs as `SCHED_BATCH` ([`note_batch`]): a thread
//! of that policy that wakes up does not preempt the thread running on its
//! core, so the requests' HTTP threads and sqlx's worker thread, which hand
//! the writer work and answers, finish what they are doing before the
//! writer takes the core, instead of being cut off at every hand-off
//! (bench/HISTORY.md item 35). When its batches shrink it goes back to the
//! default policy, so a write below saturation is not made to wait for the
//! core.

use crate::error::{Error, Result};
use std::cell::Cell;
use std::future::Future;
use tokio::runtime::Handle;
use tokio::sync::oneshot;

/// The thread and its runtime; the thread ends when this is dropped.
pub(crate) struct WriterThread {
    handle: Handle,
    stop: Option<oneshot::Sender<()>>,
}

impl WriterThread {
    /// Starts the thread and its runtime.
    pub(crate) fn start() -> Result<Self> {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("orch-sqlite-writer".into())
            .spawn(move || {
                // The last CPU this process may run on; the connection's
                // worker thread, started from here, inherits the mask.
                if let Some(core) =
                    core_affinity::get_core_ids().and_then(|ids| ids.last().copied())
                {
                    core_affinity::set_for_current(core);
                }
                init_scheduling();
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let _ = ready_tx.send(Ok(runtime.handle().clone()));
                // Runs the spawned requests until the store is dropped.
                runtime.block_on(async {
                    let _ = stopped.await;
                });
            })
            .map_err(Error::internal)?;
        let handle = ready_rx
            .recv()
            .map_err(Error::internal)?
            .map_err(Error::internal)?;
        Ok(Self {
            handle,
            stop: Some(stop),
        })
    }

    /// Runs `work` on this thread and waits for its answer. It runs to the
    /// end even if the caller stops waiting (a dropped HTTP request), like a
    /// write that reached the database before its client went away.
    pub(crate) async fn run<T, F>(&self, work: F) -> Result<T>
    where
        F: Future<Output = Result<T>> + Send + 'static,
        T: Send + 'static,
    {
        self.handle.spawn(work).await.map_err(Error::internal)?
    }

    /// Runs `work` on this thread (for setting up what must live here, such
    /// as the writer connection).
    pub(crate) async fn setup<T, F>(&self, work: F) -> Result<T>
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        self.handle.spawn(work).await.map_err(Error::internal)
    }
}

thread_local! {
    /// On the writer thread only: whether it now runs as `SCHED_BATCH`.
    /// `None` elsewhere, and on a writer thread whose scheduling is left as
    /// it started.
    static BATCH_POLICY: Cell<Option<bool>> = const { Cell::new(None) };
}

/// Lets the writer thread change its scheduling policy: only when it starts
/// with the default policy at niceness 0 (a server started under `nice` or
/// `chrt` keeps what it was given, since changing the policy resets the
/// niceness).
fn init_scheduling() {
    use thread_priority::{NormalThreadSchedulePolicy as Normal, ThreadSchedulePolicy};
    let default_policy = matches!(
        thread_priority::unix::thread_schedule_policy(),
        Ok(ThreadSchedulePolicy::Normal(Normal::Other))
    );
    if default_policy && own_niceness() == Some(0) {
        BATCH_POLICY.set(Some(false));
    }
}

/// This thread's niceness, from `/proc/thread-self/stat` (its 19th field).
fn own_niceness() -> Option<i64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // The command name, in parentheses, may hold spaces: count after it.
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(16)?.parse().ok()
}

/// The writer counts as saturated, and runs as `SCHED_BATCH`, while its
/// batches hold at least this many requests on average: requests queue for
/// it anyway, so taking the core the moment one arrives gains nothing.
const SATURATED_BATCH: u32 = 12;
/// It goes back to the default policy when the average falls to this many:
/// below saturation a request that wakes the writer should not wait for
/// another thread's time slice (switching on single batches of two
/// requests, the claim p99 at 1,700 claims/s, half the maximum, rose by
/// half).
const UNSATURATED_BATCH: u32 = 4;

thread_local! {
    /// On the writer thread: the average batch size, in sixteenths, over
    /// roughly the last eight batches.
    static MEAN_BATCH: Cell<u32> = const { Cell::new(16) };
}

/// Notes that the writer committed a batch of `members` requests, and on
/// the writer thread switches its scheduling policy when the average batch
/// crossed one of the two bounds ([`SATURATED_BATCH`],
/// [`UNSATURATED_BATCH`]; the average and the gap between the bounds keep
/// it from flapping). A no-op on other threads and on PostgreSQL; a change
/// the system refuses ends the switching.
pub(crate) fn note_batch(members: usize) {
    use thread_priority::{
        NormalThreadSchedulePolicy as Normal, ThreadPriority, ThreadPriorityOsValue,
        ThreadSchedulePolicy,
    };
    let Some(batch) = BATCH_POLICY.get() else {
        return;
    };
    let (mean, busy) = average(MEAN_BATCH.get(), members);
    MEAN_BATCH.set(mean);
    let Some(busy) = busy else {
        return;
    };
    if busy == batch {
        return;
    }
    let policy = if busy { Normal::Batch } else { Normal::Other };
    let set = thread_priority::unix::set_thread_priority_and_policy(
        thread_priority::unix::thread_native_id(),
        ThreadPriority::Os(ThreadPriorityOsValue::default()),
        ThreadSchedulePolicy::Normal(policy),
    );
    BATCH_POLICY.set(set.is_ok().then_some(busy));
}

/// The average batch size (in sixteenths) after a batch of `members`, and
/// whether the writer is now saturated (`None` between the bounds).
fn average(mean: u32, members: usize) -> (u32, Option<bool>) {
    let members = u32::try_from(members).unwrap_or(u32::MAX).min(1024);
    let mean = mean - mean / 8 + members * 2;
    let busy = match mean / 16 {
        n if n >= SATURATED_BATCH => Some(true),
        n if n <= UNSATURATED_BATCH => Some(false),
        _ => None,
    };
    (mean, busy)
}

impl Drop for WriterThread {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Saturation takes a run of large batches, not one, and ends only
    /// once the batches have stayed small for a while.
    #[test]
    fn the_policy_follows_the_average_batch_not_one_batch() {
        let mut mean = 16;
        let (after_one, busy) = average(mean, 32);
        assert_ne!(busy, Some(true), "one batch of 32 after single requests");
        mean = after_one;
        let mut saturated_after = None;
        for i in 1..=20 {
            let (next, busy) = average(mean, 20);
            mean = next;
            if busy == Some(true) {
                saturated_after = Some(i);
                break;
            }
        }
        assert!(
            saturated_after.is_some_and(|i| i > 1),
            "{saturated_after:?}"
        );
        let (next, busy) = average(mean, 1);
        assert_ne!(busy, Some(false), "one lone request after saturation");
        mean = next;
        let mut idle = false;
        for _ in 0..40 {
            let (next, busy) = average(mean, 1);
            mean = next;
            idle |= busy == Some(false);
        }
        assert!(idle);
        assert_eq!(average(u32::MAX / 4, usize::MAX).1, Some(true));
    }
}
