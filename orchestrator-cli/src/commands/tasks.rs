//! `orch tasks list|get|create|claim|start|complete|fail|retry|skip|reassign|escalate|cancel`.

use crate::cli::{GlobalOpts, PageArgs};
use crate::commands::task_run_control::{self, CreateRunControl, HeartbeatArgs, RescheduleArgs};
use crate::config;
use crate::output::{self, fields, opt, table};
use clap::{Args, Subcommand};
use orchestrator_client::TaskOperation;
use orchestrator_client::api::{
    BulkActionKind, BulkTarget, ClaimTask, CompleteTask, CreateTask, FailTask, Priority, StartTask,
    Task, TaskAction, TaskError, TaskFilter, TaskKind, TaskState,
};
use uuid::Uuid;

#[derive(Debug, Subcommand)]
pub enum TasksCommand {
    /// List tasks, newest first.
    List(ListArgs),
    /// Show one task; with --watch, again each time it changes until it ends.
    #[command(
        after_help = "Examples:\n  orch tasks get 3f6c…\n  orch tasks get 3f6c… --watch --field state"
    )]
    Get(GetArgs),
    /// Why a task failed (its error and its command's last stderr lines),
    /// or why a pending one waits (no online agent with its tags).
    #[command(after_help = "Example:\n  orch tasks why 3f6c…")]
    Why(IdArg),
    /// Follow a held task's events live (`GET /tasks/:id/stream`).
    #[command(after_help = "Example:\n  orch tasks watch 3f6c… -o json")]
    Watch(WatchArgs),
    /// The execution packet of a task (`GET /tasks/:id/context`).
    #[command(after_help = "Example:\n  orch tasks context 3f6c… --agent 9a1e… -o yaml")]
    Context(ContextArgs),
    /// Branches and pull requests a task reported (`GET /tasks/:id/git`).
    #[command(after_help = "Example:\n  orch tasks git 3f6c… -o json")]
    Git(IdArg),
    /// Record a handoff for a task (`POST /tasks/:id/handoffs`).
    #[command(
        after_help = "Example:\n  orch tasks handoff 3f6c… --summary \"API done, docs left\""
    )]
    Handoff(HandoffArgs),
    /// Resolve claim handles into credential values (as the task's
    /// assignee; `POST /tasks/:id/claim-credentials`).
    #[command(
        name = "claim-credentials",
        after_help = "Example:\n  orch tasks claim-credentials 3f6c… --llm-api-key-handle claim_… -o json"
    )]
    ClaimCredentials(ClaimCredentialsArgs),
    /// Upload a task's artifacts, or list them.
    #[command(subcommand)]
    Artifacts(crate::commands::artifacts::TaskArtifactsCommand),
    /// The handoffs of a task, oldest first.
    #[command(after_help = "Example:\n  orch tasks handoffs 3f6c…")]
    Handoffs(IdArg),
    /// Send a completed task back for rework with feedback (admin).
    #[command(
        name = "request-changes",
        after_help = "Example:\n  orch tasks request-changes 3f6c… --feedback \"add tests\""
    )]
    RequestChanges(FeedbackArgs),
    /// Accept an output awaiting assessment (admin).
    #[command(
        name = "approve-output",
        after_help = "Example:\n  orch tasks approve-output 3f6c…"
    )]
    ApproveOutput(ReasonArgs),
    /// Resolve an escalation with instructions (admin).
    #[command(
        name = "resolve-escalation",
        after_help = "Example:\n  orch tasks resolve-escalation 3f6c… --instructions \"use the v2 API\""
    )]
    ResolveEscalation(FeedbackArgs),
    /// Create a pending task.
    Create(CreateArgs),
    /// Claim the next task for an agent (prints nothing and exits 0 when none).
    Claim(ClaimArgs),
    /// Start a claimed task (as its agent).
    Start(ActorArgs),
    /// Complete a task (as its agent).
    Complete(CompleteArgs),
    /// Fail a task (as its agent, or admin).
    Fail(FailArgs),
    /// Put a failed, cancelled or assessed task back to pending (admin).
    Retry(BulkReasonArgs),
    /// Complete a task without doing it (admin).
    Skip(ReasonArgs),
    /// Release a task to pending, optionally for one agent (admin).
    Reassign(ReassignArgs),
    /// Escalate a held task (admin).
    Escalate(ReasonArgs),
    /// Cancel a task, or every task a --filter matches (admin); a held task
    /// with a heartbeat timeout is asked to stop and ends cancelled when its
    /// holder stops.
    Cancel(BulkReasonArgs),
    /// Move a pending task's run_at, or that of every task a --filter
    /// matches (admin; tasks not pending are skipped).
    #[command(
        after_help = "Examples:\n  orch tasks reschedule 3f6c… --delay 600\n  \
                      orch tasks reschedule --filter type=code --run-at 2026-01-01T02:00:00Z"
    )]
    Reschedule(RescheduleArgs),
    /// Renew the holder's lease and report progress (as the holding agent).
    #[command(
        after_help = "Example:\n  orch tasks heartbeat 3f6c… --attempt 1 --progress '{\"pct\":40}'"
    )]
    Heartbeat(HeartbeatArgs),
}

