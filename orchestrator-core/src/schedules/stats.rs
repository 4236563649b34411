//! Figures for the metrics endpoint: schedule runs by outcome and the lag
//! of timer fires, read from the run rows at scrape time, so they are right
//! across replicas and restarts (like the task gauges).

use crate::control_plane::ControlPlane;
use crate::error::Result;
use crate::store::on_db;
use uuid::Uuid;

/// Upper bounds (seconds) of the fire-lag histogram's buckets.
pub const LAG_BUCKETS: [f64; 8] = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 30.0];

/// Runs by outcome, and the lag between a timer slot's due time
/// (`scheduled_for` + jitter) and its fire.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScheduleStats {
    /// `(outcome, runs)`.
    pub runs: Vec<(String, i64)>,
    /// Cumulative counts of fires with a lag at most each of [`LAG_BUCKETS`].
    pub lag_buckets: Vec<u64>,
    /// The lags of all fires added up, in seconds (the histogram's sum).
    pub lag_sum_seconds: f64,
    /// Fires with a recorded lag (the histogram's count; runs that were
    /// not timer fires have none).
    pub lag_count: u64,
}

impl ControlPlane {
    /// [`ScheduleStats`], of `tenant` only when given.
    pub async fn schedule_stats(&self, tenant: Option<Uuid>) -> Result<ScheduleStats> {
        let mut conn = self.store().read().await?;
        let runs: Vec<(String, i64)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT outcome, COUNT(*) FROM schedule_runs WHERE ($1 IS NULL OR tenant_id = $1) \
             GROUP BY outcome ORDER BY outcome",
        )
        .bind(tenant)
        .fetch_all(c)
        .await)?;
        let lags: Vec<(i64,)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT lag_ms FROM schedule_runs WHERE lag_ms IS NOT NULL AND ($1 IS NULL OR tenant_id = $1)",
        )
        .bind(tenant)
        .fetch_all(c)
        .await)?;
        let seconds: Vec<f64> = lags.iter().map(|(ms,)| *ms as f64 / 1000.0).collect();
        Ok(ScheduleStats {
            runs,
            lag_buckets: LAG_BUCKETS
                .iter()
                .map(|le| seconds.iter().filter(|s| **s <= *le).count() as u64)
                .collect(),
            lag_sum_seconds: seconds.iter().sum(),
            lag_count: seconds.len() as u64,
        })
    }
}
