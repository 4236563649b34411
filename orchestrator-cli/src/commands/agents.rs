//! `orch agents register|list|get|heartbeat` and `orch workers register|list|get|connect|signal`.

use crate::cli::{GlobalOpts, PageArgs};
use crate::config;
use crate::output::{self, fields, opt, table};
use clap::{Args, Subcommand};
use orchestrator_client::api::{
    Agent, ExecutionMode, RegisterAgent, RegisterWorker, ServerMessage, SignalKind, SignalWorker,
    WorkerAgentSpec, WorkerMessage,
};
use uuid::Uuid;

#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// Register an agent (prints its key once, unless --no-api-key).
    Register(RegisterArgs),
    /// List agents, newest first.
    List(PageArgs),
    /// Show one agent.
    Get(IdArg),
    /// Send a heartbeat for an agent.
    Heartbeat(IdArg),
}

#[derive(Debug, Args)]
pub struct IdArg {
    /// The agent's or worker's id.
    pub id: Uuid,
}

#[derive(Debug, Args)]
pub struct RegisterArgs {
    /// The agent's name, as operators see it.
    #[arg(long)]
    pub name: String,
    /// A routing tag (repeatable), e.g. `role:dev`.
    #[arg(long = "tag")]
    pub tags: Vec<String>,
    /// specialist, orchestrator or hybrid.
    #[arg(long, default_value = "specialist")]
    pub execution_mode: String,
    /// Seconds between the heartbeats the agent promises (5 to 3600, default 60); silent for
    /// twice that, it is marked inactive.
    #[arg(long)]
    pub heartbeat_interval_seconds: Option<i64>,
    /// Register without an agent key (by default one bound to the new agent
    /// is issued and printed once).
    #[arg(long)]
    pub no_api_key: bool,
    /// Accepted for older scripts: issuing a key is the default.
    #[arg(long, hide = true, conflicts_with = "no_api_key")]
    pub issue_api_key: bool,
}

pub(crate) fn mode(text: &str) -> anyhow::Result<ExecutionMode> {
    ExecutionMode::parse(text)
        .ok_or_else(|| anyhow::anyhow!("execution mode must be specialist, orchestrator or hybrid"))
}

fn agent_fields(agent: &Agent) -> comfy_table::Table {
    let mut rows = vec![
        ("id", agent.id.to_string()),
        ("name", agent.name.clone()),
        ("status", agent.status.clone()),
        ("execution_mode", agent.execution_mode.as_str().to_owned()),
        ("routing_tags", agent.routing_tags.join(", ")),
        ("worker_id", opt(&agent.worker_id)),
        ("current_task_id", opt(&agent.current_task_id)),
        (
            "heartbeat_interval_seconds",
            agent.heartbeat_interval_seconds.to_string(),
        ),
        ("last_heartbeat_at", agent.last_heartbeat_at.to_string()),
    ];
    if let Some(key) = &agent.api_key {
        rows.push(("api_key", key.clone()));
    }
    fields(&rows)
}

pub async fn run(global: &GlobalOpts, command: AgentsCommand) -> anyhow::Result<()> {
    let client = config::client(global)?;
    match command {
        AgentsCommand::Register(args) => {
            let agent = client
                .agents()
                .register(&RegisterAgent {
                    name: args.name,
                    routing_tags: Some(args.tags),
                    execution_mode: Some(mode(&args.execution_mode)?),
                    heartbeat_interval_seconds: args.heartbeat_interval_seconds,
                    issue_api_key: Some(!args.no_api_key),
                    ..Default::default()
                })
                .await?;
            output::emit(global.format(), &agent, || agent_fields(&agent));
        }
        AgentsCommand::List(args) => {
            let list = client.agents();
            let page = args.fetch(|p| list.list(p)).await?;
            output::emit(global.format(), &page, || {
                let mut t = table(&["id", "name", "status", "mode", "tags", "last heartbeat"]);
                for a in &page.items {
                    t.add_row(vec![
                        a.id.to_string(),
                        a.name.clone(),
                        a.status.clone(),
                        a.execution_mode.as_str().to_owned(),
                        a.routing_tags.join(", "),
                        a.last_heartbeat_at.to_string(),
                    ]);
                }
                t
            });
        }
        AgentsCommand::Get(args) => {
            let agent = client.agents().get(args.id).await?;
            output::emit(global.format(), &agent, || agent_fields(&agent));
        }
        AgentsCommand::Heartbeat(args) => {
            let ack = client.agents().heartbeat(args.id).await?;
            output::emit(global.format(), &ack, || {
                fields(&[("ack", ack.ack.to_string()), ("status", ack.status.clone())])
            });
        }
    }
    Ok(())
}