#[derive(Debug, Args)]
pub struct IdArg {
    pub id: Uuid,
}

#[derive(Debug, Args)]
pub struct GetArgs {
    pub id: Uuid,
    /// Print again whenever the task changes, until it completes, fails or
    /// is cancelled (polls every --interval seconds).
    #[arg(long)]
    pub watch: bool,
    /// Seconds between polls with --watch.
    #[arg(long, default_value_t = 2, requires = "watch")]
    pub interval: u64,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    pub id: Uuid,
    /// Only events after this event id.
    #[arg(long)]
    pub after: Option<i64>,
}

#[derive(Debug, Args)]
pub struct HandoffArgs {
    pub id: Uuid,
    #[arg(long)]
    pub summary: String,
    /// JSON: what changed.
    #[arg(long)]
    pub changes: Option<String>,
    /// JSON: what is left.
    #[arg(long)]
    pub remaining: Option<String>,
    /// The agent handing off (when the key is not the agent's).
    #[arg(long)]
    pub agent: Option<Uuid>,
}

#[derive(Debug, Args)]
pub struct ClaimCredentialsArgs {
    pub id: Uuid,
    #[arg(long)]
    pub llm_api_key_handle: Option<String>,
    #[arg(long)]
    pub llm_extra_headers_handle: Option<String>,
    /// Repeatable.
    #[arg(long = "mcp-handle")]
    pub mcp_handles: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ContextArgs {
    pub id: Uuid,
    /// The packet as this agent sees it.
    #[arg(long)]
    pub agent: Option<Uuid>,
}

#[derive(Debug, Args)]
pub struct FeedbackArgs {
    pub id: Uuid,
    /// What to change (request-changes).
    #[arg(long)]
    pub feedback: Option<String>,
    /// How to go on (resolve-escalation).
    #[arg(long)]
    pub instructions: Option<String>,
    #[arg(long)]
    pub reason: Option<String>,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only tasks in this state.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(TaskState::ALL.map(TaskState::as_str)))]
    pub state: Option<String>,
    #[arg(long)]
    pub workflow: Option<Uuid>,
    #[arg(long)]
    pub agent: Option<Uuid>,
    #[command(flatten)]
    pub page: PageArgs,
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    #[arg(long)]
    pub title: String,
    #[arg(long = "type", default_value = "code")]
    pub task_type: String,
    #[arg(long)]
    pub description: Option<String>,
    /// critical, high, normal or low.
    #[arg(long)]
    pub priority: Option<String>,
    #[arg(long)]
    pub role: Option<String>,
    #[arg(long)]
    pub workflow: Option<Uuid>,
    #[arg(long)]
    pub work_item: Option<Uuid>,
    #[arg(long)]
    pub orchestrator: bool,
    /// The execution environment (id) the task runs in; only workers that
    /// declare it (routing tag `env:<id or name>`) claim the task.
    #[arg(long)]
    pub environment: Option<Uuid>,
    /// The task input as JSON.
    #[arg(long)]
    pub input: Option<String>,
    #[arg(long)]
    pub request_id: Option<String>,
    #[command(flatten)]
    pub run_control: CreateRunControl,
}

#[derive(Debug, Args)]
pub struct ClaimArgs {
    #[arg(long)]
    pub agent: Uuid,
    #[arg(long)]
    pub workflow: Option<Uuid>,
    #[arg(long)]
    pub include_context: bool,
    /// Only tasks of this execution environment (id).
    #[arg(long)]
    pub environment: Option<Uuid>,
}

#[derive(Debug, Args)]
pub struct ActorArgs {
    pub id: Uuid,
    /// The acting agent (only for keys not bound to an agent).
    #[arg(long)]
    pub agent: Option<Uuid>,
}

