//! `orch envs list|get|create|from-catalog|catalog|verify|support|update|delete`:
//! execution environments (admin).

use crate::cli::{GlobalOpts, OutputFormat, PageArgs};
use crate::config;
use crate::output::{self, fields, opt, table};
use clap::{Args, Subcommand};
use orchestrator_client::api::environments::{
    CompatibilityStatus, CreateExecutionEnvironment, CreateFromCatalog, EnvironmentFilter,
    ExecutionEnvironment, PatchExecutionEnvironment, PullPolicy, SupportStatus,
};
use uuid::Uuid;

#[derive(Debug, Subcommand)]
pub enum EnvsCommand {
    /// List execution environments, newest first.
    List(ListArgs),
    /// Show an environment.
    Get(IdArgs),
    /// Create an environment from an image.
    Create(CreateArgs),
    /// List the base environments of the catalog.
    Catalog,
    /// Create an environment from a catalog entry (the newest version unless
    /// --version).
    #[command(disable_version_flag = true)]
    FromCatalog(FromCatalogArgs),
    /// Change an environment (a new image or limits reset the verdict).
    Update(UpdateArgs),
    /// Probe the environment and store the verdict.
    Verify(IdArgs),
    /// Set the support posture: approved, blocked or none.
    Support(SupportArgs),
    /// Delete an environment no task names.
    Delete(IdArgs),
}

#[derive(Debug, Args)]
pub struct IdArgs {
    /// The environment's id.
    pub id: Uuid,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// unknown, compatible or incompatible.
    #[arg(long)]
    pub compatibility: Option<CompatibilityStatus>,
    /// approved, blocked or none.
    #[arg(long)]
    pub support: Option<String>,
    /// Search name, description and image.
    #[arg(long)]
    pub q: Option<String>,
    #[command(flatten)]
    pub page: PageArgs,
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The environment's name (workers and tasks may name it instead of its id).
    #[arg(long)]
    pub name: String,
    /// The container image tasks run in, e.g. `python:3.12-slim`.
    #[arg(long)]
    pub image: String,
    /// What the environment is for.
    #[arg(long)]
    pub description: Option<String>,
    /// CPUs (1, 0.5).
    #[arg(long)]
    pub cpu: Option<String>,
    /// Memory (512m, 2g, 2Gi).
    #[arg(long)]
    pub memory: Option<String>,
    /// if-not-present, always or never.
    #[arg(long)]
    pub pull_policy: Option<PullPolicy>,
    /// A command run after the container starts (repeatable).
    #[arg(long = "bootstrap")]
    pub bootstrap_commands: Vec<String>,
    /// A host or URL that must be reachable (repeatable).
    #[arg(long = "domain")]
    pub domains: Vec<String>,
    /// Notes for operators (why it exists, who looks after it).
    #[arg(long)]
    pub notes: Option<String>,
    /// Makes the call replay-safe: the same id again answers the first environment instead of
    /// creating a second.
    #[arg(long)]
    pub request_id: Option<String>,
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The environment's id.
    pub id: Uuid,
    /// A new name.
    #[arg(long)]
    pub name: Option<String>,
    /// A new container image (the environment must be verified again).
    #[arg(long)]
    pub image: Option<String>,
    /// A new description.
    #[arg(long)]
    pub description: Option<String>,
    /// CPUs (1, 0.5).
    #[arg(long)]
    pub cpu: Option<String>,
    /// Memory (512m, 2g, 2Gi).
    #[arg(long)]
    pub memory: Option<String>,
    /// if-not-present, always or never.
    #[arg(long)]
    pub pull_policy: Option<PullPolicy>,
    /// New notes for operators.
    #[arg(long)]
    pub notes: Option<String>,
}

#[derive(Debug, Args)]
pub struct FromCatalogArgs {
    /// The catalog key (debian-shell, python, node, rust, ...).
    pub key: String,
    /// The catalog entry's version (default: the newest).
    #[arg(long = "version")]
    pub catalog_version: Option<i64>,
    /// The new environment's name (default: the catalog entry's).
    #[arg(long)]
    pub name: Option<String>,
    /// The new environment's description (default: the catalog entry's).
    #[arg(long)]
    pub description: Option<String>,
}

#[derive(Debug, Args)]
pub struct SupportArgs {
    /// The environment's id.
    pub id: Uuid,
    /// approved, blocked or none (the full path keeps clap from reading
    /// the argument as optional).
    #[arg(value_parser = support_status)]
    pub status: std::option::Option<SupportStatus>,
}

