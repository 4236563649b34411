//! The writers of a store.

use super::{Turn, Writer};
use crate::error::Result;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

/// The writers of a store; a request takes an idle one, or queues on the
/// least busy.
pub(crate) struct Writers {
    list: Vec<Arc<Writer>>,
    next: AtomicUsize,
}

impl Writers {
    pub(crate) fn new(list: Vec<Arc<Writer>>) -> Self {
        assert!(!list.is_empty(), "a store has at least one writer");
        Self {
            list,
            next: AtomicUsize::new(0),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether requests may share a commit here: group commit is on
    /// (`max_batch` above 1) on every writer.
    pub(crate) fn share_commits(&self) -> bool {
        self.list.iter().all(|w| w.policy.max_batch > 1)
    }

    pub(crate) fn idle(&self) -> usize {
        self.list.iter().filter(|w| w.is_idle()).count()
    }

    /// Batches committed by every writer, and the requests they carried.
    pub(crate) fn committed(&self) -> (u64, u64) {
        self.list
            .iter()
            .map(|w| w.committed())
            .fold((0, 0), |(b, r), (wb, wr)| (b + wb, r + wr))
    }

    pub(crate) async fn begin(&self, guarded: bool) -> Result<Turn> {
        let n = self.list.len();
        let start = self.next.fetch_add(1, SeqCst) % n;
        for i in 0..n {
            let writer = &self.list[(start + i) % n];
            if let Some(guard) = writer.try_take() {
                return writer.begin(Some(guard), guarded).await;
            }
        }
        let least_busy = (0..n)
            .map(|i| &self.list[(start + i) % n])
            .min_by_key(|w| w.queue_len())
            .expect("at least one writer");
        least_busy.begin(None, guarded).await
    }

    /// A turn on the writer of index `index` (modulo their number), waiting
    /// for it if it is busy: for work that keeps to one writer of several
    /// ([`crate::store::combine`]'s kinds).
    pub(crate) async fn begin_on(&self, index: usize, guarded: bool) -> Result<Turn> {
        let writer = &self.list[index % self.list.len()];
        writer.begin(writer.try_take(), guarded).await
    }

    pub(crate) async fn flush(&self) {
        for writer in &self.list {
            writer.flush().await;
        }
    }
}
