//! `GET /metrics`: Prometheus text exposition of what the server does
//! (requests, claims, streams, rate-limit refusals) and what the database
//! holds (tasks by state, queue depth, pool use).
//!
//! Counters and histograms live in one registry per server and are updated
//! on the request path. Database figures are read at scrape time into a
//! registry of their own, so two scrapes at once never see each other's
//! half-filled gauges and the figures are right across replicas.
//!
//! Who sees what: on the API address the route needs an admin key, and a
//! tenant admin's scrape carries only its own tenant's task gauges (a
//! `service` key sees every tenant). The optional `--metrics-listen`
//! address serves the same text without credentials, every tenant
//! included: bind it where only the monitoring system can reach it.

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use http::{HeaderValue, StatusCode, header};
use orchestrator_core::api::Scope;
use orchestrator_core::schedules::{LAG_BUCKETS, ScheduleStats};
use orchestrator_core::{ControlPlane, Error};
use prometheus::{
    HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry,
    TextEncoder,
};
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// Routes whose answer is a claim: `200` gave a task, `204` found none.
const CLAIM_ROUTES: [&str; 3] = [
    "/api/v1/tasks/claim",
    "/api/v1/workers/{id}/next",
    "/api/v1/acp/claim",
];

/// Buckets for claim latency, finer than the request default at the low end
/// where the targets are (p99 of a few milliseconds).
const CLAIM_BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// The server's own instruments.
pub(crate) struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    claims: IntCounterVec,
    claim_latency: HistogramVec,
    open_streams: IntGauge,
    open_websockets: IntGauge,
    rate_limited: IntCounter,
    open_connections: IntGauge,
    refused_connections: IntCounter,
}

