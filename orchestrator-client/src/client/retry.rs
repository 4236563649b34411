//! How a [`Client`](super::Client) retries a request that is safe to repeat.

use std::time::Duration;
use uuid::Uuid;

/// How a [`Client`] retries a request that is safe to repeat.
///
/// `max_attempts` counts the first try: `1` turns retries off. The wait
/// before attempt `n + 1` is drawn between half of and the full
/// `base_delay * 2^(n-1)` (capped at `max_delay`); a `Retry-After` from the
/// server is waited out instead when it is longer (also capped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (at least 1).
    pub max_attempts: u32,
    /// The first backoff.
    pub base_delay: Duration,
    /// The longest single wait, `Retry-After` included.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// Three attempts, 250 ms first backoff, waits of at most 60 s.
    fn default() -> Self {
        Self {
            max_attempts: 3,
            base_delay: Duration::from_millis(250),
            max_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// No retries: every request is sent once.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// The wait before the attempt after `attempt` (1-based), jittered.
    pub(super) fn backoff(&self, attempt: u32) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(16))
            .min(self.max_delay);
        let half = exp / 2;
        let spread = half.as_millis().max(1) as u64;
        let jitter = (Uuid::new_v4().as_u128() % u128::from(spread)) as u64;
        half + Duration::from_millis(jitter)
    }
}
