//! The background runner: work that happens on time rather than on a
//! request (liveness and timeouts, retention, and the jobs other modules add
//! to `JOBS`).
//!
//! One runner per replica ([`ControlPlane::run_background`]) instead of one
//! loop per feature: each job does what is due at the clock's "now" and says
//! when it next has work; the runner sleeps until the earliest of those
//! times, so nothing waits for a fixed polling interval. A write that makes
//! earlier work (a task delayed by one second, a schedule created) calls
//! [`ControlPlane::wake_background`] after its commit and the runner
//! re-plans at once.
//!
//! Several replicas run their own runner over one database. Jobs therefore
//! claim each piece of due work in the database (a unique row, a leased row,
//! a conditional update), never in memory, so no piece is done twice; and a
//! job that knows of no work checks again every [`RECHECK`], which picks up
//! work another replica created without a wake-up reaching this one.

use crate::control_plane::ControlPlane;
use crate::error::Result;
use chrono::{DateTime, Utc};
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;
use tokio::sync::watch;

/// When a job next has work: `Some(t)` runs it at `t` (or earlier when it is
/// woken); `None` means it knows of none, and it runs again after
/// [`RECHECK`] or when woken.
pub type Due = Option<DateTime<Utc>>;

/// The future a job's run returns.
pub(crate) type JobFuture<'a> = Pin<Box<dyn Future<Output = Result<Due>> + Send + 'a>>;

/// One kind of background work.
pub(crate) struct Job {
    /// For logs.
    pub name: &'static str,
    /// Whether [`ControlPlane::wake_background`] concerns it (writes that
    /// create due work wake the runner; hourly housekeeping need not run
    /// then).
    pub woken: bool,
    /// Whether [`ControlPlane::wake_flow_limits`] concerns it too.
    pub flow_limits: bool,
    /// Does what is due now and says when it next has work.
    pub run: for<'a> fn(&'a ControlPlane) -> JobFuture<'a>,
}

/// Every job of the runner. A module with work to do on time adds one line
/// here and a `pub(crate) async fn <thing>_job(&self) -> Result<Due>`.
const JOBS: &[Job] = &[
    Job {
        name: "liveness",
        woken: true,
        flow_limits: false,
        run: |core| Box::pin(core.liveness_job()),
    },
    Job {
        name: "schedules",
        woken: true,
        flow_limits: false,
        run: |core| Box::pin(core.schedules_job()),
    },
    Job {
        name: "webhook deliveries",
        woken: true,
        flow_limits: false,
        run: |core| Box::pin(core.webhook_delivery_job()),
    },
    Job {
        name: "bulk actions",
        woken: true,
        flow_limits: false,
        run: |core| Box::pin(core.bulk_action_job()),
    },
    Job {
        name: "run_control",
        woken: true,
        flow_limits: false,
        run: |core| Box::pin(core.run_control_job()),
    },
    Job {
        name: "flow limits",
        woken: true,
        flow_limits: true,
        run: |core| Box::pin(core.limits_job()),
    },
    Job {
        name: "statistics",
        woken: false,
        flow_limits: false,
        run: |core| Box::pin(core.statistics_job()),
    },
    Job {
        name: "retention",
        woken: false,
        flow_limits: false,
        run: |core| Box::pin(core.retention_job()),
    },
];

/// How often a job that knows of no work looks again (work created on
/// another replica wakes only that replica's runner).
pub const RECHECK: Duration = Duration::from_secs(30);

/// How long one run of the history sweep may delete before it yields to the
/// other jobs and to requests (it is due again after as long when more is
/// left).
const RETENTION_BUDGET: Duration = Duration::from_millis(250);

/// How long a job that failed waits before it runs again.
const RETRY_AFTER_ERROR: Duration = Duration::from_secs(1);

fn after(now: DateTime<Utc>, wait: Duration) -> DateTime<Utc> {
    now + chrono::Duration::from_std(wait).unwrap_or(chrono::Duration::MAX)
}

impl ControlPlane {
    /// Tells the runner that work falls due at `at` (call it after the commit
    /// that created the work). Cheap: it only lowers an in-memory time.
    pub fn wake_background(&self, at: DateTime<Utc>) {
        self.background_wakeup().request(at);
    }

    /// Tells the flow-limits job alone to look at `at` (after a claim or
    /// create of a keyed task: its key may be full now).
    pub(crate) fn wake_flow_limits(&self, at: DateTime<Utc>) {
        self.background_wakeup().request_flow_limits(at);
    }