#[derive(Debug, Args)]
pub struct CompleteArgs {
    pub id: Uuid,
    #[arg(long)]
    pub agent: Option<Uuid>,
    /// The task's output as JSON (`--result '{"ok":true}'`).
    #[arg(long)]
    pub result: Option<String>,
    #[arg(long)]
    pub request_id: Option<String>,
}

#[derive(Debug, Args)]
pub struct FailArgs {
    pub id: Uuid,
    #[arg(long)]
    pub agent: Option<Uuid>,
    #[arg(long)]
    pub message: Option<String>,
    #[arg(long)]
    pub category: Option<String>,
}

/// One task by id, or every task matching `--filter` (a bulk action).
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  orch tasks cancel 3f6c…\n  orch tasks cancel --filter state=failed,workflow=9a1e… --dry-run\n  orch tasks retry --filter state=failed,type=code --yes"
)]
pub struct BulkReasonArgs {
    #[arg(required_unless_present = "filter", conflicts_with = "filter")]
    pub id: Option<Uuid>,
    #[arg(long)]
    pub reason: Option<String>,
    #[command(flatten)]
    pub bulk: crate::commands::bulk::BulkArgs,
}

#[derive(Debug, Args)]
pub struct ReasonArgs {
    pub id: Uuid,
    #[arg(long)]
    pub reason: Option<String>,
}

#[derive(Debug, Args)]
pub struct ReassignArgs {
    pub id: Uuid,
    #[arg(long)]
    pub reason: String,
    #[arg(long)]
    pub agent: Option<Uuid>,
}

pub(crate) fn json_arg(text: Option<String>) -> anyhow::Result<Option<serde_json::Value>> {
    text.map(|t| serde_json::from_str(&t).map_err(|e| anyhow::anyhow!("not JSON: {e}")))
        .transpose()
}

pub(crate) fn task_row(t: &Task) -> Vec<String> {
    vec![
        t.id.to_string(),
        t.title.clone(),
        t.state.to_string(),
        t.priority.as_str().to_owned(),
        t.task_kind.as_str().to_owned(),
        opt(&t.assigned_agent_id),
    ]
}

fn show(global: &GlobalOpts, t: &Task) {
    output::emit(global.format(), t, || {
        fields(&[
            ("id", t.id.to_string()),
            ("title", t.title.clone()),
            ("state", t.state.to_string()),
            ("priority", t.priority.as_str().to_owned()),
            ("kind", t.task_kind.as_str().to_owned()),
            ("role", opt(&t.role)),
            ("workflow_id", opt(&t.workflow_id)),
            ("assigned_agent_id", opt(&t.assigned_agent_id)),
            ("retry_count", t.retry_count.to_string()),
            ("attempt", t.attempt.to_string()),
            ("run_at", opt(&t.run_at)),
            (
                "output",
                t.output.as_ref().map_or("-".into(), |v| v.to_string()),
            ),
            (
                "error",
                t.error.as_ref().map_or("-".into(), |v| v.to_string()),
            ),
        ])
    });
}