impl Metrics {
    pub(crate) fn new() -> Self {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new(
                "orch_http_requests_total",
                "HTTP requests answered, by route and status",
            ),
            &["method", "route", "status"],
        )
        .expect("valid metric");
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "orch_http_request_duration_seconds",
                "Time from a request's arrival to its response head, by route",
            ),
            &["method", "route"],
        )
        .expect("valid metric");
        let claims = IntCounterVec::new(
            Opts::new(
                "orch_claims_total",
                "Claim requests by route and outcome (claimed, empty, refused)",
            ),
            &["route", "outcome"],
        )
        .expect("valid metric");
        let claim_latency = HistogramVec::new(
            HistogramOpts::new(
                "orch_claim_duration_seconds",
                "Latency of claim requests that returned a task or found none",
            )
            .buckets(CLAIM_BUCKETS.to_vec()),
            &["route"],
        )
        .expect("valid metric");
        let open_streams = IntGauge::new("orch_open_streams", "Server-sent event streams open now")
            .expect("valid metric");
        let open_websockets =
            IntGauge::new("orch_open_websockets", "Worker channel websockets open now")
                .expect("valid metric");
        let rate_limited = IntCounter::new(
            "orch_rate_limited_total",
            "Requests refused with 429 by the rate limiter",
        )
        .expect("valid metric");
        let open_connections = IntGauge::new(
            "orch_open_connections",
            "Client connections open now (every listener)",
        )
        .expect("valid metric");
        let refused_connections = IntCounter::new(
            "orch_connections_refused_total",
            "Connections refused with 503 at the connection cap, every connection busy",
        )
        .expect("valid metric");
        for collector in [
            Box::new(requests.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(latency.clone()),
            Box::new(claims.clone()),
            Box::new(claim_latency.clone()),
            Box::new(open_streams.clone()),
            Box::new(open_websockets.clone()),
            Box::new(rate_limited.clone()),
            Box::new(open_connections.clone()),
            Box::new(refused_connections.clone()),
        ] {
            registry
                .register(collector)
                .expect("metric names are unique");
        }
        Self {
            registry,
            requests,
            latency,
            claims,
            claim_latency,
            open_streams,
            open_websockets,
            rate_limited,
            open_connections,
            refused_connections,
        }
    }

    /// Sets the number of open client connections.
    pub(crate) fn connection_count(&self, open: usize) {
        self.open_connections
            .set(i64::try_from(open).unwrap_or(i64::MAX));
    }

    /// Counts a connection refused at the cap.
    pub(crate) fn connection_refused(&self) {
        self.refused_connections.inc();
    }

    /// Records one answered request. `route` is the route table's pattern
    /// (bounded cardinality), `(unmatched)` for paths no route serves.
    pub(crate) fn observe(&self, method: &str, route: &str, status: StatusCode, took: Duration) {
        let code = status.as_u16();
        self.requests
            .with_label_values(&[method, route, &code.to_string()])
            .inc();
        self.latency
            .with_label_values(&[method, route])
            .observe(took.as_secs_f64());
        if code == 429 {
            self.rate_limited.inc();
        }
        if CLAIM_ROUTES.contains(&route) {
            let outcome = match code {
                200 => "claimed",
                204 => "empty",
                _ => "refused",
            };
            self.claims.with_label_values(&[route, outcome]).inc();
            if outcome != "refused" {
                self.claim_latency
                    .with_label_values(&[route])
                    .observe(took.as_secs_f64());
            }
        }
    }

    /// Counts an open SSE stream until the guard drops.
    pub(crate) fn stream_opened(&self) -> OpenGuard {
        OpenGuard::new(&self.open_streams)
    }

    /// Counts an open websocket until the guard drops.
    pub(crate) fn websocket_opened(&self) -> OpenGuard {
        OpenGuard::new(&self.open_websockets)
    }

    /// The exposition text: the server's instruments, then the database
    /// figures (of `tenant` only when given).
    async fn render(&self, core: &ControlPlane, tenant: Option<Uuid>) -> Result<String, Error> {
        let database = Registry::new();
        let tasks = IntGaugeVec::new(
            Opts::new("orch_tasks", "Tasks by tenant and state"),
            &["tenant_id", "state"],
        )
        .expect("valid metric");
        let queue = IntGaugeVec::new(
            Opts::new(
                "orch_queue_depth",
                "Pending tasks (waiting for a claim) by tenant",
            ),
            &["tenant_id"],
        )
        .expect("valid metric");
        let pool = IntGaugeVec::new(
            Opts::new(
                "orch_db_pool_connections",
                "Database pool connections by pool and use (idle, in_use)",
            ),
            &["pool", "state"],
        )
        .expect("valid metric");
        for count in core.task_counts(tenant).await? {
            let tenant_id = count.tenant_id.to_string();
            tasks
                .with_label_values(&[tenant_id.as_str(), count.state.as_str()])
                .set(count.count);
            if count.state == "pending" {
                queue
                    .with_label_values(&[tenant_id.as_str()])
                    .set(count.count);
            }
        }
        for used in core.pool_use() {
            pool.with_label_values(&[used.pool, "idle"])
                .set(i64::from(used.idle));
            pool.with_label_values(&[used.pool, "in_use"])
                .set(i64::from(used.size.saturating_sub(used.idle)));
        }
        let batches = core.write_batches();
        let write_batches = IntCounter::new(
            "orch_db_write_batches_total",
            "Database commits made by this server's group-commit writers",
        )
        .expect("valid metric");
        write_batches.inc_by(batches.batches);
        let write_requests = IntCounter::new(
            "orch_db_write_batch_requests_total",
            "Write requests carried by those commits (divided by \
             orch_db_write_batches_total: the mean batch size)",
        )
        .expect("valid metric");
        write_requests.inc_by(batches.requests);
        let combined_statements = IntCounter::new(
            "orch_db_combined_statements_total",
            "Combined statements run: one statement for all the task starts, \
             or completions, waiting for the writer (PostgreSQL), or for the \
             items of one complete-batch or create-batch request (either \
             database)",
        )
        .expect("valid metric");
        combined_statements.inc_by(batches.combined_statements);
        let combined_requests = IntCounter::new(
            "orch_db_combined_requests_total",
            "Requests served by those statements (divided by \
             orch_db_combined_statements_total: requests per statement)",
        )
        .expect("valid metric");
        combined_requests.inc_by(batches.combined_requests);
        let gave_way = IntCounter::new(
            "orch_db_write_give_ways_total",
            "Writes that waited for a row lock too long on a PostgreSQL writer \
             other than the first, were rolled back and ran again on the first \
             (a combined group of starts, completions or creates, or a \
             claim-batch batch)",
        )
        .expect("valid metric");
        gave_way.inc_by(batches.gave_way);
        let mut counters = vec![
            write_batches,
            write_requests,
            combined_statements,
            combined_requests,
            gave_way,
        ];
        // Run control (issue 30): what this process did.
        let run_control = orchestrator_core::tasks::counters::counters();
        for (name, help, value) in [
            (
                "orch_task_retries_scheduled_total",
                "Failed tasks sent back to pending by their retry rules",
                &run_control.retries_scheduled,
            ),
            (
                "orch_task_leases_expired_total",
                "Held tasks released because no heartbeat came within their timeout",
                &run_control.leases_expired,
            ),
            (
                "orch_task_dedupe_hits_total",
                "Task creates answered with the live task of their dedupe key",
                &run_control.dedupe_hits,
            ),
            (
                "orch_tasks_expired_total",
                "Pending tasks cancelled at their expires_at",
                &run_control.tasks_expired,
            ),
            (
                "orch_claims_refused_by_limit_total",
                "Claim statements a flow limit refused because a concurrent claim \
                 took the last slot first (the claim ran again)",
                &run_control.limit_races,
            ),
            (
                "orch_tasks_limit_waiting_total",
                "Claimable tasks first held back by a concurrency or rate limit",
                &run_control.limit_waiting,
            ),
        ] {
            let counter = IntCounter::new(name, help).expect("valid metric");
            counter.inc_by(value.load(std::sync::atomic::Ordering::Relaxed));
            counters.push(counter);
        }
        for counter in counters {
            database
                .register(Box::new(counter))
                .expect("metric names are unique");
        }
        let schedule_runs = IntCounterVec::new(
            Opts::new(
                "orch_schedule_runs_total",
                "Schedule slots by outcome (launched, skipped, cancelled_previous, failed)",
            ),
            &["outcome"],
        )
        .expect("valid metric");
        let schedules = core.schedule_stats(tenant).await?;
        for (outcome, count) in &schedules.runs {
            schedule_runs
                .with_label_values(&[outcome.as_str()])
                .inc_by(u64::try_from(*count).unwrap_or(0));
        }
        database
            .register(Box::new(schedule_runs))
            .expect("metric names are unique");
        for collector in [tasks, queue, pool] {
            database
                .register(Box::new(collector))
                .expect("metric names are unique");
        }
        let limits = core.limit_stats(tenant).await?;
        for (name, help, label, keys) in [
            (
                "orch_concurrency_key_tasks",
                "Tasks per concurrency key: held (claimed or in progress) and pending",
                "held",
                &limits.concurrency,
            ),
            (
                "orch_rate_key_tasks",
                "Per rate key: claims in the current window, and pending tasks",
                "claimed_in_window",
                &limits.rate,
            ),
        ] {
            let gauge =
                IntGaugeVec::new(Opts::new(name, help), &["key", "state"]).expect("valid metric");
            for k in keys {
                gauge
                    .with_label_values(&[k.key.as_str(), label])
                    .set(k.used);
                gauge
                    .with_label_values(&[k.key.as_str(), "pending"])
                    .set(k.pending);
            }
            database
                .register(Box::new(gauge))
                .expect("metric names are unique");
        }
        let progress = core.bulk_progress(tenant).await?;
        let bulk = IntGaugeVec::new(
            Opts::new(
                "orch_bulk_action_entities",
                "Entities of running bulk actions: matched, and done (applied or skipped)",
            ),
            &["state"],
        )
        .expect("valid metric");
        bulk.with_label_values(&["matched"]).set(progress.matched);
        bulk.with_label_values(&["done"]).set(progress.done);
        let running = IntGauge::new("orch_bulk_actions_running", "Bulk actions running")
            .expect("valid metric");
        running.set(progress.running);
        let stats = orchestrator_core::webhooks::delivery_stats();
        let attempts = IntCounterVec::new(
            Opts::new(
                "orch_webhook_delivery_attempts_total",
                "Webhook delivery attempts made by this server, by outcome \
                 (delivered, retrying, failed, gone)",
            ),
            &["outcome"],
        )
        .expect("valid metric");
        for (outcome, n) in &stats.outcomes {
            attempts.with_label_values(&[outcome.as_str()]).inc_by(*n);
        }
        database
            .register(Box::new(bulk))
            .expect("metric names are unique");
        database
            .register(Box::new(running))
            .expect("metric names are unique");
        database
            .register(Box::new(attempts))
            .expect("metric names are unique");
        let mut families = self.registry.gather();
        families.extend(database.gather());
        let mut text = TextEncoder::new()
            .encode_to_string(&families)
            .map_err(|e| Error::internal(format!("encoding metrics: {e}")))?;
        lag_histogram(&mut text, &schedules);
        text.push_str(&delivery_latency(&stats));
        Ok(text)
    }
}

