//! The bulk forms of `orch tasks cancel|retry|reschedule` and `orch workflows
//! cancel|pause|resume`: `--filter k=v,...` makes a bulk action (a dry run
//! first for the matched count, then a confirmation unless `--yes`), and
//! follows its progress with a bar.

use crate::cli::GlobalOpts;
use crate::output::{self, fields, opt};
use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use orchestrator_client::Client;
use orchestrator_client::api::{
    BulkAction, BulkActionKind, BulkFilter, BulkStatus, BulkTarget, CreateBulkAction, Timestamp,
};
use std::time::Duration;

/// `--filter` and `--dry-run` of a command that also takes one id.
#[derive(Debug, Args, Default)]
pub struct BulkArgs {
    /// Act on everything matching `k=v,...` instead of one id: `state`,
    /// `workflow` (id), `workspace` (id), `type`, `search`,
    /// `created_after`, `created_before` (RFC 3339).
    #[arg(long, value_name = "K=V,...")]
    pub filter: Option<String>,
    /// Only count what the filter matches; change nothing.
    #[arg(long, requires = "filter")]
    pub dry_run: bool,
}

/// A `--filter` text as the API's filter.
pub fn parse_filter(text: &str) -> anyhow::Result<BulkFilter> {
    let mut filter = BulkFilter::default();
    for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) = pair
            .split_once('=')
            .with_context(|| format!("`{pair}` is not key=value"))?;
        let value = value.trim().to_owned();
        let time = |v: &str| -> anyhow::Result<Timestamp> {
            serde_json::from_value(serde_json::Value::String(v.to_owned()))
                .with_context(|| format!("`{v}` is not an RFC 3339 time"))
        };
        match key.trim() {
            "state" => filter.state = Some(value),
            "workflow" | "workflow_id" => filter.workflow_id = Some(value.parse()?),
            "workspace" | "workspace_id" => filter.workspace_id = Some(value.parse()?),
            "type" => filter.entity_type = Some(value),
            "search" => filter.search = Some(value),
            "created_after" => filter.created_after = Some(time(&value)?),
            "created_before" => filter.created_before = Some(time(&value)?),
            other => anyhow::bail!(
                "unknown filter key `{other}` (state, workflow, workspace, type, search, \
                 created_after, created_before)"
            ),
        }
    }
    Ok(filter)
}

/// Runs `action` over what `filter` matches: the matched count (a dry run),
/// a confirmation, then the action with a progress bar. `run_at` is the
/// new time of `reschedule` (and only of it).
pub async fn run(
    global: &GlobalOpts,
    client: &Client,
    target: BulkTarget,
    action: BulkActionKind,
    args: &BulkArgs,
    reason: Option<String>,
    run_at: Option<Timestamp>,
) -> anyhow::Result<()> {
    let filter = parse_filter(args.filter.as_deref().unwrap_or_default())?;
    let request = CreateBulkAction {
        target,
        action,
        ids: None,
        filter: Some(filter),
        dry_run: Some(true),
        run_at,
        reason,
    };
    let dry = client.bulk_actions().create(&request).await?;
    if args.dry_run {
        show(global, &dry);
        return Ok(());
    }
    output::confirm(
        global.yes,
        &format!("{action} {} {target}", dry.counts.matched),
    )?;
    let started = client
        .bulk_actions()
        .create(&CreateBulkAction {
            dry_run: None,
            ..request
        })
        .await?;
    let bar = ProgressBar::new(started.counts.matched);
    bar.set_draw_target(ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut current = started;
    while current.status == BulkStatus::Running {
        tokio::time::sleep(Duration::from_millis(250)).await;
        current = client.bulk_actions().get(current.id).await?;
        let c = current.counts;
        bar.set_position(c.succeeded + c.skipped + c.failed);
        bar.set_message(format!("{} skipped, {} failed", c.skipped, c.failed));
    }
    bar.finish_and_clear();
    show(global, &current);
    Ok(())
}

/// One bulk action as a record.
pub fn show(global: &GlobalOpts, action: &BulkAction) {
    output::emit(global.format(), action, || {
        fields(&[
            ("id", action.id.to_string()),
            ("target", action.target.to_string()),
            ("action", action.action.to_string()),
            ("status", action.status.to_string()),
            ("dry_run", action.dry_run.to_string()),
            ("matched", action.counts.matched.to_string()),
            ("succeeded", action.counts.succeeded.to_string()),
            ("skipped", action.counts.skipped.to_string()),
            ("failed", action.counts.failed.to_string()),
            ("run_at", opt(&action.run_at)),
            ("finished_at", opt(&action.finished_at)),
        ])
    });
}
