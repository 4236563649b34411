//! `orch a2a card|submit|get|watch`: A2A task ingress.

use crate::cli::GlobalOpts;
use crate::commands::tasks::json_arg;
use crate::config;
use crate::output::{self, fields, opt};
use clap::{Args, Subcommand};
use futures_util::StreamExt;
use orchestrator_client::api::{A2aTask, A2aTaskInput, SubmitA2aTask};
use uuid::Uuid;

#[derive(Debug, Subcommand)]
pub enum A2aCommand {
    /// Show the server's A2A agent card.
    Card,
    /// Submit a task the A2A way.
    Submit(Box<SubmitArgs>),
    /// Show a task's A2A view.
    Get(IdArg),
    /// Print a task's status changes until it ends.
    Watch(WatchArgs),
}

#[derive(Debug, Args)]
pub struct SubmitArgs {
    /// The task's title.
    #[arg(long)]
    pub title: String,
    /// The caller's own task id (kept as protocol-ingress metadata).
    #[arg(long = "external-id")]
    pub external_id: Option<String>,
    /// What to do, for the agent that claims it.
    #[arg(long)]
    pub description: Option<String>,
    /// The task type: analysis, code, assessment, test, docs, orchestration or custom.
    #[arg(long = "type")]
    pub task_type: Option<String>,
    /// Any word; values the platform does not know become normal.
    #[arg(long)]
    pub priority: Option<String>,
    /// Only an agent with the routing tag `role:<ROLE>` claims it.
    #[arg(long)]
    pub role: Option<String>,
    /// The workflow the task joins (id).
    #[arg(long)]
    pub workflow: Option<Uuid>,
    /// The workspace the task belongs to (id).
    #[arg(long)]
    pub workspace: Option<Uuid>,
    /// The task input as JSON.
    #[arg(long)]
    pub input: Option<String>,
    /// Extra protocol-ingress metadata as a JSON object.
    #[arg(long)]
    pub metadata: Option<String>,
    /// Makes the call replay-safe: the same id again answers the first task instead of
    /// submitting a second.
    #[arg(long)]
    pub request_id: Option<String>,
    /// At most the key's limit (default 1) of tasks with it are held at once.
    #[arg(long)]
    pub concurrency_key: Option<String>,
    /// A rate key (set with `orch limits rate set`): its claims are limited
    /// per window.
    #[arg(long)]
    pub rate_limit_key: Option<String>,
}

#[derive(Debug, Args)]
pub struct IdArg {
    /// The task's id.
    pub id: Uuid,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// The task's id.
    pub id: Uuid,
    /// Resume after this event id.
    #[arg(long)]
    pub after: Option<String>,
}

pub async fn run(global: &GlobalOpts, command: A2aCommand) -> anyhow::Result<()> {
    let client = config::client(global)?;
    match command {
        A2aCommand::Card => {
            let card = client.a2a().card().await?;
            output::emit(global.format(), &card, || {
                fields(&[
                    ("protocol", card.protocol.clone()),
                    ("protocol_version", card.protocol_version.clone()),
                    ("name", card.name.clone()),
                    ("authentication", card.authentication.kind.clone()),
                    ("submit_task", card.endpoints.submit_task.clone()),
                    ("get_task", card.endpoints.get_task.clone()),
                    ("stream_task", card.endpoints.stream_task.clone()),
                ])
            });
        }
        A2aCommand::Submit(args) => {
            let args = *args;
            let request = SubmitA2aTask {
                task: A2aTaskInput {
                    id: args.external_id,
                    title: args.title,
                    description: args.description,
                    task_type: args.task_type,
                    priority: args.priority,
                    workflow_id: args.workflow,
                    workspace_id: args.workspace,
                    role: args.role,
                    input: json_arg(args.input)?,
                    context: None,
                    metadata: json_arg(args.metadata)?,
                    concurrency_key: args.concurrency_key,
                    rate_limit_key: args.rate_limit_key,
                },
                request_id: args.request_id,
            };
            show(global, &client.a2a().submit(&request).await?);
        }
        A2aCommand::Get(args) => show(global, &client.a2a().get(args.id).await?),
        A2aCommand::Watch(args) => {
            let mut stream = client.a2a().events(args.id, args.after);
            while let Some(item) = stream.next().await {
                let item = item?;
                output::emit_line(global.format(), &item.event, || {
                    format!(
                        "{} #{} {}",
                        item.event.created_at,
                        item.id.as_deref().unwrap_or("-"),
                        item.event.status.as_str()
                    )
                });
            }
        }
    }
    Ok(())
}

fn show(global: &GlobalOpts, task: &A2aTask) {
    output::emit(global.format(), task, || {
        fields(&[
            ("id", task.id.to_string()),
            ("status", task.status.as_str().to_owned()),
            ("title", task.title.clone()),
            (
                "external_task_id",
                opt(&task.metadata["protocol_ingress"]["external_task_id"].as_str()),
            ),
            ("created_at", task.created_at.to_string()),
            ("updated_at", task.updated_at.to_string()),
        ])
    });
}
