//! [`Wakeup`]: how a write tells the background runner
//! ([`crate::background`]) that it created work due earlier than the runner
//! planned. Kept below [`crate::control_plane`], which holds one, so the
//! runner above both can read it.

use chrono::{DateTime, Utc};
use std::sync::Mutex;
use tokio::sync::Notify;

/// The runner's wake-up: the earliest time a write asked for, and a notify
/// that interrupts the runner's sleep when that moved earlier.
#[derive(Debug, Default)]
pub(crate) struct Wakeup {
    earliest: Mutex<Option<DateTime<Utc>>>,
    notify: Notify,
}

impl Wakeup {
    pub(crate) fn request(&self, at: DateTime<Utc>) {
        let mut earliest = self.earliest.lock().expect("background wake-up poisoned");
        if earliest.is_none_or(|known| at < known) {
            *earliest = Some(at);
            // A permit is kept when the runner is busy, so none is lost.
            self.notify.notify_one();
        }
    }

    /// Resolves when a request moved the earliest time (or one did while
    /// nobody waited).
    pub(crate) async fn notified(&self) {
        self.notify.notified().await
    }

    pub(crate) fn take(&self) -> Option<DateTime<Utc>> {
        self.earliest
            .lock()
            .expect("background wake-up poisoned")
            .take()
    }
}
