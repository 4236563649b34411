//! `orch workspaces list|get|create|update|memory|spec|files|artifacts|verify-git|timeline`.

use crate::cli::{GlobalOpts, OutputFormat, PageArgs};
use crate::commands::playbooks::read_document;
use crate::config;
use crate::output::{self, fields, opt, table};
use anyhow::Context;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use clap::{Args, Subcommand, ValueEnum};
use orchestrator_client::api::Timestamp;
use orchestrator_client::api::workspaces::{
    BatchUpload, CreateWorkspace, FileUpload, GitTokenMode, PatchWorkspace, PutWorkspaceSpec,
    VerifyGitAccess, Workspace, WorkspaceFile, WorkspaceFilter,
};
use std::path::PathBuf;
use uuid::Uuid;

#[derive(Debug, Subcommand)]
pub enum WorkspacesCommand {
    /// List workspaces, newest first.
    List(ListArgs),
    /// Show a workspace.
    Get(IdArgs),
    /// Create a workspace.
    Create(CreateArgs),
    /// Change a workspace (at least one option).
    Update(UpdateArgs),
    /// Set or delete a memory key.
    #[command(subcommand)]
    Memory(MemoryCommand),
    /// Read or replace the workspace spec.
    #[command(subcommand)]
    Spec(SpecCommand),
    /// Upload, list, download and delete workspace files.
    #[command(subcommand)]
    Files(FilesCommand),
    /// List, upload and download the artifacts tasks produced.
    #[command(subcommand)]
    Artifacts(crate::commands::artifacts::WorkspaceArtifactsCommand),
    /// Check the repository URL and branch, and keep, replace or clear the token.
    VerifyGit(VerifyArgs),
    /// Show the workspace's events, newest first.
    Timeline(TimelineArgs),
}

#[derive(Debug, Args)]
pub struct IdArgs {
    /// The workspace: its id, a unique id prefix, its slug or its name.
    pub id: String,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Search name, slug and description.
    #[arg(long)]
    pub q: Option<String>,
    /// Only active (true) or inactive (false) workspaces.
    #[arg(long)]
    pub active: Option<bool>,
    #[command(flatten)]
    pub page: PageArgs,
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The workspace's name.
    #[arg(long)]
    pub name: String,
    /// Its short unique name (default: made from the name); commands accept it instead of the
    /// id.
    #[arg(long)]
    pub slug: Option<String>,
    /// What the workspace holds.
    #[arg(long)]
    pub description: Option<String>,
    /// The git repository agents work on (https URL).
    #[arg(long)]
    pub repository_url: Option<String>,
    /// The branch work starts from (default: main).
    #[arg(long)]
    pub default_branch: Option<String>,
    /// Settings as a JSON object.
    #[arg(long)]
    pub settings: Option<String>,
    /// Makes the call replay-safe: the same id again answers the first workspace instead of
    /// creating a second.
    #[arg(long)]
    pub request_id: Option<String>,
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The workspace: its id, a unique id prefix, its slug or its name.
    pub id: String,
    /// A new name.
    #[arg(long)]
    pub name: Option<String>,
    /// A new slug.
    #[arg(long)]
    pub slug: Option<String>,
    /// A new description.
    #[arg(long)]
    pub description: Option<String>,
    /// An empty value clears it.
    #[arg(long)]
    pub repository_url: Option<String>,
    /// A new default branch.
    #[arg(long)]
    pub default_branch: Option<String>,
    /// Settings as a JSON object.
    #[arg(long)]
    pub settings: Option<String>,
    /// false archives the workspace (no new workflows); true brings it back.
    #[arg(long)]
    pub active: Option<bool>,
}