/// `none` clears the posture.
fn support_status(text: &str) -> Result<Option<SupportStatus>, String> {
    match text {
        "none" => Ok(None),
        other => other.parse().map(Some),
    }
}

fn show(format: OutputFormat, env: &ExecutionEnvironment) {
    output::emit(format, env, || {
        fields(&[
            ("id", env.id.to_string()),
            ("name", env.name.clone()),
            ("image", env.image.clone()),
            ("source", env.source_kind.as_str().to_owned()),
            (
                "catalog",
                env.catalog_key
                    .as_ref()
                    .map(|k| format!("{k} v{}", opt(&env.catalog_version)))
                    .unwrap_or_default(),
            ),
            ("cpu / memory", format!("{} / {}", env.cpu, env.memory)),
            ("pull_policy", env.pull_policy.as_str().to_owned()),
            (
                "compatibility",
                env.compatibility_status.as_str().to_owned(),
            ),
            ("errors", env.compatibility_errors.join("; ")),
            (
                "support",
                env.support_status
                    .map(|s| s.as_str().to_owned())
                    .unwrap_or_default(),
            ),
            ("agent_hint", env.agent_hint.clone()),
        ])
    });
}

pub async fn run(global: &GlobalOpts, command: EnvsCommand) -> anyhow::Result<()> {
    let client = config::client(global)?;
    let envs = client.environments();
    let format = global.format();
    match command {
        EnvsCommand::List(args) => {
            let filter = EnvironmentFilter {
                compatibility_status: args.compatibility,
                support_status: args.support,
                q: args.q,
            };
            let page = args.page.fetch(|p| envs.list(&filter, p)).await?;
            output::emit(format, &page, || {
                let mut t = table(&["id", "name", "image", "compatibility", "support", "source"]);
                for e in &page.items {
                    t.add_row(vec![
                        e.id.to_string(),
                        e.name.clone(),
                        e.image.clone(),
                        e.compatibility_status.as_str().to_owned(),
                        e.support_status
                            .map(|s| s.as_str().to_owned())
                            .unwrap_or_default(),
                        e.source_kind.as_str().to_owned(),
                    ]);
                }
                t
            });
        }
        EnvsCommand::Get(args) => show(format, &envs.get(args.id).await?),
        EnvsCommand::Create(args) => {
            let request = CreateExecutionEnvironment {
                name: args.name,
                description: args.description,
                image: args.image,
                cpu: args.cpu,
                memory: args.memory,
                pull_policy: args.pull_policy,
                bootstrap_commands: Some(args.bootstrap_commands),
                bootstrap_required_domains: Some(args.domains),
                operator_notes: args.notes,
                request_id: args.request_id,
            };
            show(format, &envs.create(&request).await?);
        }
        EnvsCommand::Catalog => {
            let entries = envs.catalog().await?;
            output::emit(format, &entries, || {
                let mut t = table(&["key", "version", "name", "image", "tools"]);
                for e in &entries {
                    t.add_row(vec![
                        e.key.clone(),
                        e.version.to_string(),
                        e.name.clone(),
                        e.image.clone(),
                        e.tools.join(" "),
                    ]);
                }
                t
            });
        }
        EnvsCommand::FromCatalog(args) => {
            let request = CreateFromCatalog {
                catalog_key: args.key,
                catalog_version: args.catalog_version,
                name: args.name,
                description: args.description,
                request_id: None,
            };
            show(format, &envs.from_catalog(&request).await?);
        }
        EnvsCommand::Update(args) => {
            let request = PatchExecutionEnvironment {
                name: args.name,
                description: args.description,
                image: args.image,
                cpu: args.cpu,
                memory: args.memory,
                pull_policy: args.pull_policy,
                operator_notes: args.notes,
                ..Default::default()
            };
            show(format, &envs.patch(args.id, &request).await?);
        }
        EnvsCommand::Verify(args) => {
            let verdict = envs.verify(args.id).await?;
            output::emit(format, &verdict, || {
                fields(&[
                    (
                        "compatibility",
                        verdict.compatibility_status.as_str().to_owned(),
                    ),
                    ("errors", verdict.compatibility_errors.join("; ")),
                    (
                        "probe",
                        verdict.verified_metadata["probe"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned(),
                    ),
                    ("contract", verdict.verification_contract_version.clone()),
                ])
            });
        }
        EnvsCommand::Support(args) => show(format, &envs.set_support(args.id, args.status).await?),
        EnvsCommand::Delete(args) => show(format, &envs.delete(args.id).await?),
    }
    Ok(())
}
