//! [`Wakeup`]: how a write tells the background runner
//! ([`crate::background`]) that it created work due earlier than the runner
//! planned. Kept below [`crate::control_plane`], which holds one, so the
//! runner above both can read it.

use chrono::{DateTime, Utc};
use std::sync::Mutex;
use tokio::sync::Notify;

/// The runner's wake-up: the earliest time writes asked for, and a notify
/// that interrupts the runner's sleep when that moved earlier.
#[derive(Debug, Default)]
pub(crate) struct Wakeup {
    earliest: Mutex<Requested>,
    notify: Notify,
}

/// The earliest times asked for since the runner last looked.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Requested {
    /// For every job that writes wake ([`Wakeup::request`]).
    pub all: Option<DateTime<Utc>>,
    /// For the flow-limits job alone ([`Wakeup::request_flow_limits`]).
    pub flow_limits: Option<DateTime<Utc>>,
}

impl Wakeup {
    pub(crate) fn request(&self, at: DateTime<Utc>) {
        self.lower(at, |r| &mut r.all);
    }

    /// A wake-up for the flow-limits job only: every claim and create of a
    /// keyed task asks for one, and waking the other jobs that often made
    /// them run twice a second for nothing (`orch bench limits`).
    pub(crate) fn request_flow_limits(&self, at: DateTime<Utc>) {
        self.lower(at, |r| &mut r.flow_limits);
    }

    fn lower(
        &self,
        at: DateTime<Utc>,
        slot: impl FnOnce(&mut Requested) -> &mut Option<DateTime<Utc>>,
    ) {
        let mut earliest = self.earliest.lock().expect("background wake-up poisoned");
        let slot = slot(&mut earliest);
        if slot.is_none_or(|known| at < known) {
            *slot = Some(at);
            // A permit is kept when the runner is busy, so none is lost.
            self.notify.notify_one();
        }
    }

    /// Resolves when a request moved the earliest time (or one did while
    /// nobody waited).
    pub(crate) async fn notified(&self) {
        self.notify.notified().await
    }

    pub(crate) fn take(&self) -> Requested {
        std::mem::take(&mut *self.earliest.lock().expect("background wake-up poisoned"))
    }
}