pub async fn run(global: &GlobalOpts, command: TasksCommand) -> anyhow::Result<()> {
    let client = config::client(global)?;
    let tasks = client.tasks();
    let task = match command {
        TasksCommand::List(args) => {
            let state = match args.state.as_deref() {
                Some(s) => {
                    Some(TaskState::parse(s).ok_or_else(|| anyhow::anyhow!("unknown state {s}"))?)
                }
                None => None,
            };
            let filter = TaskFilter {
                state,
                workflow_id: args.workflow,
                assigned_agent_id: args.agent,
                ..Default::default()
            };
            let page = args.page.fetch(|p| tasks.list(&filter, p)).await?;
            output::emit(global.format(), &page, || {
                let mut t = table(&["id", "title", "state", "priority", "kind", "agent"]);
                for task in &page.items {
                    t.add_row(task_row(task));
                }
                t
            });
            return Ok(());
        }
        TasksCommand::Get(args) if args.watch => {
            let mut last = None;
            loop {
                let task = tasks.get(args.id).await?;
                let text = serde_json::to_string(&task)?;
                if last.as_ref() != Some(&text) {
                    show(global, &task);
                    last = Some(text);
                }
                if matches!(
                    task.state,
                    TaskState::Completed | TaskState::Failed | TaskState::Cancelled
                ) {
                    return Ok(());
                }
                tokio::time::sleep(std::time::Duration::from_secs(args.interval.max(1))).await;
            }
        }
        TasksCommand::Get(args) => tasks.get(args.id).await?,
        TasksCommand::Watch(args) => {
            use futures_util::StreamExt;
            let mut stream = tasks.stream(args.id, args.after);
            while let Some(event) = stream.next().await {
                let event = event?;
                output::emit_line(global.format(), &event, || {
                    format!(
                        "{} #{} {} {}",
                        event.created_at, event.id, event.event_type, event.data
                    )
                });
            }
            return Ok(());
        }
        TasksCommand::Context(args) => {
            let context = match args.agent {
                Some(agent) => tasks.context_for_agent(args.id, agent).await?,
                None => tasks.context(args.id).await?,
            };
            output::emit(global.document_format(), &context, || table(&[]));
            return Ok(());
        }
        TasksCommand::Why(args) => {
            let task = tasks.get(args.id).await?;
            output::print_out(super::why::failure(&client, &task).await?.trim_end());
            for line in super::why::unclaimable(&client, std::slice::from_ref(&task)).await? {
                output::print_out(&format!("  {line}"));
            }
            return Ok(());
        }
        TasksCommand::Git(args) => {
            let git = tasks.git(args.id).await?;
            output::emit(global.format(), &git, || {
                fields(&[
                    ("branches", git.branches.to_string()),
                    ("linked_prs", git.linked_prs.to_string()),
                ])
            });
            return Ok(());
        }
        TasksCommand::Handoff(args) => {
            let handoff = tasks
                .handoff(
                    args.id,
                    &orchestrator_client::api::CreateHandoff {
                        summary: args.summary,
                        changes: json_arg(args.changes)?,
                        remaining_items: json_arg(args.remaining)?,
                        agent_id: args.agent,
                        ..Default::default()
                    },
                )
                .await?;
            output::emit(global.format(), &handoff, || {
                let value = serde_json::to_value(&handoff).unwrap_or_default();
                fields(&[
                    ("id", value["id"].as_str().unwrap_or("-").to_owned()),
                    (
                        "summary",
                        value["summary"].as_str().unwrap_or("-").to_owned(),
                    ),
                ])
            });
            return Ok(());
        }
        TasksCommand::ClaimCredentials(args) => {
            let claimed = tasks
                .claim_credentials(
                    args.id,
                    &orchestrator_client::api::ClaimCredentials {
                        llm_api_key_claim_handle: args.llm_api_key_handle,
                        llm_extra_headers_claim_handle: args.llm_extra_headers_handle,
                        mcp_claim_handles: (!args.mcp_handles.is_empty())
                            .then_some(args.mcp_handles),
                    },
                )
                .await?;
            output::emit(global.document_format(), &claimed, || table(&[]));
            return Ok(());
        }
        TasksCommand::Artifacts(command) => {
            return crate::commands::artifacts::run_task(global, command).await;
        }
        TasksCommand::Handoffs(args) => {
            let handoffs = tasks.handoffs(args.id).await?;
            output::emit(global.format(), &handoffs, || {
                let mut t = table(&["id", "created", "summary"]);
                for h in &handoffs {
                    let value = serde_json::to_value(h).unwrap_or_default();
                    t.add_row(vec![
                        value["id"].as_str().unwrap_or("-").to_owned(),
                        value["created_at"].as_str().unwrap_or("-").to_owned(),
                        value["summary"].as_str().unwrap_or("-").to_owned(),
                    ]);
                }
                t
            });
            return Ok(());
        }
        TasksCommand::RequestChanges(args) => {
            tasks
                .act(
                    args.id,
                    TaskOperation::RequestChanges,
                    &TaskAction {
                        feedback: args.feedback,
                        instructions: args.instructions,
                        reason: args.reason,
                        ..Default::default()
                    },
                )
                .await?
        }
        TasksCommand::ApproveOutput(args) => {
            tasks
                .act(
                    args.id,
                    TaskOperation::ApproveOutput,
                    &TaskAction {
                        reason: args.reason,
                        ..Default::default()
                    },
                )
                .await?
        }
        TasksCommand::ResolveEscalation(args) => {
            tasks
                .act(
                    args.id,
                    TaskOperation::ResolveEscalation,
                    &TaskAction {
                        feedback: args.feedback,
                        instructions: args.instructions,
                        reason: args.reason,
                        ..Default::default()
                    },
                )
                .await?
        }
        TasksCommand::Create(args) => {
            let priority = match args.priority.as_deref() {
                Some(p) => Some(Priority::parse(p).ok_or_else(|| {
                    anyhow::anyhow!("priority must be critical, high, normal or low")
                })?),
                None => None,
            };
            let mut request = CreateTask {
                title: args.title,
                task_type: args.task_type,
                description: args.description,
                priority,
                role: args.role,
                workflow_id: args.workflow,
                work_item_id: args.work_item,
                task_kind: args.orchestrator.then_some(TaskKind::Orchestrator),
                execution_environment_id: args.environment,
                input: json_arg(args.input)?,
                request_id: args.request_id,
                ..Default::default()
            };
            args.run_control.apply(&mut request)?;
            tasks.create(&request).await?
        }
        TasksCommand::Reschedule(args) => match args.id {
            Some(id) => task_run_control::reschedule(&tasks, id, args).await?,
            None => return task_run_control::bulk_reschedule(global, &client, args).await,
        },
        TasksCommand::Heartbeat(args) => {
            return task_run_control::heartbeat(global, &tasks, args).await;
        }
        TasksCommand::Claim(args) => {
            match tasks
                .claim(&ClaimTask {
                    agent_id: args.agent,
                    workflow_id: args.workflow,
                    include_context: args.include_context,
                    execution_environment_id: args.environment,
                    ..Default::default()
                })
                .await?
            {
                Some(task) => task,
                None => {
                    eprintln!("nothing to claim");
                    return Ok(());
                }
            }
        }
        TasksCommand::Start(args) => {
            tasks
                .start(
                    args.id,
                    &StartTask {
                        agent_id: args.agent,
                        ..Default::default()
                    },
                )
                .await?
        }
        TasksCommand::Complete(args) => {
            tasks
                .complete(
                    args.id,
                    &CompleteTask {
                        agent_id: args.agent,
                        output: json_arg(args.result)?,
                        request_id: args.request_id,
                        ..Default::default()
                    },
                )
                .await?
        }
        TasksCommand::Fail(args) => {
            tasks
                .fail(
                    args.id,
                    &FailTask {
                        agent_id: args.agent,
                        error: Some(TaskError {
                            category: args.category,
                            message: args.message,
                            recoverable: None,
                        }),
                        ..Default::default()
                    },
                )
                .await?
        }
        TasksCommand::Retry(args) => match args.id {
            Some(id) => {
                act_with_reason(
                    &tasks,
                    TaskOperation::Retry,
                    ReasonArgs {
                        id,
                        reason: args.reason,
                    },
                )
                .await?
            }
            None => return bulk_tasks(global, &client, BulkActionKind::Retry, args).await,
        },
        TasksCommand::Skip(args) => act_with_reason(&tasks, TaskOperation::Skip, args).await?,
        TasksCommand::Escalate(args) => {
            act_with_reason(&tasks, TaskOperation::Escalate, args).await?
        }
        TasksCommand::Cancel(args) => match args.id {
            Some(id) => {
                act_with_reason(
                    &tasks,
                    TaskOperation::Cancel,
                    ReasonArgs {
                        id,
                        reason: args.reason,
                    },
                )
                .await?
            }
            None => return bulk_tasks(global, &client, BulkActionKind::Cancel, args).await,
        },
        TasksCommand::Reassign(args) => {
            tasks
                .act(
                    args.id,
                    TaskOperation::Reassign,
                    &TaskAction {
                        reason: Some(args.reason),
                        preferred_agent_id: args.agent,
                        ..Default::default()
                    },
                )
                .await?
        }
    };
    show(global, &task);
    Ok(())
}

/// An operation whose only input is an optional reason (retry, skip,
/// escalate, cancel).
async fn act_with_reason(
    tasks: &orchestrator_client::Tasks<'_>,
    operation: TaskOperation,
    args: ReasonArgs,
) -> orchestrator_client::Result<orchestrator_client::api::Task> {
    tasks
        .act(
            args.id,
            operation,
            &TaskAction {
                reason: args.reason,
                ..Default::default()
            },
        )
        .await
}

/// `cancel|retry --filter ...`: a bulk action over tasks.
async fn bulk_tasks(
    global: &GlobalOpts,
    client: &orchestrator_client::Client,
    action: BulkActionKind,
    args: BulkReasonArgs,
) -> anyhow::Result<()> {
    crate::commands::bulk::run(
        global,
        client,
        BulkTarget::Tasks,
        action,
        &args.bulk,
        args.reason,
        None,
    )
    .await
}
