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

use crate::error::{Error, Result};
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

impl Drop for WriterThread {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