    /// Runs the background jobs until `stop` turns true (or its sender is
    /// dropped). The server calls it once per replica; a program that embeds
    /// the core calls it once too, e.g.
    /// `tokio::spawn(async move { core.run_background(stop).await })`.
    pub async fn run_background(&self, mut stop: watch::Receiver<bool>) {
        let clock = self.clock().clone();
        let mut moved = clock.moved();
        // Every job runs once at start: it finds what fell due while no
        // replica ran.
        let mut next = vec![DateTime::<Utc>::MIN_UTC; JOBS.len()];
        loop {
            if *stop.borrow() {
                return;
            }
            let requested = self.background_wakeup().take();
            for (job, next) in JOBS.iter().zip(next.iter_mut()) {
                let flow_limits = requested.flow_limits.filter(|_| job.flow_limits);
                let asked = requested
                    .all
                    .filter(|_| job.woken)
                    .into_iter()
                    .chain(flow_limits)
                    .min();
                if let Some(at) = asked
                    && at < *next
                {
                    *next = at;
                }
            }
            let now = clock.now();
            for (job, next) in JOBS.iter().zip(next.iter_mut()) {
                if *next > now {
                    continue;
                }
                *next = match (job.run)(self).await {
                    Ok(Some(due)) => due,
                    Ok(None) => after(now, RECHECK),
                    Err(e) => {
                        tracing::warn!(job = job.name, error = %e, "background job failed");
                        after(now, RETRY_AFTER_ERROR)
                    }
                };
            }
            let earliest = next.iter().min().copied().unwrap_or(after(now, RECHECK));
            let wait = (earliest - clock.now()).to_std().unwrap_or(Duration::ZERO);
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = self.background_wakeup().notified() => {}
                _ = moved.changed() => {}
                stopped = stop.changed() => if stopped.is_err() { return },
            }
        }
    }

    /// The liveness and timeout sweep ([`crate::liveness`]), every
    /// [`crate::CoreConfig::liveness_interval`].
    pub(crate) async fn liveness_job(&self) -> Result<Due> {
        let swept = self.sweep_liveness().await?;
        if swept != Default::default() {
            tracing::info!(?swept, "liveness sweep");
        }
        let every = self
            .config()
            .liveness_interval
            .max(Duration::from_millis(50));
        Ok(Some(after(self.clock().now(), every)))
    }

    /// Fresh planner statistics for hot tables that grew, and a vacuum of
    /// the claim table where autovacuum is off ([`crate::statistics`]), every
    /// [`crate::CoreConfig::statistics_interval`].
    pub(crate) async fn statistics_job(&self) -> Result<Due> {
        let analyzed = self.analyze_grown_tables().await?;
        if !analyzed.is_empty() {
            tracing::info!(tables = ?analyzed, "analyzed tables that grew since their statistics");
        }
        if self.vacuum_without_autovacuum().await? {
            tracing::debug!(
                table = crate::statistics::CLAIM_TABLE,
                "vacuumed the claim table (autovacuum is off for it)"
            );
        }
        let every = self
            .config()
            .statistics_interval
            .max(Duration::from_millis(100));
        Ok(Some(after(self.clock().now(), every)))
    }

    /// The retention sweeps: expired request ids and sessions
    /// ([`crate::maintenance`]) and, when a history retention is set, ended
    /// runs, events and logs ([`crate::retention`]). A history sweep gets
    /// [`RETENTION_BUDGET`] per run; with more left it is due again after as
    /// long as it worked, so a large backlog takes at most half the
    /// writer's time and requests keep the other half.
    pub(crate) async fn retention_job(&self) -> Result<Due> {
        let purged = self
            .purge_expired(crate::maintenance::IDEMPOTENCY_RETENTION)
            .await?;
        tracing::debug!(?purged, "retention sweep");
        if let Some(keep) = self.config().history_retention {
            let before = self.clock().now()
                - chrono::Duration::from_std(keep).unwrap_or(chrono::Duration::MAX);
            let started = std::time::Instant::now();
            let history = self.purge_history(before, RETENTION_BUDGET).await?;
            if history.workflows + history.tasks + history.events + history.logs > 0 {
                tracing::info!(?history, "deleted history past its retention");
            }
            if !history.finished {
                return Ok(Some(after(self.clock().now(), started.elapsed())));
            }
        }
        let now = self.clock().now();
        let every = self
            .config()
            .retention_interval
            .max(Duration::from_millis(100));
        Ok(Some(after(now, every)))
    }
}
