//! `orch tasks artifacts upload|list` and `orch workspaces artifacts
//! list|upload|download`: the files tasks produce, in and out of the
//! control plane, from and to files or the standard streams.
//!
//! The contract has no artifact delete route, so there is no delete command.

use crate::cli::{GlobalOpts, OutputFormat, PageArgs};
use crate::commands::resolve;
use crate::commands::workspaces::timestamp;
use crate::config;
use crate::output::{self, fields, opt, table};
use anyhow::{Context, bail};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use clap::{Args, Subcommand};
use orchestrator_client::Client;
use orchestrator_client::api::TaskArtifact;
use orchestrator_client::api::workspaces::{Artifact, ArtifactFilter, UploadArtifact};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use uuid::Uuid;

#[derive(Debug, Subcommand)]
pub enum TaskArtifactsCommand {
    /// Attach a file to a task (`POST /tasks/:id/artifacts`), as its holder
    /// or an admin; PATH `-` reads standard input (then give --name).
    #[command(
        after_help = "Examples:\n  orch tasks artifacts upload 3f6c… report.md\n  \
                            make test | orch tasks artifacts upload 3f6c… - --name test.log"
    )]
    Upload(TaskUploadArgs),
    /// The artifacts of a task (the task's workspace explorer, filtered by task).
    #[command(after_help = "Example:\n  orch tasks artifacts list 3f6c… --all -o json")]
    List(TaskListArgs),
}

#[derive(Debug, Subcommand)]
pub enum WorkspaceArtifactsCommand {
    /// Explore the artifacts tasks produced (`GET /workspaces/:id/artifacts`).
    #[command(
        after_help = "Example:\n  orch workspaces artifacts list 9a1e… --task-id 3f6c… --sort -size_bytes"
    )]
    List(WorkspaceListArgs),
    /// Upload an artifact (admin; `POST /workspaces/:id/artifacts`); PATH
    /// `-` reads standard input (then give --name).
    #[command(
        after_help = "Examples:\n  orch workspaces artifacts upload 9a1e… build.tar.gz --stage-name build\n  \
                      echo done | orch workspaces artifacts upload 9a1e… - --name status.txt"
    )]
    Upload(WorkspaceUploadArgs),
    /// Write an artifact's bytes (`GET /artifacts/:id/content`) to standard
    /// output, or to a file with -O (`-o` is the global output format).
    #[command(
        after_help = "Examples:\n  orch workspaces artifacts download 5b2d… -O report.md\n  \
                      orch workspaces artifacts download 5b2d… | less"
    )]
    Download(DownloadArgs),
}

/// What describes an uploaded file, whatever it is attached to.
#[derive(Debug, Args)]
pub struct FileArgs {
    /// The file to upload, or `-` for standard input.
    pub path: PathBuf,
    /// The artifact's file name (default: PATH's; required with `-`).
    #[arg(long)]
    pub name: Option<String>,
    /// The content type (guessed from the name otherwise).
    #[arg(long)]
    pub content_type: Option<String>,
    /// What the file is, for the explorer.
    #[arg(long)]
    pub description: Option<String>,
    /// A stable key (derived from the name otherwise).
    #[arg(long)]
    pub key: Option<String>,
    /// Makes the upload safe to retry: the server replays the first answer.
    #[arg(long)]
    pub request_id: Option<String>,
}

#[derive(Debug, Args)]
pub struct TaskUploadArgs {
    /// The task: its id, a unique id prefix or its short id (the last 8 hex
    /// digits, as listings show).
    pub id: String,
    #[command(flatten)]
    pub file: FileArgs,
    /// The agent acting (only for a credential not bound to an agent): id,
    /// id prefix, short id or name.
    #[arg(long)]
    pub agent: Option<String>,
}

#[derive(Debug, Args)]
pub struct TaskListArgs {
    /// The task: its id, a unique id prefix or its short id (the last 8 hex
    /// digits, as listings show).
    pub id: String,
    #[command(flatten)]
    pub page: PageArgs,
}

#[derive(Debug, Args)]
pub struct WorkspaceUploadArgs {
    /// The workspace: its id, a unique id prefix, its slug or its name.
    pub id: String,
    #[command(flatten)]
    pub file: FileArgs,
    /// Link the artifact to a workflow (id, id prefix, short id or name).
    #[arg(long)]
    pub workflow_id: Option<String>,
    /// Link it to a work item (id; with --workflow-id also its id prefix,
    /// short id or title).
    #[arg(long)]
    pub work_item_id: Option<String>,
    /// Link it to a task (id, id prefix or short id).
    #[arg(long)]
    pub task_id: Option<String>,
    /// The stage that produced it.
    #[arg(long)]
    pub stage_name: Option<String>,
    /// The role that produced it.
    #[arg(long)]
    pub role: Option<String>,
}

