//! The long poll of `POST /tasks/claim` and `POST /workers/:id/next`
//! (`wait_seconds`, beyond the contract): when nothing is claimable the
//! request waits until something may be, then answers as an ordinary claim.
//!
//! What may make a task claimable always wakes the store's event bus on
//! every replica: a new or released task and a freed concurrency slot write
//! an event (a create, a completion, a failure, a cancel, a lease expiry),
//! and work that becomes claimable without a write (a delayed task's
//! `run_at`, a rate window that moves) is woken by the background runner at
//! its due time ([`crate::store::Store`]'s `wake_claimers`). The poll claims
//! again on each wake-up, and every `BACKSTOP` in case a wake-up was lost.

use crate::error::{Error, Result};
use crate::store::{Store, Topic};
use std::future::Future;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

/// The longest `wait_seconds`.
pub const MAX_WAIT_SECONDS: i64 = 30;

/// How long the poll waits without a wake-up before claiming again.
const BACKSTOP: Duration = Duration::from_secs(5);

/// The wait a request asks for: 0 to [`MAX_WAIT_SECONDS`] (else 422).
pub(crate) fn requested_wait(seconds: Option<i64>) -> Result<Duration> {
    match seconds {
        None => Ok(Duration::ZERO),
        Some(s) if (0..=MAX_WAIT_SECONDS).contains(&s) => Ok(Duration::from_secs(s as u64)),
        Some(_) => Err(Error::schema_field("wait_seconds", "must be 0 to 30")),
    }
}

/// Runs `claim` until it answers something or `wait` has passed, claiming
/// again whenever the store's event bus wakes (module docs).
pub(crate) async fn long_poll<T, F, Fut>(
    store: &Store,
    wait: Duration,
    mut claim: F,
) -> Result<Option<T>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Option<T>>>,
{
    let deadline = Instant::now() + wait;
    loop {
        // Subscribed before the claim, so a wake-up during it is not missed.
        let mut wake = store.wakeups();
        if let Some(found) = claim().await? {
            return Ok(Some(found));
        }
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            let nap = (deadline - now).min(BACKSTOP);
            tokio::select! {
                woke = wake.recv() => match woke {
                    Ok(Topic::Logs) => continue,
                    Ok(Topic::Events) | Err(RecvError::Lagged(_)) => break,
                    Err(RecvError::Closed) => return Ok(None),
                },
                _ = tokio::time::sleep(nap) => break,
            }
        }
    }
}
