//! `orch db`: backup, restore, check and copy of the server's database.
//!
//! Like `orch admin`, these work on the database itself, not through the
//! API (`orchestrator_core::store::offline`): `backup` and `check` while
//! the server runs, `restore` and `copy` with it stopped (they take the
//! database's lock and refuse while a server holds it).

use crate::cli::GlobalOpts;
use crate::output::{self, fields};
use clap::{Args, Subcommand};
use orchestrator_core::store::offline::{self, OfflineError};
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Copy the embedded SQLite database to a file while the server runs
    /// (a consistent snapshot, readable by you only). Works on the
    /// database file, not through the API; for PostgreSQL use pg_dump.
    #[command(
        after_help = "Examples:\n  orch db backup --to /backups/orch-$(date +%F).db\n  \
                      orch db backup --data-dir /var/lib/orch --to /backups/orch.db --overwrite"
    )]
    Backup(BackupArgs),
    /// Put a backup back in place of the embedded SQLite database, with the
    /// server stopped. Checks that the file is an orch database this
    /// version can serve first. Works on the database file, not through
    /// the API.
    #[command(after_help = "Examples:\n  \
                      orch db restore --from /backups/orch.db --data-dir /var/lib/orch\n  \
                      orch db restore --from /backups/orch.db --replace")]
    Restore(RestoreArgs),
    /// Check the database: the engine's integrity check, the schema version
    /// against this orch, pending migrations. Exits 1 when a check fails.
    /// Works on the database directly (the server may run).
    #[command(after_help = "Examples:\n  orch db check --data-dir /var/lib/orch\n  \
                      orch db check --database-url postgres://orch@db/orch -o json")]
    Check(CheckArgs),
    /// Copy the embedded SQLite database into an empty PostgreSQL database,
    /// with the server stopped: every table, ids and sealed secrets as they
    /// are, counters moved past the copied ids, each table verified by row
    /// count and checksum. Works on both databases directly.
    #[command(
        after_help = "Example:\n  orch db copy --from sqlite:///var/lib/orch/orch.db \
                      --to postgres://orch@db/orch"
    )]
    Copy(CopyArgs),
}

/// Which database: `--database-url`, or the SQLite file in `--data-dir`.
#[derive(Debug, Args)]
pub struct Database {
    /// The database `orch serve` uses: `sqlite://PATH` or `postgres://...`;
    /// default: the SQLite file in --data-dir.
    #[arg(long, env = "ORCH_DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
    /// Where `orch serve` keeps its embedded database (default: the user's
    /// data directory).
    #[arg(long, env = "ORCH_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
}

impl Database {
    fn url(self) -> anyhow::Result<String> {
        super::serve::database_url(self.database_url, self.data_dir)
    }
}

#[derive(Debug, Args)]
pub struct BackupArgs {
    #[command(flatten)]
    pub database: Database,
    /// The backup file to write.
    #[arg(long)]
    pub to: PathBuf,
    /// Replace --to if it exists.
    #[arg(long)]
    pub overwrite: bool,
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    #[command(flatten)]
    pub database: Database,
    /// The backup to put back (made by `orch db backup`).
    #[arg(long)]
    pub from: PathBuf,
    /// Replace the database that is there.
    #[arg(long)]
    pub replace: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub database: Database,
    /// SQLite: `quick_check` instead of the full `integrity_check` (skips
    /// checking that indexes match their tables).
    #[arg(long)]
    pub quick: bool,
}

#[derive(Debug, Args)]
pub struct CopyArgs {
    /// The embedded database to copy: `sqlite://PATH/orch.db`.
    #[arg(long)]
    pub from: String,
    /// An empty PostgreSQL database: `postgres://...`.
    #[arg(long)]
    pub to: String,
}

pub async fn run(global: &GlobalOpts, command: DbCommand) -> anyhow::Result<()> {
    let format = global.format();
    match command {
        DbCommand::Backup(args) => {
            let url = args.database.url()?;
            let done = offline::backup(&url, &args.to, args.overwrite)
                .await
                .map_err(refusal)?;
            output::emit(format, &done, || {
                fields(&[
                    ("backup", done.backup.display().to_string()),
                    ("database", done.database.display().to_string()),
                    ("bytes", done.bytes.to_string()),
                    ("schema_version", done.schema_version.to_string()),
                    ("millis", done.millis.to_string()),
                ])
            });
        }
        DbCommand::Restore(args) => {
            let url = args.database.url()?;
            let done = offline::restore(&url, &args.from, args.replace)
                .await
                .map_err(refusal)?;
            output::emit(format, &done, || {
                fields(&[
                    ("database", done.database.display().to_string()),
                    ("backup", done.backup.display().to_string()),
                    ("bytes", done.bytes.to_string()),
                    ("schema_version", done.schema_version.to_string()),
                    ("replaced", done.replaced.to_string()),
                ])
            });
            if !done.pending_migrations.is_empty() {
                eprintln!(
                    "The backup predates this orch: orch serve applies {} pending migrations \
                     when it starts.",
                    done.pending_migrations.len()
                );
            }
        }
        DbCommand::Check(args) => {
            let url = args.database.url()?;
            let report = offline::check(&url, args.quick).await.map_err(refusal)?;
            output::emit(format, &report, || {
                let mut table = output::table(&["check", "ok", "detail"]);
                for check in &report.checks {
                    table.add_row(vec![
                        check.name.to_string(),
                        if check.ok { "ok" } else { "FAILED" }.to_string(),
                        check.detail.clone(),
                    ]);
                }
                table
            });
            if !report.ok {
                anyhow::bail!("the {} database failed its check", report.backend);
            }
        }
        DbCommand::Copy(args) => {
            let done = offline::copy(&args.from, &args.to).await.map_err(refusal)?;
            output::emit(format, &done, || {
                let mut table = output::table(&["table", "rows", "checksum"]);
                for copied in &done.tables {
                    table.add_row(vec![
                        copied.table.clone(),
                        copied.rows.to_string(),
                        copied.checksum.clone(),
                    ]);
                }
                table
            });
            let rows: u64 = done.tables.iter().map(|t| t.rows).sum();
            eprintln!(
                "Copied {rows} rows of {} tables to {} in {} ms; every table verified.",
                done.tables.len(),
                done.target,
                done.millis
            );
            if !done.migrated_after.is_empty() {
                eprintln!(
                    "The source was at migration {}; migrations {:?} were then applied to the \
                     target (the source file is unchanged).",
                    done.schema_version, done.migrated_after
                );
            }
        }
    }
    Ok(())
}

/// Refusals exit 5, like the API's conflicts; the rest exit 1.
fn refusal(error: OfflineError) -> anyhow::Error {
    match error {
        OfflineError::Refused(message) => output::conflict(message),
        other => anyhow::Error::new(other),
    }
}