#[derive(Debug, Args)]
pub struct WorkspaceListArgs {
    /// The workspace: its id, a unique id prefix, its slug or its name.
    pub id: String,
    /// Case-insensitive part of the file name, key or description.
    #[arg(long)]
    pub q: Option<String>,
    /// Only artifacts of this workflow (id, id prefix, short id or name).
    #[arg(long)]
    pub workflow_id: Option<String>,
    /// Only artifacts of this work item (id; with --workflow-id also its id
    /// prefix, short id or title).
    #[arg(long)]
    pub work_item_id: Option<String>,
    /// Only artifacts of this task (id, id prefix or short id).
    #[arg(long)]
    pub task_id: Option<String>,
    /// Only artifacts produced in this stage.
    #[arg(long)]
    pub stage_name: Option<String>,
    /// Only artifacts produced by tasks of this role.
    #[arg(long)]
    pub role: Option<String>,
    /// Exact type, or a prefix such as `image/*`.
    #[arg(long)]
    pub content_type: Option<String>,
    /// text, image or download.
    #[arg(long)]
    pub preview_mode: Option<String>,
    /// RFC 3339 lower bound.
    #[arg(long)]
    pub created_from: Option<String>,
    /// RFC 3339 upper bound.
    #[arg(long)]
    pub created_to: Option<String>,
    /// created_at, file_name or size_bytes; a leading - for descending.
    #[arg(long, allow_hyphen_values = true)]
    pub sort: Option<String>,
    #[command(flatten)]
    pub page: PageArgs,
}

#[derive(Debug, Args)]
pub struct DownloadArgs {
    /// The artifact.
    pub artifact_id: Uuid,
    /// Write to this file instead of standard output (`-` is standard output).
    #[arg(short = 'O', long = "out")]
    pub out: Option<PathBuf>,
}

/// A file's bytes and name, read from PATH or standard input.
struct Upload {
    file_name: String,
    content_base64: String,
}

impl FileArgs {
    fn read(&self) -> anyhow::Result<Upload> {
        let (bytes, default_name) = if self.path.as_os_str() == "-" {
            let mut bytes = Vec::new();
            std::io::stdin()
                .lock()
                .read_to_end(&mut bytes)
                .context("cannot read standard input")?;
            (bytes, None)
        } else {
            let bytes = std::fs::read(&self.path)
                .with_context(|| format!("cannot read {}", self.path.display()))?;
            let name = self
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
            (bytes, name)
        };
        let Some(file_name) = self.name.clone().or(default_name) else {
            bail!("give the artifact's name with --name when reading standard input");
        };
        super::upload::check(&[(self.path.as_path(), bytes.len())])?;
        Ok(Upload {
            file_name,
            content_base64: STANDARD.encode(bytes),
        })
    }
}

/// The workflow, work item and task an artifact is linked to or filtered
/// by, resolved from what was typed.
struct Links {
    workflow_id: Option<Uuid>,
    work_item_id: Option<Uuid>,
    task_id: Option<Uuid>,
}

impl Links {
    async fn resolve(
        client: &Client,
        workflow: &Option<String>,
        work_item: &Option<String>,
        task: &Option<String>,
    ) -> anyhow::Result<Self> {
        let workflow_id = resolve::workflow_opt(client, workflow.as_deref()).await?;
        Ok(Self {
            workflow_id,
            work_item_id: resolve::work_item_opt(client, workflow_id, work_item.as_deref()).await?,
            task_id: resolve::task_opt(client, task.as_deref()).await?,
        })
    }
}

pub async fn run_task(global: &GlobalOpts, command: TaskArtifactsCommand) -> anyhow::Result<()> {
    let client = config::client(global)?;
    let format = global.format();
    match command {
        TaskArtifactsCommand::Upload(args) => {
            let upload = args.file.read()?;
            let task_id = resolve::task(&client, &args.id).await?;
            let request = TaskArtifact {
                file_name: upload.file_name,
                content_base64: upload.content_base64,
                content_type: args.file.content_type,
                description: args.file.description,
                key: args.file.key,
                agent_id: resolve::agent_opt(&client, args.agent.as_deref()).await?,
                request_id: args.file.request_id,
            };
            show(
                format,
                &client.tasks().add_artifact(task_id, &request).await?,
            );
        }
        TaskArtifactsCommand::List(args) => {
            let task_id = resolve::task(&client, &args.id).await?;
            let task = client.tasks().get(task_id).await?;
            let Some(workspace_id) = task.workspace_id else {
                bail!("task {task_id} has no workspace: artifacts are listed per workspace");
            };
            let filter = ArtifactFilter {
                task_id: Some(task_id),
                ..Default::default()
            };
            let workspaces = client.workspaces();
            let page = args
                .page
                .fetch(|p| workspaces.artifacts(workspace_id, &filter, p))
                .await?;
            output::emit(format, &page, || list_table(&page.items));
        }
    }
    Ok(())
}