#[derive(Debug, Subcommand)]
pub enum WorkersCommand {
    /// Register a worker (needs a worker key) with its agents; keys print once.
    Register(WorkerRegisterArgs),
    /// List workers, newest first.
    List(PageArgs),
    /// Show one worker.
    Get(IdArg),
    /// Deregister an offline worker: revoke its key and its agents' keys
    /// and retire its agents (admin; refused while it is online).
    #[command(after_help = "Example:\n  orch workers delete 2e4f… --yes")]
    Delete(IdArg),
    /// Open the worker channel (with a worker key): print every message as a
    /// JSON line and acknowledge assignments and signals.
    Connect(WorkerConnectArgs),
    /// Send a signal to a worker's open channels (admin).
    Signal(WorkerSignalArgs),
    /// Send a worker heartbeat (`POST /workers/:id/heartbeat`, worker key).
    #[command(after_help = "Example:\n  orch workers heartbeat 2e4f… --status online")]
    Heartbeat(WorkerHeartbeatArgs),
    /// Take the next task for a worker (`POST /workers/:id/next`); prints
    /// nothing and exits 0 when there is none.
    #[command(after_help = "Example:\n  orch workers next 2e4f… --agent 9a1e… -o json")]
    Next(WorkerNextArgs),
    /// Claim up to --limit tasks at once, one per agent of the worker that
    /// holds none (`POST /workers/:id/claim-batch`); prints an empty list
    /// when there is nothing to claim.
    #[command(
        name = "claim-batch",
        after_help = "Example:\n  orch workers claim-batch 2e4f… --limit 8 --start --wait 10 -o json"
    )]
    ClaimBatch(WorkerClaimBatchArgs),
}

#[derive(Debug, Args)]
pub struct WorkerClaimBatchArgs {
    /// The worker's id.
    pub id: Uuid,
    /// The most tasks to claim (1 to 256).
    #[arg(long, default_value_t = 1)]
    pub limit: i64,
    /// Start the claimed tasks too (in_progress, both state events written).
    #[arg(long)]
    pub start: bool,
    /// Only tasks of this workflow.
    #[arg(long)]
    pub workflow: Option<Uuid>,
    /// Only tasks of this execution environment.
    #[arg(long)]
    pub environment: Option<Uuid>,
    /// Include the execution packet.
    #[arg(long)]
    pub include_context: bool,
    /// When nothing is claimable, wait up to this many seconds (0 to 30)
    /// for a task (a long poll).
    #[arg(long)]
    pub wait: Option<i64>,
}

#[derive(Debug, Args)]
pub struct WorkerHeartbeatArgs {
    /// The worker's id.
    pub id: Uuid,
    /// online (the default), busy, idle or draining.
    #[arg(long)]
    pub status: Option<String>,
    /// The task the worker runs now.
    #[arg(long)]
    pub current_task: Option<Uuid>,
    /// JSON metrics.
    #[arg(long)]
    pub metrics: Option<String>,
}

#[derive(Debug, Args)]
pub struct WorkerNextArgs {
    /// The worker's id.
    pub id: Uuid,
    /// Which of the worker's agents takes it.
    #[arg(long)]
    pub agent: Option<Uuid>,
    /// Only tasks of this workflow.
    #[arg(long)]
    pub workflow: Option<Uuid>,
    /// Only tasks of this execution environment.
    #[arg(long)]
    pub environment: Option<Uuid>,
    /// Include the execution packet.
    #[arg(long)]
    pub include_context: bool,
    /// When nothing is claimable, wait up to this many seconds (0 to 30)
    /// for a task (a long poll).
    #[arg(long)]
    pub wait: Option<i64>,
}

