//! `orch events list|tail`: the entity-event layer.

use crate::cli::{GlobalOpts, OutputFormat};
use crate::commands::resolve;
use crate::config;
use crate::output::{self, opt, table};
use clap::{Args, Subcommand};
use futures_util::StreamExt;
use orchestrator_client::Client;
use orchestrator_client::api::{Event, EventFilter};
use uuid::Uuid;

#[derive(Debug, Subcommand)]
pub enum EventsCommand {
    /// Events oldest first, after an id.
    List(ListArgs),
    /// Print events as they happen (replaying after `--after` first).
    Tail(TailArgs),
}

#[derive(Debug, Clone, Args)]
pub struct EventFilterArgs {
    /// Event type, e.g. task.state_changed.
    #[arg(long = "type")]
    pub event_type: Option<String>,
    /// Only events about this kind of entity: task, workflow, work_item, worker, agent, ...
    #[arg(long)]
    pub entity_type: Option<String>,
    /// Only events about this entity (id; with --entity-type task,
    /// workflow, agent or workspace also what names one of those).
    #[arg(long)]
    pub entity_id: Option<String>,
    /// Only events of this workflow (id, id prefix, short id or name).
    #[arg(long = "workflow")]
    pub workflow: Option<String>,
    /// Only events of this workspace (id, id prefix, slug or name).
    #[arg(long = "workspace")]
    pub workspace: Option<String>,
    /// Only events after this id.
    #[arg(long)]
    pub after: Option<i64>,
}

impl EventFilterArgs {
    /// The filter, with what names the entity, workflow and workspace
    /// resolved to ids.
    async fn filter(&self, client: &Client, limit: Option<u32>) -> anyhow::Result<EventFilter> {
        Ok(EventFilter {
            event_type: self.event_type.clone(),
            entity_type: self.entity_type.clone(),
            entity_id: self.entity(client).await?,
            workflow_id: resolve::workflow_opt(client, self.workflow.as_deref()).await?,
            workspace_id: resolve::workspace_opt(client, self.workspace.as_deref()).await?,
            after: self.after,
            limit,
        })
    }

    /// The entity's id: resolved as its type's commands resolve it, or a
    /// whole id for the other types.
    async fn entity(&self, client: &Client) -> anyhow::Result<Option<Uuid>> {
        let Some(text) = self.entity_id.as_deref() else {
            return Ok(None);
        };
        let id = match self.entity_type.as_deref() {
            Some("task") => resolve::task(client, text).await?,
            Some("workflow") => resolve::workflow(client, text).await?,
            Some("agent") => resolve::agent(client, text).await?,
            Some("workspace") => resolve::workspace(client, text).await?,
            _ => Uuid::parse_str(text).map_err(|_| {
                anyhow::anyhow!(
                    "--entity-id `{text}` is not an id (give --entity-type task, workflow, \
                     agent or workspace to name one by id prefix, short id or name)"
                )
            })?,
        };
        Ok(Some(id))
    }
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub filter: EventFilterArgs,
    /// At most 500.
    #[arg(long, default_value_t = 50)]
    pub limit: u32,
}

#[derive(Debug, Args)]
pub struct TailArgs {
    #[command(flatten)]
    pub filter: EventFilterArgs,
}

pub async fn run(global: &GlobalOpts, command: EventsCommand) -> anyhow::Result<()> {
    let client = config::client(global)?;
    match command {
        EventsCommand::List(args) => {
            let page = client
                .events()
                .list(&args.filter.filter(&client, Some(args.limit)).await?)
                .await?;
            output::emit(global.format(), &page, || {
                let mut t = table(&["id", "created", "type", "entity", "entity_id", "workflow"]);
                for event in &page.items {
                    t.add_row(row(event));
                }
                t
            });
            if global.format() == OutputFormat::Table
                && page.has_more
                && let Some(after) = &page.next_after
            {
                eprintln!("more: --after {after}");
            }
        }
        EventsCommand::Tail(args) => {
            let mut stream = client
                .events()
                .stream(&args.filter.filter(&client, None).await?);
            while let Some(event) = stream.next().await {
                let event = event?;
                output::emit_line(global.format(), &event, || {
                    format!(
                        "{} #{} {} {} {} {}",
                        event.created_at,
                        event.id,
                        event.event_type,
                        event.entity_type,
                        event.entity_id,
                        event.data
                    )
                });
            }
        }
    }
    Ok(())
}

fn row(event: &Event) -> Vec<String> {
    vec![
        event.id.to_string(),
        event.created_at.to_string(),
        event.event_type.clone(),
        event.entity_type.clone(),
        event.entity_id.to_string(),
        opt(&event.workflow_id),
    ]
}