pub async fn run_workspace(
    global: &GlobalOpts,
    command: WorkspaceArtifactsCommand,
) -> anyhow::Result<()> {
    let client = config::client(global)?;
    let workspaces = client.workspaces();
    let format = global.format();
    match command {
        WorkspaceArtifactsCommand::List(args) => {
            let workspace_id = resolve::workspace(&client, &args.id).await?;
            let links = Links::resolve(
                &client,
                &args.workflow_id,
                &args.work_item_id,
                &args.task_id,
            )
            .await?;
            let filter = ArtifactFilter {
                q: args.q,
                workflow_id: links.workflow_id,
                work_item_id: links.work_item_id,
                task_id: links.task_id,
                stage_name: args.stage_name,
                role: args.role,
                content_type: args.content_type,
                preview_mode: args.preview_mode,
                created_from: timestamp("created-from", args.created_from)?,
                created_to: timestamp("created-to", args.created_to)?,
                sort: args.sort,
            };
            let page = args
                .page
                .fetch(|p| workspaces.artifacts(workspace_id, &filter, p))
                .await?;
            output::emit(format, &page, || list_table(&page.items));
        }
        WorkspaceArtifactsCommand::Upload(args) => {
            let upload = args.file.read()?;
            let workspace_id = resolve::workspace(&client, &args.id).await?;
            let links = Links::resolve(
                &client,
                &args.workflow_id,
                &args.work_item_id,
                &args.task_id,
            )
            .await?;
            let request = UploadArtifact {
                file_name: upload.file_name,
                content_base64: upload.content_base64,
                content_type: args.file.content_type,
                description: args.file.description,
                key: args.file.key,
                workflow_id: links.workflow_id,
                work_item_id: links.work_item_id,
                task_id: links.task_id,
                stage_name: args.stage_name,
                role: args.role,
                request_id: args.file.request_id,
            };
            show(
                format,
                &workspaces.upload_artifact(workspace_id, &request).await?,
            );
        }
        WorkspaceArtifactsCommand::Download(args) => {
            let downloaded = workspaces.download_artifact(args.artifact_id).await?;
            match args.out.filter(|p| p.as_os_str() != "-") {
                None => write_stdout(&downloaded.bytes)?,
                Some(out) => {
                    std::fs::write(&out, &downloaded.bytes)
                        .with_context(|| format!("cannot write {}", out.display()))?;
                    saved(format, &out, downloaded.bytes.len(), downloaded.etag);
                }
            }
        }
    }
    Ok(())
}

/// The raw bytes on standard output; a closed pipe ends quietly.
fn write_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("cannot write to standard output")
        }
        _ => Ok(()),
    }
}

/// Says where a download went: a line on stderr, or JSON on stdout.
fn saved(format: OutputFormat, out: &Path, size: usize, etag: Option<String>) {
    if format == OutputFormat::Table {
        eprintln!("saved {size} bytes to {}", out.display());
    } else {
        output::emit(
            format,
            &serde_json::json!({ "path": out, "size_bytes": size, "etag": etag }),
            || table(&[]),
        );
    }
}

fn list_table(items: &[Artifact]) -> comfy_table::Table {
    let mut t = table(&[
        "id", "file", "type", "size", "stage", "role", "task", "created",
    ]);
    for a in items {
        t.add_row(vec![
            a.id.to_string(),
            a.file_name.clone(),
            a.content_type.clone(),
            a.size_bytes.to_string(),
            opt(&a.stage_name),
            opt(&a.role),
            opt(&a.task_id),
            a.created_at.to_string(),
        ]);
    }
    t
}

fn show(format: OutputFormat, a: &Artifact) {
    output::emit(format, a, || {
        fields(&[
            ("id", a.id.to_string()),
            ("file", a.file_name.clone()),
            ("key", a.key.clone()),
            ("type", a.content_type.clone()),
            ("size", a.size_bytes.to_string()),
            ("workspace", opt(&a.workspace_id)),
            ("task", opt(&a.task_id)),
            ("stage", opt(&a.stage_name)),
            ("sha256", a.checksum.clone()),
            ("download", a.download_url.clone()),
        ])
    });
}
