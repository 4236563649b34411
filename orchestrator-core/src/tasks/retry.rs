//! Retry policies (run control §2): the checks of a policy, its defaults,
//! and the one decision every failure path asks: does this failure go back
//! to `pending`, and after how long?
//!
//! The delay is counted from the moment of failure (the clock the caller
//! read), never from the claim or the previous attempt, so a task that ran
//! long is not retried at once. Without a policy the contract's
//! `auto_retry` / `max_retries` keep their meaning (retried at once).

use crate::api::{RetryPolicy, TaskError};
use crate::error::{Error, Result};
use crate::tasks::rows::TaskRow;
use rand::RngExt;

/// Bounds of the policy's fields (run control §2).
const MAX_ATTEMPTS: i64 = 100;
const MAX_INTERVAL_SECONDS: i64 = 86_400;

/// Checks `policy` (422 naming the field for a value out of range) and
/// fills in its defaults: what the task keeps and shows.
pub(crate) fn normalise(field: &str, policy: &RetryPolicy) -> Result<RetryPolicy> {
    let bad = |name: &str, message: &str| Error::schema_field(&format!("{field}.{name}"), message);
    if !(1..=MAX_ATTEMPTS).contains(&policy.max_attempts) {
        return Err(bad("max_attempts", "must be 1 to 100"));
    }
    let initial = policy.initial_interval_seconds.unwrap_or(1);
    if !(0..=MAX_INTERVAL_SECONDS).contains(&initial) {
        return Err(bad("initial_interval_seconds", "must be 0 to 86400"));
    }
    let coefficient = policy.backoff_coefficient.unwrap_or(2.0);
    if !(1.0..=10.0).contains(&coefficient) {
        return Err(bad("backoff_coefficient", "must be 1.0 to 10.0"));
    }
    let max_interval = policy
        .max_interval_seconds
        .unwrap_or_else(|| (initial * 100).min(MAX_INTERVAL_SECONDS));
    if !(0..=MAX_INTERVAL_SECONDS).contains(&max_interval) {
        return Err(bad("max_interval_seconds", "must be 0 to 86400"));
    }
    let jitter = policy.jitter.unwrap_or(0.2);
    if !(0.0..=1.0).contains(&jitter) {
        return Err(bad("jitter", "must be 0.0 to 1.0"));
    }
    let categories = policy.non_retryable_categories.clone().unwrap_or_default();
    if categories.iter().any(|c| c.is_empty() || c.len() > 200) {
        return Err(bad(
            "non_retryable_categories",
            "each must be 1 to 200 characters",
        ));
    }
    Ok(RetryPolicy {
        max_attempts: policy.max_attempts,
        initial_interval_seconds: Some(initial),
        backoff_coefficient: Some(coefficient),
        max_interval_seconds: Some(max_interval),
        jitter: Some(jitter),
        non_retryable_categories: Some(categories),
    })
}

/// What a failure comes to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Verdict {
    /// Back to `pending`, claimable after this many seconds.
    Retry { delay_seconds: f64 },
    /// No attempts left, or a failure the policy does not retry.
    Fail,
}

/// The delay before the retry of failed attempt `attempt` (1-based):
/// `min(max_interval, initial × coefficient^(attempt − 1))`, times a
/// random factor in `[1 − jitter, 1 + jitter]`.
pub(crate) fn backoff(policy: &RetryPolicy, attempt: i32) -> f64 {
    let initial = policy.initial_interval_seconds.unwrap_or(1) as f64;
    let coefficient = policy.backoff_coefficient.unwrap_or(2.0);
    let cap = policy.max_interval_seconds.unwrap_or(100 * 86_400) as f64;
    let exponent = (attempt.max(1) - 1).min(1_000);
    let delay = (initial * coefficient.powi(exponent)).min(cap);
    let jitter = policy.jitter.unwrap_or(0.2);
    if jitter <= 0.0 {
        return delay;
    }
    delay * rand::rng().random_range((1.0 - jitter)..=(1.0 + jitter))
}

/// Whether `row`'s failure with `error` is retried, and when.
///
/// `legacy_retry`: what the contract's rules say for a task without a
/// policy (the caller knows the cause: the holder's `/fail` obeys
/// `auto_retry`, a lost agent only `max_retries`, a timeout never).
/// `retry_after`: the worker's `retry_after_seconds`, which replaces the
/// computed delay.
pub(crate) fn decide(
    row: &TaskRow,
    error: &TaskError,
    legacy_retry: bool,
    retry_after: Option<i64>,
) -> Verdict {
    let Some(policy) = row.retry_policy.as_ref().map(|p| &p.0) else {
        return if legacy_retry {
            Verdict::Retry {
                delay_seconds: retry_after.unwrap_or(0) as f64,
            }
        } else {
            Verdict::Fail
        };
    };
    let non_retryable = error.recoverable == Some(false)
        || error.category.as_ref().is_some_and(|c| {
            policy
                .non_retryable_categories
                .as_ref()
                .is_some_and(|list| list.contains(c))
        });
    if non_retryable || i64::from(row.attempt) >= policy.max_attempts {
        return Verdict::Fail;
    }
    let delay_seconds = match retry_after {
        Some(seconds) => seconds as f64,
        None => backoff(policy, row.attempt),
    };
    Verdict::Retry { delay_seconds }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponential_and_capped_without_jitter() {
        let policy = normalise(
            "retry_policy",
            &RetryPolicy {
                max_attempts: 10,
                initial_interval_seconds: Some(1),
                backoff_coefficient: Some(2.0),
                max_interval_seconds: Some(5),
                jitter: Some(0.0),
                non_retryable_categories: None,
            },
        )
        .unwrap();
        let delays: Vec<f64> = (1..=5).map(|a| backoff(&policy, a)).collect();
        assert_eq!(delays, vec![1.0, 2.0, 4.0, 5.0, 5.0]);
    }

    #[test]
    fn defaults_and_ranges() {
        let policy = normalise(
            "retry_policy",
            &RetryPolicy {
                max_attempts: 3,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(policy.max_interval_seconds, Some(100));
        assert_eq!(policy.jitter, Some(0.2));
        let bad = RetryPolicy {
            max_attempts: 0,
            ..Default::default()
        };
        assert!(normalise("retry_policy", &bad).is_err());
    }
}
