//! `orch playbooks list|get|create|update|archive|delete|impact|revisions`.
//! Playbook files are YAML or JSON (by extension; anything but `.json` is
//! read as YAML, which also accepts JSON).

use crate::cli::{GlobalOpts, OutputFormat, PageArgs};
use crate::config;
use crate::output::{self, fields, opt, table};
use anyhow::Context;
use clap::{Args, Subcommand};
use orchestrator_client::api::playbooks::{
    CreatePlaybook, PatchPlaybook, Playbook, PlaybookSummary,
};
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};

#[derive(Debug, Subcommand)]
pub enum PlaybooksCommand {
    /// List playbooks (the active revision of each).
    List(PageArgs),
    /// Show a playbook's active revision with its definition.
    Get(IdArgs),
    /// Create a playbook from a YAML or JSON file (name, outcome, definition, ...).
    Create(FileArgs),
    /// Make a new revision from a file: PATCH by default, PUT with --replace.
    Update(UpdateArgs),
    /// Archive a playbook (or unarchive it with --undo).
    Archive(ArchiveArgs),
    /// Delete a playbook (refused while workflows reference it), or remove
    /// it with its workflows with --permanent.
    Delete(DeleteArgs),
    /// Show what deleting a playbook would affect.
    Impact(IdArgs),
    /// List every revision of a playbook, newest first.
    Revisions(RevisionsArgs),
}

#[derive(Debug, Args)]
pub struct IdArgs {
    /// The playbook: its id, a unique id prefix, its slug or its name.
    pub id: String,
}

#[derive(Debug, Args)]
pub struct FileArgs {
    /// YAML or JSON file.
    #[arg(short = 'f', long = "file")]
    pub file: PathBuf,
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The playbook: its id, a unique id prefix, its slug or its name.
    pub id: String,
    /// YAML or JSON file with the fields to change (all of them with --replace).
    #[arg(short = 'f', long = "file")]
    pub file: PathBuf,
    /// Replace the whole playbook (PUT) instead of patching fields.
    #[arg(long)]
    pub replace: bool,
}

#[derive(Debug, Args)]
pub struct ArchiveArgs {
    /// The playbook: its id, a unique id prefix, its slug or its name.
    pub id: String,
    /// Unarchive instead.
    #[arg(long)]
    pub undo: bool,
}

#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// The playbook: its id, a unique id prefix, its slug or its name.
    pub id: String,
    /// Remove the playbook and every workflow that references it.
    #[arg(long)]
    pub permanent: bool,
}

#[derive(Debug, Args)]
pub struct RevisionsArgs {
    /// The playbook: its id, a unique id prefix, its slug or its name.
    pub id: String,
    #[command(flatten)]
    pub page: PageArgs,
}

/// Reads a YAML or JSON file into `T` (strictly: unknown fields are refused).
pub fn read_document<T: DeserializeOwned>(path: &Path) -> anyhow::Result<T> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let value: serde_json::Value = if path.extension().is_some_and(|e| e == "json") {
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not valid JSON", path.display()))?
    } else {
        serde_norway::from_str(&text)
            .with_context(|| format!("{} is not valid YAML", path.display()))?
    };
    serde_json::from_value(value).with_context(|| format!("{} does not fit", path.display()))
}

