//! The per-key request budget: a token bucket per API key (and per client
//! address for the unauthenticated auth routes), refilled continuously at the
//! configured rate a minute. Stream routes are exempt.

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use orchestrator_core::Error;
use std::net::IpAddr;
use std::num::NonZeroU32;
use uuid::Uuid;

/// Whose budget a request spends.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Budget {
    Key(Uuid),
    Address(IpAddr),
}

pub(crate) struct Limiter {
    limiter: DefaultKeyedRateLimiter<Budget>,
    clock: DefaultClock,
}

impl Limiter {
    /// `None` when the limit is 0 (off).
    pub fn new(per_minute: u32) -> Option<Self> {
        let per_minute = NonZeroU32::new(per_minute)?;
        Some(Self {
            limiter: RateLimiter::keyed(Quota::per_minute(per_minute)),
            clock: DefaultClock::default(),
        })
    }

    /// Spends one request, or says how long to wait.
    pub fn check(&self, budget: &Budget) -> Result<(), Error> {
        self.limiter.check_key(budget).map_err(|not_until| {
            let wait = not_until.wait_time_from(self.clock.now());
            Error::RateLimited {
                retry_after_secs: wait.as_secs() + u64::from(wait.subsec_nanos() > 0),
            }
        })?;
        // Keep the table from growing without bound under key churn.
        if self.limiter.len() > 100_000 {
            self.limiter.retain_recent();
        }
        Ok(())
    }
}
