//! Counters of this process's delivery attempts, for `/metrics`: attempts
//! by outcome and the time posts took.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A 2xx answer.
    Delivered,
    /// Failed, with another attempt scheduled.
    Retrying,
    /// Failed, and the delivery has no attempts left.
    Failed,
    /// A `410`: the webhook was disabled.
    Gone,
}

impl Outcome {
    /// Every outcome, in the order the counters keep them.
    pub const ALL: [Outcome; 4] = [Self::Delivered, Self::Retrying, Self::Failed, Self::Gone];

    /// The outcome's `outcome` label value on `/metrics`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Delivered => "delivered",
            Self::Retrying => "retrying",
            Self::Failed => "failed",
            Self::Gone => "gone",
        }
    }
}

/// Upper bounds (seconds) of the latency histogram's buckets.
pub const LATENCY_BUCKETS: [f64; 8] = [0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

/// The counters (process-wide, like the server's other instruments).
pub(crate) struct Stats {
    outcomes: [AtomicU64; 4],
    /// Cumulative counts per bucket of [`LATENCY_BUCKETS`].
    buckets: [AtomicU64; 8],
    count: AtomicU64,
    micros: AtomicU64,
}

pub(crate) static STATS: Stats = Stats {
    outcomes: [const { AtomicU64::new(0) }; 4],
    buckets: [const { AtomicU64::new(0) }; 8],
    count: AtomicU64::new(0),
    micros: AtomicU64::new(0),
};

impl Stats {
    pub(crate) fn observe(&self, outcome: Outcome, took: Duration) {
        let index = Outcome::ALL.iter().position(|o| *o == outcome).unwrap_or(0);
        self.outcomes[index].fetch_add(1, Ordering::Relaxed);
        let seconds = took.as_secs_f64();
        for (bound, bucket) in LATENCY_BUCKETS.iter().zip(&self.buckets) {
            if seconds <= *bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        self.micros.fetch_add(
            u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }
}

/// A snapshot for the metrics endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryStats {
    /// Attempts by outcome.
    pub outcomes: Vec<(Outcome, u64)>,
    /// Cumulative attempts at or under each bound of [`LATENCY_BUCKETS`].
    pub buckets: Vec<(f64, u64)>,
    /// Attempts observed since the process started (the histogram's
    /// count).
    pub count: u64,
    /// Time all those posts took added up, in seconds (the histogram's
    /// sum).
    pub seconds: f64,
}

/// The counters now.
pub fn delivery_stats() -> DeliveryStats {
    DeliveryStats {
        outcomes: (Outcome::ALL.iter().zip(&STATS.outcomes))
            .map(|(o, n)| (*o, n.load(Ordering::Relaxed)))
            .collect(),
        buckets: (LATENCY_BUCKETS.iter().zip(&STATS.buckets))
            .map(|(b, n)| (*b, n.load(Ordering::Relaxed)))
            .collect(),
        count: STATS.count.load(Ordering::Relaxed),
        seconds: STATS.micros.load(Ordering::Relaxed) as f64 / 1e6,
    }
}
