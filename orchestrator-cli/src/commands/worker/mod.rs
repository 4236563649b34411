//! `orch worker run`: the worker that ships with orch. It registers a worker
//! (or reuses one), opens the worker channel through the SDK and runs a
//! command for every task the server assigns (see `task.rs`), until a
//! `drain` signal or Ctrl-C; then it takes no new task, lets the running
//! ones finish and exits. When the channel drops (a server restart) it
//! reconnects with exponential backoff; running tasks go on meanwhile.

mod batch;
mod lease;
mod task;

use crate::cli::GlobalOpts;
use crate::config;
use anyhow::{Context, bail};
use clap::{Args, Subcommand, ValueEnum};
use futures_util::StreamExt;
use orchestrator_client::Client;
use orchestrator_client::api::fleet::{ContainerReport, ContainerState};
use orchestrator_client::api::{
    ExecutionMode, RegisterWorker, ServerMessage, SignalKind, WorkerAgentSpec, WorkerMessage,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use task::{Running, TaskRun};
use tokio::task::JoinSet;
use uuid::Uuid;

#[derive(Debug, Subcommand)]
pub enum WorkerCommand {
    /// Register a worker and run COMMAND for every task it is assigned:
    /// the task as JSON on stdin; ORCH_TASK_ID, ORCH_WORKFLOW_ID, ORCH_URL
    /// and ORCH_TASK_TOKEN (a credential for this task's routes only) in the
    /// environment, plus ORCH_API_KEY (the agent's key) for orchestrator
    /// tasks, which plan the workflow. Exit 0 completes the task with the
    /// last stdout line (JSON, else {"text": line}); any other exit fails it.
    ///
    /// Run again under the same --name, it takes over the offline worker of
    /// that name (its agents, with fresh keys) instead of registering
    /// another.
    #[command(
        after_help = "Examples:\n  orch worker run --name laptop --tag role:dev -- examples/worker_task.sh\n  orch worker run --name laptop --concurrency 4 -- python3 agent.py --fast"
    )]
    Run(RunArgs),
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The worker's name. Run again under the same name, the worker takes
    /// over the offline worker of that name (its agents, with new keys).
    #[arg(long, required_unless_present = "worker_id")]
    pub name: Option<String>,
    /// A routing tag of the worker's agents, e.g. role:dev (repeatable).
    #[arg(long = "tag")]
    pub tags: Vec<String>,
    /// Tasks run at once (one agent each).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub concurrency: u32,
    /// Take tasks on the batched protocol instead of the worker channel:
    /// long polls of `claim-batch` for every free agent at once (claimed and
    /// started in one request), completions that end together sent in one
    /// `complete-batch`, heartbeats over HTTP. Takes no worker signals.
    #[arg(long)]
    pub batch: bool,
    /// What the agents take: `hybrid` (the default) also takes the
    /// orchestrator tasks that plan a workflow, `specialist` only stage
    /// work, `orchestrator` only planning.
    #[arg(long, value_enum, default_value_t = Mode::Hybrid)]
    pub mode: Mode,
    /// Run COMMAND inside this execution environment's image (id or name)
    /// through docker or podman. The worker declares the environment (routing
    /// tag `env:<id>`), so it also claims the tasks that need it.
    #[arg(long = "env")]
    pub environment: Option<String>,
    /// Reuse a registered worker instead of registering one (with
    /// --worker-key).
    #[arg(long, requires = "worker_key")]
    pub worker_id: Option<Uuid>,
    /// The worker key of --worker-id.
    #[arg(long, env = "ORCH_WORKER_KEY", hide_env_values = true)]
    pub worker_key: Option<String>,
    /// The command and its arguments (after `--`).
    #[arg(last = true, required = true, num_args = 1..)]
    pub command: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    Specialist,
    Orchestrator,
    Hybrid,
}

impl From<Mode> for ExecutionMode {
    fn from(mode: Mode) -> Self {
        match mode {
            Mode::Specialist => ExecutionMode::Specialist,
            Mode::Orchestrator => ExecutionMode::Orchestrator,
            Mode::Hybrid => ExecutionMode::Hybrid,
        }
    }
}