pub async fn run(global: &GlobalOpts, command: PlaybooksCommand) -> anyhow::Result<()> {
    let client = config::client(global)?;
    let playbooks = client.playbooks();
    let format = global.format();
    match command {
        PlaybooksCommand::List(args) => {
            let page = args.fetch(|p| playbooks.list(p)).await?;
            output::emit(format, &page, || {
                let mut t = table(&["id", "name", "slug", "version", "active", "source"]);
                for p in &page.items {
                    t.add_row(summary_row(p));
                }
                t
            });
        }
        PlaybooksCommand::Get(args) => show(
            format,
            &playbooks
                .get(super::resolve::playbook(&client, &args.id).await?)
                .await?,
        ),
        PlaybooksCommand::Create(args) => {
            let request: CreatePlaybook = read_document(&args.file)?;
            show(format, &playbooks.create(&request).await?);
        }
        PlaybooksCommand::Update(args) => {
            let playbook = if args.replace {
                let request: CreatePlaybook = read_document(&args.file)?;
                playbooks
                    .replace(super::resolve::playbook(&client, &args.id).await?, &request)
                    .await?
            } else {
                let request: PatchPlaybook = read_document(&args.file)?;
                playbooks
                    .patch(super::resolve::playbook(&client, &args.id).await?, &request)
                    .await?
            };
            show(format, &playbook);
        }
        PlaybooksCommand::Archive(args) => show(
            format,
            &playbooks
                .archive(
                    super::resolve::playbook(&client, &args.id).await?,
                    !args.undo,
                )
                .await?,
        ),
        PlaybooksCommand::Delete(args) => {
            let deleted = if args.permanent {
                output::confirm(
                    global.yes,
                    &format!(
                        "permanently delete playbook {} with its workflows, tasks and events",
                        args.id
                    ),
                )?;
                playbooks
                    .delete_permanently(super::resolve::playbook(&client, &args.id).await?)
                    .await?
            } else {
                playbooks
                    .delete(super::resolve::playbook(&client, &args.id).await?)
                    .await?
            };
            output::emit(format, &deleted, || {
                fields(&[
                    ("id", deleted.id.to_string()),
                    ("deleted", deleted.deleted.to_string()),
                    ("revisions_deleted", deleted.revisions_deleted.to_string()),
                    ("workflows_deleted", deleted.workflows_deleted.to_string()),
                ])
            });
        }
        PlaybooksCommand::Impact(args) => {
            let impact = playbooks
                .delete_impact(super::resolve::playbook(&client, &args.id).await?)
                .await?;
            output::emit(format, &impact, || {
                fields(&[
                    ("playbook", impact.name.clone()),
                    ("revisions", impact.revisions.to_string()),
                    ("workflows", impact.workflows.total.to_string()),
                    ("active workflows", impact.workflows.active.to_string()),
                    ("can delete", impact.can_delete.to_string()),
                ])
            });
        }
        PlaybooksCommand::Revisions(args) => {
            let id = super::resolve::playbook(&client, &args.id).await?;
            let page = args.page.fetch(|p| playbooks.revisions(id, p)).await?;
            output::emit(format, &page, || {
                let mut t = table(&["id", "version", "active", "name", "created"]);
                for p in &page.items {
                    t.add_row(vec![
                        p.id.to_string(),
                        p.version.to_string(),
                        p.is_active.to_string(),
                        p.name.clone(),
                        p.updated_at.to_string(),
                    ]);
                }
                t
            });
        }
    }
    Ok(())
}

fn summary_row(p: &PlaybookSummary) -> Vec<String> {
    vec![
        p.family_id.to_string(),
        p.name.clone(),
        p.slug.clone(),
        p.version.to_string(),
        p.is_active.to_string(),
        p.provenance
            .as_ref()
            .and_then(|p| p.catalog_id.clone())
            .map_or_else(|| "local".to_owned(), |id| format!("catalog:{id}")),
    ]
}

fn show(format: OutputFormat, p: &Playbook) {
    output::emit(format, p, || {
        let stages = p.definition["stages"]
            .as_array()
            .map(|s| {
                s.iter()
                    .filter_map(|s| s["name"].as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        fields(&[
            ("id", p.id.to_string()),
            ("family_id", p.family_id.to_string()),
            ("name", p.name.clone()),
            ("slug", p.slug.clone()),
            ("version", p.version.to_string()),
            ("active", p.is_active.to_string()),
            ("archived", p.archived.to_string()),
            ("lifecycle", p.lifecycle.as_str().to_owned()),
            ("outcome", p.outcome.clone()),
            ("stages", stages),
            (
                "source",
                opt(&p.provenance.as_ref().map(|p| p.source_repository.clone())),
            ),
            ("updated", p.updated_at.to_string()),
        ])
    });
}
