//! `orch limits concurrency set|list|delete` and `orch limits rate
//! set|list|delete`: flow limits per key (admin). Tasks name their keys with
//! `orch tasks create --concurrency-key / --rate-limit-key`.

use crate::cli::{GlobalOpts, OutputFormat, PageArgs};
use crate::config;
use crate::output::{self, fields, table};
use clap::{Args, Subcommand};
use orchestrator_client::api::{ConcurrencyLimit, DeletedLimit, RateLimit};

#[derive(Debug, Subcommand)]
pub enum LimitsCommand {
    /// Concurrency limits: at most N tasks with the key held at once.
    #[command(subcommand)]
    Concurrency(ConcurrencyCommand),
    /// Rate limits: at most N claims with the key in any window of a period.
    #[command(subcommand)]
    Rate(RateCommand),
}

#[derive(Debug, Subcommand)]
pub enum ConcurrencyCommand {
    /// Set a key's limit (a key without one has limit 1).
    #[command(after_help = "Example:\n  orch limits concurrency set repo:acme/web 2")]
    Set(SetConcurrencyArgs),
    /// Every key with a limit or a task: limit, held, pending.
    List(ListArgs),
    /// Remove a key's limit (back to 1).
    Delete(KeyArgs),
}

#[derive(Debug, Subcommand)]
pub enum RateCommand {
    /// Set a key's rate limit.
    #[command(after_help = "Example:\n  orch limits rate set openai 500 --period 60")]
    Set(SetRateArgs),
    /// Every rate limit: limit, period, claims in the window, pending.
    List(ListArgs),
    /// Remove a rate limit (tasks may no longer name the key).
    Delete(KeyArgs),
}

#[derive(Debug, Args)]
pub struct SetConcurrencyArgs {
    /// The concurrency key (tasks name it with `--concurrency-key`).
    pub key: String,
    /// 1 to 100,000 tasks held at once.
    pub limit: i64,
}

#[derive(Debug, Args)]
pub struct SetRateArgs {
    /// The rate key (tasks name it with `--rate-limit-key`).
    pub key: String,
    /// 1 to 1,000,000 claims per window.
    pub limit: i64,
    /// The window in seconds (1 to 86,400).
    #[arg(long)]
    pub period: i64,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub page: PageArgs,
}

#[derive(Debug, Args)]
pub struct KeyArgs {
    /// The key whose limit to remove.
    pub key: String,
}

pub async fn run(global: &GlobalOpts, command: LimitsCommand) -> anyhow::Result<()> {
    let client = config::client(global)?;
    let limits = client.limits();
    let format = global.format();
    match command {
        LimitsCommand::Concurrency(ConcurrencyCommand::Set(args)) => {
            show_concurrency(
                format,
                &[limits.set_concurrency(&args.key, args.limit).await?],
            );
        }
        LimitsCommand::Concurrency(ConcurrencyCommand::List(args)) => {
            let page = limits.list_concurrency(args.page.request()).await?;
            show_concurrency(format, &page.items);
        }
        LimitsCommand::Concurrency(ConcurrencyCommand::Delete(args)) => {
            show_deleted(format, &limits.delete_concurrency(&args.key).await?);
        }
        LimitsCommand::Rate(RateCommand::Set(args)) => {
            let set = limits.set_rate(&args.key, args.limit, args.period).await?;
            show_rate(format, &[set]);
        }
        LimitsCommand::Rate(RateCommand::List(args)) => {
            let page = limits.list_rate(args.page.request()).await?;
            show_rate(format, &page.items);
        }
        LimitsCommand::Rate(RateCommand::Delete(args)) => {
            show_deleted(format, &limits.delete_rate(&args.key).await?);
        }
    }
    Ok(())
}

fn show_concurrency(format: OutputFormat, keys: &[ConcurrencyLimit]) {
    output::emit(format, &keys, || {
        let mut t = table(&["key", "limit", "held", "pending"]);
        for k in keys {
            t.add_row(vec![
                k.key.clone(),
                k.limit.to_string(),
                k.held.to_string(),
                k.pending.to_string(),
            ]);
        }
        t
    });
}

fn show_rate(format: OutputFormat, keys: &[RateLimit]) {
    output::emit(format, &keys, || {
        let mut t = table(&[
            "key",
            "limit",
            "period_seconds",
            "claimed_in_window",
            "pending",
        ]);
        for k in keys {
            t.add_row(vec![
                k.key.clone(),
                k.limit.to_string(),
                k.period_seconds.to_string(),
                k.claimed_in_window.to_string(),
                k.pending.to_string(),
            ]);
        }
        t
    });
}

fn show_deleted(format: OutputFormat, deleted: &DeletedLimit) {
    output::emit(format, deleted, || {
        fields(&[
            ("key", deleted.key.clone()),
            ("deleted", deleted.deleted.to_string()),
        ])
    });
}
