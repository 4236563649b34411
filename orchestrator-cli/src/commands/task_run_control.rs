//! Run control on the command line (issue 30): the `orch tasks create`
//! flags for delays, expiry, retries, leases, dedupe keys and flow-limit
//! keys, and `orch tasks reschedule` (one task or a `--filter`) / `orch
//! tasks heartbeat`.

use crate::cli::GlobalOpts;
use crate::output::{self, fields, opt};
use clap::Args;
use orchestrator_client::api::{
    BulkActionKind, BulkTarget, CreateTask, RescheduleTask, RetryPolicy, Task, TaskHeartbeat,
    Timestamp,
};
use uuid::Uuid;

/// The run-control flags of `orch tasks create`.
#[derive(Debug, Clone, Default, Args)]
pub struct CreateRunControl {
    /// Not claimable before this time (RFC 3339).
    #[arg(long, conflicts_with = "delay")]
    pub run_at: Option<String>,
    /// Not claimable for this many seconds.
    #[arg(long)]
    pub delay: Option<i64>,
    /// Cancelled (reason `expired`) if still pending after this many seconds.
    #[arg(long)]
    pub ttl: Option<i64>,
    /// Retry policy: attempts in all, the first included.
    #[arg(long)]
    pub retry_max: Option<i64>,
    /// Retry policy: the first retry's delay in seconds (doubling after).
    #[arg(long, requires = "retry_max")]
    pub retry_backoff: Option<i64>,
    /// The holder's lease: released when no heartbeat came for this long.
    #[arg(long)]
    pub heartbeat_timeout: Option<i64>,
    /// While a task with this key is live, a create answers it instead.
    #[arg(long)]
    pub dedupe_key: Option<String>,
    /// At most the key's limit (default 1) of tasks with it are held at once.
    #[arg(long)]
    pub concurrency_key: Option<String>,
    /// A rate key (set with `orch limits rate set`): its claims are limited
    /// per window.
    #[arg(long)]
    pub rate_limit_key: Option<String>,
}

impl CreateRunControl {
    /// Sets the flags given on `request`.
    pub fn apply(self, request: &mut CreateTask) -> anyhow::Result<()> {
        request.run_at = self.run_at.as_deref().map(parse_time).transpose()?;
        request.delay_seconds = self.delay;
        request.ttl_seconds = self.ttl;
        request.heartbeat_timeout_seconds = self.heartbeat_timeout;
        request.dedupe_key = self.dedupe_key;
        request.concurrency_key = self.concurrency_key;
        request.rate_limit_key = self.rate_limit_key;
        request.retry_policy = self.retry_max.map(|max_attempts| RetryPolicy {
            max_attempts,
            initial_interval_seconds: self.retry_backoff,
            ..Default::default()
        });
        Ok(())
    }
}

fn parse_time(text: &str) -> anyhow::Result<Timestamp> {
    serde_json::from_value(serde_json::Value::String(text.into()))
        .map_err(|_| anyhow::anyhow!("--run-at must be an RFC 3339 time, got {text}"))
}

/// `orch tasks reschedule`: one task, or a bulk action over a `--filter`.
#[derive(Debug, Args)]
pub struct RescheduleArgs {
    /// The task: its id, a unique id prefix or its short id (the last 8 hex
    /// digits, as listings show).
    #[arg(required_unless_present = "filter", conflicts_with = "filter")]
    pub id: Option<String>,
    /// The new time (RFC 3339).
    #[arg(long, conflicts_with = "delay", required_unless_present = "delay")]
    pub run_at: Option<String>,
    /// Seconds from now (with --filter: from now on this machine's clock).
    #[arg(long)]
    pub delay: Option<i64>,
    /// With --filter: the bulk action's reason.
    #[arg(long, requires = "filter")]
    pub reason: Option<String>,
    #[command(flatten)]
    pub bulk: crate::commands::bulk::BulkArgs,
}

/// `orch tasks heartbeat`.
#[derive(Debug, Args)]
pub struct HeartbeatArgs {
    /// The task: its id, a unique id prefix or its short id (the last 8 hex
    /// digits, as listings show).
    pub id: String,
    /// The attempt the holder works on (fencing).
    #[arg(long)]
    pub attempt: Option<i64>,
    /// Progress as a JSON object.
    #[arg(long)]
    pub progress: Option<String>,
    /// The holding agent (only for keys not bound to an agent).
    #[arg(long)]
    pub agent: Option<Uuid>,
}

/// `POST /tasks/:id/reschedule`.
pub async fn reschedule(
    tasks: &orchestrator_client::Tasks<'_>,
    id: Uuid,
    args: RescheduleArgs,
) -> anyhow::Result<Task> {
    let request = RescheduleTask {
        run_at: args.run_at.as_deref().map(parse_time).transpose()?,
        delay_seconds: args.delay,
        request_id: None,
    };
    Ok(tasks.reschedule(id, &request).await?)
}

/// `orch tasks reschedule --filter ...`: a bulk `reschedule` (the API takes
/// a time, so `--delay` is counted from now here).
pub async fn bulk_reschedule(
    global: &GlobalOpts,
    client: &orchestrator_client::Client,
    args: RescheduleArgs,
) -> anyhow::Result<()> {
    let run_at = match (args.run_at.as_deref(), args.delay) {
        (Some(text), _) => parse_time(text)?,
        (None, Some(seconds)) => {
            (chrono::Utc::now() + chrono::Duration::seconds(seconds.clamp(0, 31_536_000))).into()
        }
        (None, None) => anyhow::bail!("give --run-at or --delay"),
    };
    crate::commands::bulk::run(
        global,
        client,
        BulkTarget::Tasks,
        BulkActionKind::Reschedule,
        &args.bulk,
        args.reason,
        Some(run_at),
    )
    .await
}

/// `POST /tasks/:id/heartbeat`, printed.
pub async fn heartbeat(
    global: &GlobalOpts,
    tasks: &orchestrator_client::Tasks<'_>,
    id: Uuid,
    args: HeartbeatArgs,
) -> anyhow::Result<()> {
    let progress = match args.progress {
        Some(text) => Some(
            serde_json::from_str(&text)
                .map_err(|e| anyhow::anyhow!("--progress is not JSON: {e}"))?,
        ),
        None => None,
    };
    let request = TaskHeartbeat {
        attempt: args.attempt,
        progress,
        agent_id: args.agent,
    };
    let ack = tasks.heartbeat(id, &request).await?;
    output::emit(global.format(), &ack, || {
        fields(&[
            ("ack", ack.ack.to_string()),
            ("lease_expires_at", opt(&ack.lease_expires_at)),
            ("cancel_requested", ack.cancel_requested.to_string()),
        ])
    });
    Ok(())
}
