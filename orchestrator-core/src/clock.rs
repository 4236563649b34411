//! [`Clock`]: where the control plane reads "now".
//!
//! Work that happens later (liveness, retries with backoff, delayed tasks,
//! schedule slots, webhook retries) depends on time passing. Reading time
//! through a clock the core is given, instead of `Utc::now()`, lets a test
//! move time across a daylight-saving change or a backoff without sleeping,
//! and lets the background runner ([`crate::background`]) notice when a test
//! moved it.

use chrono::{DateTime, Utc};
use std::sync::Mutex;
use tokio::sync::watch;

/// A source of the current time.
pub trait Clock: Send + Sync + std::fmt::Debug + 'static {
    /// Now, in UTC.
    fn now(&self) -> DateTime<Utc>;

    /// A receiver that changes whenever time was moved by hand
    /// ([`ManualClock`]); the system clock's never changes. The background
    /// runner waits on it beside its timer, so a sleep planned in manual time
    /// ends as soon as a test moves the clock past it.
    fn moved(&self) -> watch::Receiver<()>;
}

/// The real time of the machine.
#[derive(Debug)]
pub struct SystemClock {
    // Kept so `moved` can hand out receivers that never fire.
    never: watch::Sender<()>,
}

impl SystemClock {
    /// The system clock.
    pub fn new() -> Self {
        Self {
            never: watch::channel(()).0,
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    // The one place in the core that reads the system's time.
    #[allow(clippy::disallowed_methods)]
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }

    fn moved(&self) -> watch::Receiver<()> {
        self.never.subscribe()
    }
}

/// A clock that stands still until told to move: for tests of anything that
/// waits (backoff, schedules, expiry).
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<DateTime<Utc>>,
    moved: watch::Sender<()>,
}

impl ManualClock {
    /// A clock showing `start`.
    pub fn new(start: DateTime<Utc>) -> Self {
        Self {
            now: Mutex::new(start),
            moved: watch::channel(()).0,
        }
    }

    /// Sets the time (it may go backwards, as a wall clock can).
    pub fn set(&self, to: DateTime<Utc>) {
        *self.now.lock().expect("manual clock poisoned") = to;
        self.moved.send_replace(());
    }

    /// Moves the time forward by `by`.
    pub fn advance(&self, by: chrono::Duration) {
        {
            let mut now = self.now.lock().expect("manual clock poisoned");
            *now = now
                .checked_add_signed(by)
                .unwrap_or(DateTime::<Utc>::MAX_UTC);
        }
        self.moved.send_replace(());
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.now.lock().expect("manual clock poisoned")
    }

    fn moved(&self) -> watch::Receiver<()> {
        self.moved.subscribe()
    }
}