#[derive(Debug, Args)]
pub struct WorkerConnectArgs {
    /// The worker (optional: the key names it; checked when given).
    pub id: Option<Uuid>,
    /// Assigned tasks carry their context packet.
    #[arg(long)]
    pub include_context: bool,
    /// Exit after this many assigned tasks.
    #[arg(long)]
    pub exit_after: Option<u64>,
}

#[derive(Debug, Args)]
pub struct WorkerSignalArgs {
    /// The worker's id.
    pub id: Uuid,
    /// Ask the worker to drain (finish held tasks, take no new ones).
    #[arg(
        long,
        conflicts_with = "cancel_task",
        required_unless_present = "cancel_task"
    )]
    pub drain: bool,
    /// Ask the worker to stop working on this task.
    #[arg(long)]
    pub cancel_task: Option<Uuid>,
}

#[derive(Debug, Args)]
pub struct WorkerRegisterArgs {
    /// The worker's name, as operators see it.
    #[arg(long)]
    pub name: String,
    /// A routing tag of the worker, inherited by its agents (repeatable), e.g. `role:dev`.
    #[arg(long = "tag")]
    pub tags: Vec<String>,
    /// An agent to create, as `name` or `name:mode` (repeatable).
    #[arg(long = "agent")]
    pub agents: Vec<String>,
    /// Seconds between the heartbeats the worker promises (5 to 3600, default 30); silent for
    /// twice that, it is marked offline.
    #[arg(long)]
    pub heartbeat_interval_seconds: Option<i64>,
}

