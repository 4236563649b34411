//! Latency histograms (hdrhistogram, microseconds) and their summaries.

use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// Longest latency a histogram records exactly (longer ones are clamped).
const MAX_MICROS: u64 = 120_000_000;

/// Per-route latency histograms of one client task; merged at the end so
/// clients never contend on a lock while measuring.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    routes: BTreeMap<&'static str, Histogram<u64>>,
    pub errors: u64,
}

impl Recorder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn record(&mut self, route: &'static str, elapsed: Duration) {
        let micros = (elapsed.as_micros() as u64).clamp(1, MAX_MICROS);
        self.routes
            .entry(route)
            .or_insert_with(new_histogram)
            .saturating_record(micros);
    }

    pub fn merge(&mut self, other: Recorder) {
        for (route, histogram) in other.routes {
            let mine = self.routes.entry(route).or_insert_with(new_histogram);
            // Same bounds on both sides: adding cannot fail.
            let _ = mine.add(&histogram);
        }
        self.errors += other.errors;
    }

    pub fn count(&self, route: &str) -> u64 {
        self.routes.get(route).map_or(0, Histogram::len)
    }

    pub fn summaries(&self) -> BTreeMap<String, Latency> {
        self.routes
            .iter()
            .map(|(route, h)| (route.to_string(), Latency::of(h)))
            .collect()
    }
}

/// Where a step's timing or failure goes: a [`Recorder`] of one client, or
/// (`orch bench soak`) a short list moved into the minute's recorder.
pub trait Record {
    /// A step of `route` that answered after `elapsed`.
    fn record(&mut self, route: &'static str, elapsed: Duration);
    /// A step that failed.
    fn error(&mut self);
}

impl Record for Recorder {
    fn record(&mut self, route: &'static str, elapsed: Duration) {
        Recorder::record(self, route, elapsed);
    }

    fn error(&mut self) {
        self.errors += 1;
    }
}

fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_MICROS, 3).expect("valid histogram bounds")
}

/// Percentiles of one route, in milliseconds.
#[derive(Debug, Clone, Serialize)]
pub struct Latency {
    pub count: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// The whole distribution as `[quantile, ms]` pairs (every percentile,
    /// then the tail to the maximum), for the latency charts of
    /// `bench/charts.py`.
    pub quantiles_ms: Vec<(f64, f64)>,
}

impl Latency {
    fn of(h: &Histogram<u64>) -> Self {
        let ms = |micros: u64| round3(micros as f64 / 1000.0);
        Self {
            count: h.len(),
            mean_ms: round3(h.mean() / 1000.0),
            p50_ms: ms(h.value_at_quantile(0.50)),
            p95_ms: ms(h.value_at_quantile(0.95)),
            p99_ms: ms(h.value_at_quantile(0.99)),
            max_ms: ms(h.max()),
            quantiles_ms: (0..100)
                .map(|p| f64::from(p) / 100.0)
                .chain([0.995, 0.999, 0.9999, 1.0])
                .map(|q| (q, ms(h.value_at_quantile(q))))
                .collect(),
        }
    }
}

pub fn round3(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

/// `count / elapsed`, per second.
pub fn rate(count: u64, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs <= 0.0 {
        0.0
    } else {
        (count as f64 / secs * 10.0).round() / 10.0
    }
}