/// `orch_schedule_fire_lag_seconds`: a histogram whose buckets are counted
/// in the database (the prometheus crate's histograms only observe), in the
/// text format.
fn lag_histogram(text: &mut String, stats: &ScheduleStats) {
    use std::fmt::Write;
    let name = "orch_schedule_fire_lag_seconds";
    let _ = writeln!(
        text,
        "# HELP {name} Lag between a schedule slot's due time (slot + jitter) and its fire"
    );
    let _ = writeln!(text, "# TYPE {name} histogram");
    for (le, count) in LAG_BUCKETS.iter().zip(&stats.lag_buckets) {
        let _ = writeln!(text, "{name}_bucket{{le=\"{le}\"}} {count}");
    }
    let _ = writeln!(text, "{name}_bucket{{le=\"+Inf\"}} {}", stats.lag_count);
    let _ = writeln!(text, "{name}_sum {}", stats.lag_sum_seconds);
    let _ = writeln!(text, "{name}_count {}", stats.lag_count);
}

/// The delivery latency histogram, from the core's counters (cumulative
/// buckets already), in the exposition format.
fn delivery_latency(stats: &orchestrator_core::webhooks::DeliveryStats) -> String {
    let name = "orch_webhook_delivery_duration_seconds";
    let mut text = format!(
        "# HELP {name} How long webhook delivery posts took (this server)\n# TYPE {name} histogram\n"
    );
    for (bound, n) in &stats.buckets {
        text.push_str(&format!("{name}_bucket{{le=\"{bound}\"}} {n}\n"));
    }
    text.push_str(&format!("{name}_bucket{{le=\"+Inf\"}} {}\n", stats.count));
    text.push_str(&format!(
        "{name}_sum {}\n{name}_count {}\n",
        stats.seconds, stats.count
    ));
    text
}

/// Keeps a gauge one higher while it lives.
pub(crate) struct OpenGuard(IntGauge);

impl OpenGuard {
    fn new(gauge: &IntGauge) -> Self {
        gauge.inc();
        Self(gauge.clone())
    }
}

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// `GET /metrics` on the API address (admin; a tenant admin sees its own
/// tenant's task gauges, a service key every tenant's).
pub(crate) async fn scrape(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let caller = req.caller()?;
    let tenant = (caller.scope != Scope::Service).then_some(caller.tenant_id);
    exposition(&app, tenant).await
}

/// `GET /metrics` on the metrics address: no credentials, every tenant.
pub(crate) async fn scrape_all(app: Arc<App>, _req: Req) -> Result<Reply, ApiError> {
    exposition(&app, None).await
}

async fn exposition(app: &App, tenant: Option<Uuid>) -> Result<Reply, ApiError> {
    let text = app.metrics.render(&app.core, tenant).await?;
    Ok(Reply::bytes(StatusCode::OK, text.as_bytes()).with_header(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    ))
}
