//! `orch admin`: operations on the server's database while the server is
//! down.
//!
//! The one documented exception to "the CLI goes through the SDK": an
//! operator who lost (or never saw) the first admin key has no credential
//! to call the API with, so `orch admin create-key` opens the database
//! through the core directly (`orchestrator_core::ControlPlane`, acting as
//! `Caller::system`), exactly as `orch serve` would open it.

use anyhow::Context;
use clap::{Args, Subcommand};
use orchestrator_core::ControlPlane;
use orchestrator_core::api::Scope;
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Create an admin API key offline, on the database itself (stop the
    /// server first on SQLite); prints the key once.
    #[command(
        after_help = "Examples:\n  orch admin create-key --data-dir ~/.local/share/orch\n  \
                            orch admin create-key --database-url postgres://orch@db/orch"
    )]
    CreateKey(CreateKeyArgs),
}

#[derive(Debug, Args)]
pub struct CreateKeyArgs {
    /// The database `orch serve` uses: `postgres://...`, or default the
    /// SQLite file in --data-dir.
    #[arg(long, env = "ORCH_DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
    /// Where `orch serve` keeps its embedded database (default: the user's
    /// data directory).
    #[arg(long, env = "ORCH_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// A label for the key.
    #[arg(long, default_value = "admin key created offline")]
    pub name: String,
}

pub async fn run(command: AdminCommand) -> anyhow::Result<()> {
    match command {
        AdminCommand::CreateKey(args) => create_key(args).await,
    }
}

async fn create_key(args: CreateKeyArgs) -> anyhow::Result<()> {
    let url = super::serve::database_url(args.database_url, args.data_dir)?;
    let mut config = orchestrator_core::CoreConfig::new(url);
    super::serve::configure_secrets(&mut config);
    let core = ControlPlane::open(config)
        .await
        .context("cannot open the database")?;
    // A database this command creates gets its first keys here: show them
    // rather than adding a second admin key next to one nobody saw.
    let generated = core.take_generated_keys();
    let key = match generated.iter().find(|k| k.scope == Scope::Admin) {
        Some(first) => {
            core.record_admin_key_shown().await?;
            first.api_key.clone()
        }
        None => core.create_admin_key(&args.name).await?,
    };
    for other in generated.iter().filter(|k| k.scope != Scope::Admin) {
        eprintln!(
            "Generated the first {} API key (shown once, store it now): {}",
            other.scope, other.api_key
        );
    }
    core.store().close().await;
    eprintln!("Created an admin API key (shown once, store it now):");
    println!("{key}");
    Ok(())
}