pub async fn run(global: &GlobalOpts, command: WorkerCommand) -> anyhow::Result<()> {
    match command {
        WorkerCommand::Run(args) => run_worker(global, args).await,
    }
}

/// What every task run shares.
pub(crate) struct Shared {
    pub worker: Client,
    pub worker_id: Uuid,
    pub url: String,
    pub command: Vec<String>,
    /// The credential a task's command gets, per agent (the agent's key when
    /// the worker was registered here, else the worker key).
    pub credentials: HashMap<Uuid, String>,
    pub worker_key: String,
    pub container: Option<task::ContainerRun>,
    pub running: Mutex<HashMap<Uuid, Running>>,
    /// Woken when a task starts or ends, for a heartbeat right away.
    pub changed: tokio::sync::Notify,
    /// With `--batch`: where a finished task leaves its completion, sent
    /// with the others that finish together ([`batch`]).
    pub completions: Option<batch::Completions>,
}

async fn register(
    admin: &Client,
    args: &RunArgs,
    environment: Option<Uuid>,
) -> anyhow::Result<(Uuid, String, HashMap<Uuid, String>)> {
    let name = args.name.clone().unwrap_or_default();
    let mut tags = args.tags.clone();
    if let Some(id) = environment {
        tags.push(format!("env:{id}"));
    }
    let agents = (1..=args.concurrency)
        .map(|i| WorkerAgentSpec {
            name: format!("{name}-{i}"),
            routing_tags: Some(tags.clone()),
            execution_mode: Some(args.mode.into()),
        })
        .collect();
    let registered = admin
        .workers()
        .register(&RegisterWorker {
            name: name.clone(),
            runtime_type: Some("orch-worker".into()),
            connection_mode: Some(if args.batch { "polling" } else { "websocket" }.into()),
            routing_tags: Some(tags.clone()),
            agents: Some(agents),
            take_over_offline: Some(true),
            ..Default::default()
        })
        .await
        .context("cannot register the worker")?;
    let credentials = registered
        .agents
        .iter()
        .map(|a| (a.id, a.api_key.clone()))
        .collect();
    let how = if registered.taken_over {
        "took over its offline registration"
    } else {
        "registered"
    };
    eprintln!(
        "worker {name} {how} as {} with {} agent(s)",
        registered.worker_id,
        registered.agents.len()
    );
    Ok((registered.worker_id, registered.worker_api_key, credentials))
}

