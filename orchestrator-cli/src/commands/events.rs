//! `orch events list|tail`: the entity-event layer.

use crate::cli::{GlobalOpts, OutputFormat};
use crate::config;
use crate::output::{self, opt, table};
use clap::{Args, Subcommand};
use futures_util::StreamExt;
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
    /// Only events about this entity (id).
    #[arg(long)]
    pub entity_id: Option<Uuid>,
    /// Only events of this workflow (id).
    #[arg(long = "workflow")]
    pub workflow_id: Option<Uuid>,
    /// Only events of this workspace (id).
    #[arg(long = "workspace")]
    pub workspace_id: Option<Uuid>,
    /// Only events after this id.
    #[arg(long)]
    pub after: Option<i64>,
}

impl EventFilterArgs {
    fn filter(&self, limit: Option<u32>) -> EventFilter {
        EventFilter {
            event_type: self.event_type.clone(),
            entity_type: self.entity_type.clone(),
            entity_id: self.entity_id,
            workflow_id: self.workflow_id,
            workspace_id: self.workspace_id,
            after: self.after,
            limit,
        }
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
                .list(&args.filter.filter(Some(args.limit)))
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
            let mut stream = client.events().stream(&args.filter.filter(None));
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
