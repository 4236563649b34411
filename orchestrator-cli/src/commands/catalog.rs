//! `orch catalog list|show|preview|import`.

use crate::cli::{GlobalOpts, OutputFormat};
use crate::config;
use crate::output::{self, fields, opt, table};
use anyhow::bail;
use clap::{Args, Subcommand};
use orchestrator_client::api::catalog::{
    CatalogArtifactType, ImportAction, ImportDecision, ImportRequest,
};

#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// List the community catalog's playbooks.
    List,
    /// Show one catalog playbook with its README.
    Show(IdArgs),
    /// Show what an import would bring and what it collides with.
    Preview(IdArgs),
    /// Import a catalog playbook with its specialists and skills.
    Import(ImportArgs),
    /// The tenant's specialists (`GET /specialists`).
    #[command(after_help = "Example:\n  orch catalog specialists --all --field slug")]
    Specialists(crate::cli::PageArgs),
    /// The tenant's skills (`GET /skills`).
    #[command(after_help = "Example:\n  orch catalog skills -o json")]
    Skills(crate::cli::PageArgs),
}

#[derive(Debug, Args)]
pub struct IdArgs {
    /// The catalog playbook's id (as `catalog list` shows it).
    pub id: String,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The catalog playbook's id (as `catalog list` shows it).
    pub id: String,
    /// Override the matching local record: `playbook:ID`, `specialist:ID`
    /// or `skill:ID` (repeatable). Everything else is created new.
    #[arg(long = "override", value_name = "TYPE:ID")]
    pub overrides: Vec<String>,
    /// Makes the call replay-safe: the same id again answers the first import instead of
    /// importing twice.
    #[arg(long)]
    pub request_id: Option<String>,
}

fn decision(text: &str) -> anyhow::Result<ImportDecision> {
    let Some((kind, id)) = text.split_once(':') else {
        bail!("`{text}`: expected TYPE:ID, e.g. playbook:feature-delivery");
    };
    let artifact_type = match kind {
        "playbook" => CatalogArtifactType::Playbook,
        "specialist" => CatalogArtifactType::Specialist,
        "skill" => CatalogArtifactType::Skill,
        other => bail!("`{other}`: the type is playbook, specialist or skill"),
    };
    Ok(ImportDecision {
        artifact_type,
        catalog_id: id.to_owned(),
        action: ImportAction::OverrideExisting,
    })
}

fn kind(t: CatalogArtifactType) -> &'static str {
    match t {
        CatalogArtifactType::Playbook => "playbook",
        CatalogArtifactType::Specialist => "specialist",
        CatalogArtifactType::Skill => "skill",
    }
}

pub async fn run(global: &GlobalOpts, command: CatalogCommand) -> anyhow::Result<()> {
    let client = config::client(global)?;
    let catalog = client.catalog();
    let format = global.format();
    match command {
        CatalogCommand::Specialists(args) => library(format, args, &catalog, true).await?,
        CatalogCommand::Skills(args) => library(format, args, &catalog, false).await?,
        CatalogCommand::List => {
            let entries = catalog.list().await?;
            output::emit(format, &entries, || {
                let mut t = table(&["id", "name", "category", "stability", "version", "summary"]);
                for e in &entries {
                    t.add_row(vec![
                        e.id.clone(),
                        e.name.clone(),
                        e.category.clone(),
                        e.stability.clone(),
                        e.version.clone(),
                        e.summary.clone(),
                    ]);
                }
                t
            });
        }
        CatalogCommand::Show(args) => {
            let detail = catalog.get(&args.id).await?;
            match format {
                OutputFormat::Json | OutputFormat::Yaml => {
                    output::emit(format, &detail, || table(&[]))
                }
                OutputFormat::Table => {
                    output::emit(format, &detail, || {
                        fields(&[
                            ("id", detail.entry.id.clone()),
                            ("name", detail.entry.name.clone()),
                            ("category", detail.entry.category.clone()),
                            ("version", detail.entry.version.clone()),
                            ("stages", detail.stages.join(", ")),
                            ("specialists", detail.specialist_ids.join(", ")),
                            ("skills", detail.skill_ids.join(", ")),
                        ])
                    });
                    output::print_out(&detail.readme_markdown);
                }
            }
        }
        CatalogCommand::Preview(args) => {
            let preview = catalog.preview(&args.id).await?;
            output::emit(format, &preview, || {
                let mut t = table(&["type", "catalog id", "local match", "allowed actions"]);
                for c in &preview.conflicts {
                    t.add_row(vec![
                        kind(c.artifact_type).to_owned(),
                        c.catalog_id.clone(),
                        opt(&c
                            .local_match
                            .as_ref()
                            .map(|m| format!("{} ({})", m.name, m.id))),
                        c.allowed_actions
                            .iter()
                            .map(|a| match a {
                                ImportAction::CreateNew => "create_new",
                                ImportAction::OverrideExisting => "override_existing",
                            })
                            .collect::<Vec<_>>()
                            .join(", "),
                    ]);
                }
                t
            });
        }
        CatalogCommand::Import(args) => {
            let decisions = args
                .overrides
                .iter()
                .map(|t| decision(t))
                .collect::<anyhow::Result<Vec<_>>>()?;
            let request = ImportRequest {
                decisions: (!decisions.is_empty()).then_some(decisions),
                request_id: args.request_id,
            };
            let result = catalog.import(&args.id, &request).await?;
            output::emit(format, &result, || {
                fields(&[
                    ("import_batch_id", result.import_batch_id.to_string()),
                    (
                        "playbook",
                        format!("{} ({})", result.playbook.name, result.playbook.id),
                    ),
                    ("version", result.playbook.version.to_string()),
                    ("specialists", result.imported_specialists.len().to_string()),
                    ("skills", result.imported_skills.len().to_string()),
                    ("source", result.provenance.source_repository.clone()),
                    ("catalog_version", result.provenance.catalog_version.clone()),
                ])
            });
        }
    }
    Ok(())
}

/// `orch catalog specialists|skills`.
async fn library(
    format: OutputFormat,
    args: crate::cli::PageArgs,
    catalog: &orchestrator_client::Catalog<'_>,
    specialists: bool,
) -> anyhow::Result<()> {
    let page = args
        .fetch(|p| async move {
            if specialists {
                catalog.specialists(p).await
            } else {
                catalog.skills(p).await
            }
        })
        .await?;
    output::emit(format, &page, || {
        let mut t = table(&["id", "slug", "name", "description"]);
        for item in &page.items {
            t.add_row(vec![
                item.id.to_string(),
                item.slug.clone(),
                item.name.clone(),
                item.description.clone(),
            ]);
        }
        t
    });
    Ok(())
}
