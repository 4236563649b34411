//! `orch fleet workers|containers [--live]` (admin): what the workers run.

use crate::cli::{GlobalOpts, PageArgs};
use crate::config;
use crate::output::{self, opt, table};
use clap::{Args, Subcommand};
use orchestrator_client::api::fleet::{Container, ContainerFilter, ContainerState};
use uuid::Uuid;

#[derive(Debug, Subcommand)]
pub enum FleetCommand {
    /// Every worker with its status, agents, held tasks, running containers
    /// and environments.
    Workers,
    /// Containers as last reported (--live: only online workers' fresh
    /// reports).
    Containers(ContainersArgs),
}

#[derive(Debug, Args)]
pub struct ContainersArgs {
    /// Only containers of online workers reported within 2 heartbeat intervals.
    #[arg(long)]
    pub live: bool,
    /// Only containers of this worker (id).
    #[arg(long)]
    pub worker_id: Option<Uuid>,
    /// created, running, paused, restarting, exited or dead.
    #[arg(long)]
    pub state: Option<ContainerState>,
    /// Only the container running this task (id).
    #[arg(long)]
    pub task_id: Option<Uuid>,
    #[command(flatten)]
    pub page: PageArgs,
}

fn containers_table(containers: &[Container]) -> comfy_table::Table {
    let mut t = table(&[
        "id", "worker", "state", "image", "task", "started", "reported",
    ]);
    for c in containers {
        t.add_row(vec![
            c.id.clone(),
            format!("{} ({})", c.worker_name, c.worker_status),
            c.state.as_str().to_owned(),
            c.image.clone(),
            opt(&c.task_id),
            c.started_at.to_string(),
            c.reported_at.to_string(),
        ]);
    }
    t
}

pub async fn run(global: &GlobalOpts, command: FleetCommand) -> anyhow::Result<()> {
    let client = config::client(global)?;
    let fleet = client.fleet();
    let format = global.format();
    match command {
        FleetCommand::Workers => {
            let workers = fleet.workers().await?;
            output::emit(format, &workers, || {
                let mut t = table(&[
                    "worker_id",
                    "name",
                    "status",
                    "last heartbeat",
                    "agents (task)",
                    "running",
                    "environments",
                ]);
                for w in &workers {
                    let agents: Vec<String> = w
                        .agents
                        .iter()
                        .map(|a| match a.current_task_id {
                            Some(task) => format!("{} ({task})", a.name),
                            None => a.name.clone(),
                        })
                        .collect();
                    let envs: Vec<&str> = w.environments.iter().map(|e| e.name.as_str()).collect();
                    t.add_row(vec![
                        w.worker_id.to_string(),
                        w.name.clone(),
                        w.status.clone(),
                        w.last_heartbeat_at.to_string(),
                        agents.join(", "),
                        w.running_containers.to_string(),
                        envs.join(", "),
                    ]);
                }
                t
            });
        }
        FleetCommand::Containers(args) if args.live => {
            let live = fleet.live_containers().await?;
            output::emit(format, &live, || containers_table(&live));
        }
        FleetCommand::Containers(args) => {
            let filter = ContainerFilter {
                worker_id: args.worker_id,
                state: args.state,
                task_id: args.task_id,
            };
            let page = args.page.fetch(|p| fleet.containers(&filter, p)).await?;
            output::emit(format, &page, || containers_table(&page.items));
        }
    }
    Ok(())
}