pub async fn run_workers(global: &GlobalOpts, command: WorkersCommand) -> anyhow::Result<()> {
    let client = config::client(global)?;
    match command {
        WorkersCommand::Register(args) => {
            let agents = args
                .agents
                .iter()
                .map(|spec| {
                    let (name, m) = spec.split_once(':').unwrap_or((spec, "specialist"));
                    Ok(WorkerAgentSpec {
                        name: name.to_owned(),
                        routing_tags: None,
                        execution_mode: Some(mode(m)?),
                    })
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            let worker = client
                .workers()
                .register(&RegisterWorker {
                    name: args.name,
                    routing_tags: Some(args.tags),
                    heartbeat_interval_seconds: args.heartbeat_interval_seconds,
                    agents: Some(agents),
                    ..Default::default()
                })
                .await?;
            output::emit(global.format(), &worker, || {
                let mut rows = vec![
                    ("worker_id", worker.worker_id.to_string()),
                    ("worker_api_key", worker.worker_api_key.clone()),
                    ("websocket_url", worker.websocket_url.clone()),
                ];
                for a in &worker.agents {
                    rows.push(("agent", format!("{} {} {}", a.id, a.name, a.api_key)));
                }
                fields(&rows)
            });
        }
        WorkersCommand::List(args) => {
            let list = client.workers();
            let page = args.fetch(|p| list.list(p)).await?;
            output::emit(global.format(), &page, || {
                let mut t = table(&["id", "name", "status", "agents", "last heartbeat"]);
                for w in &page.items {
                    t.add_row(vec![
                        w.worker_id.to_string(),
                        w.name.clone(),
                        w.status.clone(),
                        w.agents.len().to_string(),
                        w.last_heartbeat_at.to_string(),
                    ]);
                }
                t
            });
        }
        WorkersCommand::Heartbeat(args) => {
            let ack = client
                .workers()
                .heartbeat(
                    args.id,
                    &orchestrator_client::api::WorkerHeartbeat {
                        status: args.status,
                        current_task_id: args.current_task,
                        metrics: crate::commands::tasks::json_arg(args.metrics)?,
                        containers: None,
                    },
                )
                .await?;
            output::emit(global.format(), &ack, || {
                fields(&[
                    ("worker_id", ack.worker_id.to_string()),
                    ("ack", ack.ack.to_string()),
                    ("status", ack.status.clone()),
                ])
            });
        }
        WorkersCommand::Next(args) => {
            let next = client
                .workers()
                .next(
                    args.id,
                    &orchestrator_client::api::WorkerNext {
                        agent_id: args.agent,
                        workflow_id: args.workflow,
                        execution_environment_id: args.environment,
                        include_context: args.include_context,
                        wait_seconds: args.wait,
                    },
                )
                .await?;
            match next {
                Some(task) => output::emit(global.format(), &task, || {
                    fields(&[
                        ("id", task.id.to_string()),
                        ("title", task.title.clone()),
                        ("state", task.state.to_string()),
                    ])
                }),
                None => eprintln!("nothing to run"),
            }
        }
        WorkersCommand::ClaimBatch(args) => {
            let claimed = client
                .workers()
                .claim_batch(
                    args.id,
                    &orchestrator_client::api::ClaimBatch {
                        limit: args.limit,
                        start: args.start,
                        workflow_id: args.workflow,
                        include_context: args.include_context,
                        execution_environment_id: args.environment,
                        wait_seconds: args.wait,
                    },
                )
                .await?;
            output::emit(global.format(), &claimed, || {
                let mut t = table(&["agent", "task", "title", "state"]);
                for c in &claimed {
                    t.add_row(vec![
                        c.agent_id.to_string(),
                        c.task.id.to_string(),
                        c.task.title.clone(),
                        c.task.state.to_string(),
                    ]);
                }
                t
            });
        }
        WorkersCommand::Delete(args) => {
            output::confirm(
                global.yes,
                &format!("deregister worker {} and revoke its keys", args.id),
            )?;
            let deleted = client.workers().delete(args.id).await?;
            output::emit(global.format(), &deleted, || {
                fields(&[
                    ("id", deleted.id.to_string()),
                    ("deleted", deleted.deleted.to_string()),
                    ("keys_revoked", deleted.keys_revoked.to_string()),
                ])
            });
        }
        WorkersCommand::Get(args) => {
            let w = client.workers().get(args.id).await?;
            output::emit(global.format(), &w, || {
                fields(&[
                    ("worker_id", w.worker_id.to_string()),
                    ("name", w.name.clone()),
                    ("status", w.status.clone()),
                    ("runtime_type", w.runtime_type.clone()),
                    ("routing_tags", w.routing_tags.join(", ")),
                    (
                        "agents",
                        w.agents
                            .iter()
                            .map(Uuid::to_string)
                            .collect::<Vec<_>>()
                            .join(", "),
                    ),
                ])
            });
        }
        WorkersCommand::Connect(args) => connect(&client, args).await?,
        WorkersCommand::Signal(args) => {
            let request = match args.cancel_task {
                Some(task_id) => SignalWorker {
                    signal: SignalKind::CancelTask,
                    task_id: Some(task_id),
                },
                None => SignalWorker {
                    signal: SignalKind::Drain,
                    task_id: None,
                },
            };
            let sent = client.workers().signal(args.id, &request).await?;
            output::emit(global.format(), &sent, || {
                fields(&[
                    ("worker_id", sent.worker_id.to_string()),
                    ("signal", sent.signal.as_str().to_owned()),
                    ("task_id", opt(&sent.task_id)),
                    ("event_id", sent.event_id.to_string()),
                ])
            });
        }
    }
    Ok(())
}

/// `orch workers connect`: JSON lines on stdout until the server closes the
/// channel (or `--exit-after` assignments).
async fn connect(
    client: &orchestrator_client::Client,
    args: WorkerConnectArgs,
) -> anyhow::Result<()> {
    use futures_util::StreamExt;
    use std::io::Write;
    let mut channel = client.workers().connect(args.include_context).await?;
    let mut assigned = 0u64;
    while let Some(message) = channel.next().await {
        let message = message?;
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(&mut out, &message)?;
        writeln!(out)?;
        out.flush()?;
        drop(out);
        match &message {
            ServerMessage::ConnectionReady { worker_id, .. } => {
                if let Some(id) = args.id
                    && id != *worker_id
                {
                    anyhow::bail!("this key belongs to worker {worker_id}, not {id}");
                }
            }
            ServerMessage::TaskAssigned { task, .. } => {
                channel
                    .send(&WorkerMessage::TaskAssignmentAck { task_id: task.id })
                    .await?;
                assigned += 1;
                if args.exit_after.is_some_and(|n| assigned >= n) {
                    channel.close().await?;
                    return Ok(());
                }
            }
            ServerMessage::WorkerSignal { signal, task_id } => {
                channel
                    .send(&WorkerMessage::SignalAck {
                        signal: *signal,
                        task_id: *task_id,
                    })
                    .await?;
            }
            ServerMessage::Error { .. } | ServerMessage::TaskCancelRequested { .. } => {}
        }
    }
    Ok(())
}