#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Set KEY to VALUE (JSON when it parses as JSON, else a string).
    Set {
        /// The workspace: its id, a unique id prefix, its slug or its name.
        id: String,
        /// The memory key.
        key: String,
        /// The value: JSON when it parses as JSON, else a string.
        value: String,
    },
    /// Remove KEY.
    Delete {
        /// The workspace: its id, a unique id prefix, its slug or its name.
        id: String,
        /// The memory key to remove.
        key: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum SpecCommand {
    /// Print the spec (the latest, or --version N).
    #[command(disable_version_flag = true)]
    Get {
        /// The workspace: its id, a unique id prefix, its slug or its name.
        id: String,
        /// This version instead of the latest.
        #[arg(long)]
        version: Option<i32>,
    },
    /// Store a new spec version from a YAML or JSON file
    /// (resources, documents, tools, config, instructions).
    Put {
        /// The workspace: its id, a unique id prefix, its slug or its name.
        id: String,
        /// The YAML or JSON file holding the spec.
        #[arg(short = 'f', long = "file")]
        file: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
pub enum FilesCommand {
    /// List a workspace's files.
    List {
        /// The workspace: its id, a unique id prefix, its slug or its name.
        id: String,
        #[command(flatten)]
        page: PageArgs,
    },
    /// Upload files (one request for up to 10).
    Upload {
        /// The workspace: its id, a unique id prefix, its slug or its name.
        id: String,
        /// The files to upload (up to 10 MiB each, 16 MiB in all).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Content type for every file (guessed from each name otherwise).
        #[arg(long)]
        content_type: Option<String>,
    },
    /// Save a file's bytes to PATH (`-O`/`--out`: `-o` is the global
    /// output format).
    Download {
        /// The workspace: its id, a unique id prefix, its slug or its name.
        id: String,
        /// The file's id (as `files list` shows it).
        file_id: Uuid,
        /// Where to write the bytes.
        #[arg(short = 'O', long = "out")]
        out: PathBuf,
    },
    /// Delete a file and its bytes.
    Delete {
        /// The workspace: its id, a unique id prefix, its slug or its name.
        id: String,
        /// The file's id (as `files list` shows it).
        file_id: Uuid,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum TokenMode {
    /// Keep the stored token.
    Preserve,
    /// Use --token instead.
    Replace,
    /// Check without a token.
    Clear,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The workspace: its id, a unique id prefix, its slug or its name.
    pub id: String,
    /// The repository to check access to (https URL).
    #[arg(long)]
    pub repository_url: String,
    /// The branch that must exist (default: the workspace's).
    #[arg(long)]
    pub default_branch: Option<String>,
    /// What to do with the stored git token.
    #[arg(long, value_enum, default_value_t = TokenMode::Preserve)]
    pub token_mode: TokenMode,
    /// The token for `--token-mode replace` (prefer the environment variable).
    #[arg(long, env = "ORCH_GIT_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

#[derive(Debug, Args)]
pub struct TimelineArgs {
    /// The workspace: its id, a unique id prefix, its slug or its name.
    pub id: String,
    #[command(flatten)]
    pub page: PageArgs,
}

fn json_object(flag: &str, text: Option<String>) -> anyhow::Result<Option<serde_json::Value>> {
    text.map(|t| serde_json::from_str(&t).with_context(|| format!("--{flag} must be JSON")))
        .transpose()
}

pub(crate) fn timestamp(flag: &str, text: Option<String>) -> anyhow::Result<Option<Timestamp>> {
    text.map(|t| {
        serde_json::from_value(serde_json::Value::String(t))
            .with_context(|| format!("--{flag} must be an RFC 3339 time"))
    })
    .transpose()
}

pub async fn run(global: &GlobalOpts, command: WorkspacesCommand) -> anyhow::Result<()> {
    let client = config::client(global)?;
    let workspaces = client.workspaces();
    let format = global.format();
    match command {
        WorkspacesCommand::List(args) => {
            let filter = WorkspaceFilter {
                q: args.q,
                is_active: args.active,
            };
            let page = args.page.fetch(|p| workspaces.list(&filter, p)).await?;
            output::emit(format, &page, || {
                let mut t = table(&[
                    "id",
                    "name",
                    "slug",
                    "active",
                    "workflows",
                    "open",
                    "repository",
                ]);
                for w in &page.items {
                    t.add_row(vec![
                        w.id.to_string(),
                        w.name.clone(),
                        w.slug.clone(),
                        w.is_active.to_string(),
                        w.summary.workflow_count.to_string(),
                        w.summary.open_workflow_count.to_string(),
                        opt(&w.repository_url),
                    ]);
                }
                t
            });
        }
        WorkspacesCommand::Get(args) => show(
            format,
            &workspaces
                .get(super::resolve::workspace(&client, &args.id).await?)
                .await?,
        ),
        WorkspacesCommand::Create(args) => {
            let request = CreateWorkspace {
                name: args.name,
                slug: args.slug,
                description: args.description,
                repository_url: args.repository_url,
                default_branch: args.default_branch,
                settings: json_object("settings", args.settings)?,
                memory: None,
                git_token: None,
                request_id: args.request_id,
            };
            show(format, &workspaces.create(&request).await?);
        }
        WorkspacesCommand::Update(args) => {
            let request = PatchWorkspace {
                name: args.name,
                slug: args.slug,
                description: args.description,
                repository_url: args.repository_url,
                default_branch: args.default_branch,
                settings: json_object("settings", args.settings)?,
                is_active: args.active,
                request_id: None,
            };
            show(
                format,
                &workspaces
                    .patch(
                        super::resolve::workspace(&client, &args.id).await?,
                        &request,
                    )
                    .await?,
            );
        }
        WorkspacesCommand::Memory(MemoryCommand::Set { id, key, value }) => {
            let id = super::resolve::workspace(&client, &id).await?;
            let value = serde_json::from_str(&value).unwrap_or(serde_json::Value::String(value));
            show(format, &workspaces.set_memory(id, &key, value).await?);
        }
        WorkspacesCommand::Memory(MemoryCommand::Delete { id, key }) => {
            let id = super::resolve::workspace(&client, &id).await?;
            show(format, &workspaces.delete_memory(id, &key).await?);
        }
        WorkspacesCommand::Spec(SpecCommand::Get { id, version }) => {
            let id = super::resolve::workspace(&client, &id).await?;
            let spec = workspaces.spec(id, version).await?;
            // The spec is nested JSON: shown as JSON in either format.
            output::emit(OutputFormat::Json, &spec, || table(&[]));
        }
        WorkspacesCommand::Spec(SpecCommand::Put { id, file }) => {
            let id = super::resolve::workspace(&client, &id).await?;
            let request: PutWorkspaceSpec = read_document(&file)?;
            let spec = workspaces.put_spec(id, &request).await?;
            output::emit(format, &spec, || {
                fields(&[
                    ("workspace_id", spec.workspace_id.to_string()),
                    ("version", spec.version.to_string()),
                ])
            });
        }
        WorkspacesCommand::Files(FilesCommand::List { id, page }) => {
            let id = super::resolve::workspace(&client, &id).await?;
            let page = page.fetch(|p| workspaces.files(id, p)).await?;
            output::emit(format, &page, || files_table(&page.items));
        }
        WorkspacesCommand::Files(FilesCommand::Upload {
            id,
            paths,
            content_type,
        }) => {
            let id = super::resolve::workspace(&client, &id).await?;
            let mut sizes = Vec::with_capacity(paths.len());
            for path in &paths {
                let meta = std::fs::metadata(path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                sizes.push((path.as_path(), meta.len() as usize));
            }
            super::upload::check(&sizes)?;
            let mut items = Vec::with_capacity(paths.len());
            for path in &paths {
                let bytes = std::fs::read(path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                let file_name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .with_context(|| format!("{} has no file name", path.display()))?;
                items.push(FileUpload {
                    file_name,
                    content_base64: STANDARD.encode(bytes),
                    content_type: content_type.clone(),
                    ..Default::default()
                });
            }
            let files = if items.len() == 1 {
                vec![workspaces.upload_file(id, &items[0]).await?]
            } else {
                workspaces
                    .upload_files(
                        id,
                        &BatchUpload {
                            files: items,
                            request_id: None,
                        },
                    )
                    .await?
            };
            output::emit(format, &files, || files_table(&files));
        }
        WorkspacesCommand::Files(FilesCommand::Download { id, file_id, out }) => {
            let id = super::resolve::workspace(&client, &id).await?;
            let downloaded = workspaces.download_file(id, file_id).await?;
            std::fs::write(&out, &downloaded.bytes)
                .with_context(|| format!("cannot write {}", out.display()))?;
            if format == OutputFormat::Table {
                eprintln!(
                    "saved {} bytes to {}",
                    downloaded.bytes.len(),
                    out.display()
                );
            } else {
                output::print_out(&serde_json::json!({"path": out, "size_bytes": downloaded.bytes.len(), "etag": downloaded.etag}).to_string());
            }
        }
        WorkspacesCommand::Files(FilesCommand::Delete { id, file_id }) => {
            let id = super::resolve::workspace(&client, &id).await?;
            let file = workspaces.delete_file(id, file_id).await?;
            output::emit(format, &file, || files_table(std::slice::from_ref(&file)));
        }
        WorkspacesCommand::Artifacts(command) => {
            return crate::commands::artifacts::run_workspace(global, command).await;
        }
        WorkspacesCommand::VerifyGit(args) => {
            let mode = match args.token_mode {
                TokenMode::Preserve => GitTokenMode::Preserve,
                TokenMode::Replace => GitTokenMode::Replace,
                TokenMode::Clear => GitTokenMode::Clear,
            };
            let request = VerifyGitAccess {
                repository_url: args.repository_url,
                default_branch: args.default_branch,
                git_token_mode: mode,
                git_token: if matches!(mode, GitTokenMode::Replace) {
                    args.token
                } else {
                    None
                },
                request_id: None,
            };
            let packet = workspaces
                .verify_git_access(
                    super::resolve::workspace(&client, &args.id).await?,
                    &request,
                )
                .await?;
            output::emit(format, &packet, || {
                fields(&[
                    ("reachable", packet.reachable.to_string()),
                    ("repository_url", packet.repository_url.clone()),
                    ("default_branch", opt(&packet.default_branch)),
                    ("branch_found", packet.branch_found.to_string()),
                    ("remote_head", opt(&packet.remote_head)),
                    ("branches", packet.branch_count.to_string()),
                    ("used_token", packet.used_token.to_string()),
                ])
            });
        }
        WorkspacesCommand::Timeline(args) => {
            let id = super::resolve::workspace(&client, &args.id).await?;
            let page = args.page.fetch(|p| workspaces.timeline(id, p)).await?;
            output::emit(format, &page, || {
                let mut t = table(&["id", "type", "entity", "actor", "at"]);
                for e in &page.items {
                    t.add_row(vec![
                        e.id.to_string(),
                        e.event_type.clone(),
                        format!("{} {}", e.entity_type, e.entity_id),
                        opt(&e.actor_type),
                        e.created_at.to_string(),
                    ]);
                }
                t
            });
        }
    }
    Ok(())
}

fn files_table(files: &[WorkspaceFile]) -> comfy_table::Table {
    let mut t = table(&["id", "key", "file", "type", "size", "sha256"]);
    for f in files {
        t.add_row(vec![
            f.id.to_string(),
            f.key.clone(),
            f.file_name.clone(),
            f.content_type.clone(),
            f.size_bytes.to_string(),
            f.checksum.chars().take(12).collect(),
        ]);
    }
    t
}

fn show(format: OutputFormat, w: &Workspace) {
    output::emit(format, w, || {
        fields(&[
            ("id", w.id.to_string()),
            ("name", w.name.clone()),
            ("slug", w.slug.clone()),
            ("description", w.description.clone()),
            ("active", w.is_active.to_string()),
            ("repository_url", opt(&w.repository_url)),
            ("default_branch", opt(&w.default_branch)),
            (
                "git_token",
                if w.git_token_configured {
                    "configured"
                } else {
                    "none"
                }
                .to_owned(),
            ),
            (
                "memory keys",
                w.memory.as_object().map_or(0, |m| m.len()).to_string(),
            ),
            ("settings", w.settings.to_string()),
            (
                "workflows",
                format!(
                    "{} ({} open)",
                    w.summary.workflow_count, w.summary.open_workflow_count
                ),
            ),
            ("updated", w.updated_at.to_string()),
        ])
    });
}