async fn run_worker(global: &GlobalOpts, args: RunArgs) -> anyhow::Result<()> {
    let admin = config::client(global)?;
    let url = admin.base_url().to_owned();
    let container = match &args.environment {
        Some(wanted) => Some(task::ContainerRun::resolve(&admin, wanted).await?),
        None => None,
    };
    let (worker_id, worker_key, credentials) = match (&args.worker_id, &args.worker_key) {
        (Some(id), Some(key)) => (*id, key.clone(), HashMap::new()),
        (Some(_), None) => bail!("--worker-id needs --worker-key (or ORCH_WORKER_KEY)"),
        _ => register(&admin, &args, container.as_ref().map(|c| c.environment_id)).await?,
    };
    let (completions, queue) = match args.batch {
        true => {
            let (sender, queue) = tokio::sync::mpsc::unbounded_channel();
            (Some(sender), Some(queue))
        }
        false => (None, None),
    };
    let shared = Arc::new(Shared {
        worker: Client::new(&url)?.with_api_key(&worker_key),
        worker_id,
        url,
        command: args.command,
        credentials,
        worker_key,
        container,
        running: Mutex::new(HashMap::new()),
        changed: tokio::sync::Notify::new(),
        completions,
    });
    if let Some(queue) = queue {
        batch::spawn_completer(shared.clone(), queue);
        batch::run(shared, args.concurrency as usize).await?;
        eprintln!("worker {worker_id} stopped");
        return Ok(());
    }
    let mut tasks: JoinSet<()> = JoinSet::new();
    let stop = tokio::signal::ctrl_c();
    tokio::pin!(stop);
    let mut stopping = false;
    let mut backoff = Duration::from_millis(250);
    while !stopping {
        let mut channel = match shared.worker.workers().connect(false).await {
            Ok(channel) => channel,
            Err(e) => {
                if matches!(e.status(), Some(401 | 403)) {
                    bail!("the worker channel refused the worker key: {e}");
                }
                eprintln!("cannot reach the server ({e}); retrying in {backoff:?}");
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    _ = &mut stop => stopping = true,
                }
                backoff = (backoff * 2).min(Duration::from_secs(10));
                continue;
            }
        };
        backoff = Duration::from_millis(250);
        let mut heartbeat = tokio::time::interval(Duration::from_secs(30));
        loop {
            tokio::select! {
                frame = channel.next() => match frame {
                    None | Some(Err(_)) => {
                        eprintln!("the worker channel closed; reconnecting");
                        break;
                    }
                    Some(Ok(message)) => {
                        if let ServerMessage::ConnectionReady { heartbeat_interval_seconds, .. } = &message {
                            let every = Duration::from_secs((*heartbeat_interval_seconds).clamp(1, 3600) as u64);
                            heartbeat = tokio::time::interval(every);
                        }
                        let (reply, drain) = handle(&shared, &mut tasks, message);
                        if let Some(reply) = reply {
                            let _ = channel.send(&reply).await;
                        }
                        if drain {
                            eprintln!("drain: finishing running tasks, taking no new ones");
                            stopping = true;
                            break;
                        }
                    }
                },
                _ = heartbeat.tick() => {
                    let _ = channel.send(&heartbeat_message(&shared)).await;
                }
                _ = shared.changed.notified() => {
                    let _ = channel.send(&heartbeat_message(&shared)).await;
                }
                _ = &mut stop => {
                    eprintln!("interrupted: finishing running tasks, taking no new ones");
                    stopping = true;
                    break;
                }
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            }
        }
        if stopping {
            // Closing the channel is what stops the server assigning.
            let _ = channel.close().await;
        }
    }
    while tasks.join_next().await.is_some() {}
    eprintln!("worker {worker_id} stopped");
    Ok(())
}

/// Acts on one frame; answers the frame to send back and whether to drain.
fn handle(
    shared: &Arc<Shared>,
    tasks: &mut JoinSet<()>,
    message: ServerMessage,
) -> (Option<WorkerMessage>, bool) {
    match message {
        ServerMessage::TaskAssigned { agent_id, task } => {
            let task_id = task.id;
            let run = TaskRun::new(shared.clone(), agent_id, *task);
            tasks.spawn(run.execute());
            (Some(WorkerMessage::TaskAssignmentAck { task_id }), false)
        }
        ServerMessage::WorkerSignal { signal, task_id } => {
            if let (SignalKind::CancelTask, Some(id)) = (signal, task_id)
                && let Some(running) = shared.running.lock().expect("lock").get_mut(&id)
            {
                running.cancel();
            }
            (
                Some(WorkerMessage::SignalAck { signal, task_id }),
                signal == SignalKind::Drain,
            )
        }
        ServerMessage::TaskCancelRequested { task_id, .. } => {
            // Run control §4: stop the command; the task ends cancelled
            // when its failure is reported.
            if let Some(running) = shared.running.lock().expect("lock").get_mut(&task_id) {
                running.cancel();
            }
            (None, false)
        }
        ServerMessage::Error { message } => {
            eprintln!("server: {message}");
            (None, false)
        }
        ServerMessage::ConnectionReady { .. } => (None, false),
    }
}

/// `worker.heartbeat` with the processes (or containers) running tasks.
fn heartbeat_message(shared: &Shared) -> WorkerMessage {
    let running = shared.running.lock().expect("lock");
    let image = shared
        .container
        .as_ref()
        .map_or_else(|| "host".to_owned(), |c| c.image.clone());
    let containers = running
        .iter()
        .map(|(task_id, r)| ContainerReport {
            id: r.process_id.clone(),
            name: r.title.clone(),
            image: image.clone(),
            state: ContainerState::Running,
            task_id: Some(*task_id),
            started_at: r.started_at,
            cpu_percent: None,
            memory_bytes: None,
        })
        .collect();
    WorkerMessage::Heartbeat {
        status: Some(if running.is_empty() { "online" } else { "busy" }.into()),
        current_task_id: running.keys().next().copied(),
        metrics: None,
        containers: Some(containers),
    }
}
