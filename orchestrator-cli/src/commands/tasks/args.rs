//! The arguments of `orch tasks`: one struct per command shape. A task
//! argument is text (an id, a unique id prefix or the short id listings
//! show), resolved in `mod.rs` before the command runs.

use crate::cli::PageArgs;
use crate::commands::task_run_control::{CreateRunControl, HeartbeatArgs, RescheduleArgs};
use clap::{Args, Subcommand};
use orchestrator_client::api::TaskState;
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
    Create(Box<CreateArgs>),
    /// Create several tasks in one request (`POST /tasks/create-batch`):
    /// a JSON array of `POST /tasks` bodies (1 to 256); each is created or
    /// refused on its own, and the table says which.
    #[command(
        name = "create-batch",
        after_help = "Examples:\n  orch tasks create-batch tasks.json\n  echo '[{\"title\":\"a\",\"type\":\"analysis\"},{\"title\":\"b\",\"type\":\"code\"}]' | orch tasks create-batch -"
    )]
    CreateBatch(CreateBatchArgs),
    /// Claim the next task for an agent (prints nothing and exits 0 when none).
    Claim(ClaimArgs),
    /// Start a claimed task (as its agent).
    Start(ActorArgs),
    /// Complete a task (as its agent).
    Complete(CompleteArgs),
    /// Complete several tasks in one request (`POST /tasks/complete-batch`);
    /// each completes or is refused on its own, and the table says which.
    #[command(
        name = "complete-batch",
        after_help = "Examples:\n  orch tasks complete-batch 3f6c… 9a1e… --result '{\"ok\":true}'\n  orch tasks complete-batch --items '[{\"task_id\":\"…\",\"output\":{\"n\":1},\"request_id\":\"r-1\"}]'"
    )]
    CompleteBatch(CompleteBatchArgs),
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
    /// Move a pending task's run_at (admin).
    #[command(after_help = "Example:\n  orch tasks reschedule 3f6c… --delay 600")]
    Reschedule(RescheduleArgs),
    /// Renew the holder's lease and report progress (as the holding agent).
    #[command(
        after_help = "Example:\n  orch tasks heartbeat 3f6c… --attempt 1 --progress '{\"pct\":40}'"
    )]
    Heartbeat(HeartbeatArgs),
}

#[derive(Debug, Args)]
pub struct IdArg {
    /// The task: its id, a unique id prefix or its short id (the last 8 hex
    /// digits, as listings show).
    pub id: String,
}

#[derive(Debug, Args)]
pub struct GetArgs {
    /// The task: its id, a unique id prefix or its short id (the last 8 hex
    /// digits, as listings show).
    pub id: String,
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
    /// The task: its id, a unique id prefix or its short id (the last 8 hex
    /// digits, as listings show).
    pub id: String,
    /// Only events after this event id.
    #[arg(long)]
    pub after: Option<i64>,
}

#[derive(Debug, Args)]
pub struct HandoffArgs {
    /// The task: its id, a unique id prefix or its short id (the last 8 hex
    /// digits, as listings show).
    pub id: String,
    /// What was done, in a sentence or two.
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
    /// The task: its id, a unique id prefix or its short id (the last 8 hex
    /// digits, as listings show).
    pub id: String,
    /// The claim handle of the LLM API key (from the task's context).
    #[arg(long)]
    pub llm_api_key_handle: Option<String>,
    /// The claim handle of the LLM's extra headers (from the task's context).
    #[arg(long)]
    pub llm_extra_headers_handle: Option<String>,
    /// The claim handle of a remote MCP server's credentials (repeatable).
    #[arg(long = "mcp-handle")]
    pub mcp_handles: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ContextArgs {
    /// The task: its id, a unique id prefix or its short id (the last 8 hex
    /// digits, as listings show).
    pub id: String,
    /// The packet as this agent sees it.
    #[arg(long)]
    pub agent: Option<Uuid>,
}

#[derive(Debug, Args)]
pub struct FeedbackArgs {
    /// The task: its id, a unique id prefix or its short id (the last 8 hex
    /// digits, as listings show).
    pub id: String,
    /// What to change (request-changes).
    #[arg(long)]
    pub feedback: Option<String>,
    /// How to go on (resolve-escalation).
    #[arg(long)]
    pub instructions: Option<String>,
    /// Why (recorded in the task's history).
    #[arg(long)]
    pub reason: Option<String>,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only tasks in this state.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(TaskState::ALL.map(TaskState::as_str)))]
    pub state: Option<String>,
    /// Only tasks of this workflow (id, id prefix, short id or name).
    #[arg(long)]
    pub workflow: Option<String>,
    /// Only tasks assigned to this agent (id, id prefix, short id or name).
    #[arg(long)]
    pub agent: Option<String>,
    /// Only delayed tasks: pending with a `run_at` still ahead.
    #[arg(long)]
    pub delayed: bool,
    #[command(flatten)]
    pub page: PageArgs,
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The task's title.
    #[arg(long)]
    pub title: String,
    /// analysis, code, assessment, test, docs, orchestration or custom.
    #[arg(long = "type", default_value = "code")]
    pub task_type: String,
    /// What to do, for the agent that claims it.
    #[arg(long)]
    pub description: Option<String>,
    /// critical, high, normal or low.
    #[arg(long)]
    pub priority: Option<String>,
    /// Only an agent with the routing tag `role:<ROLE>` claims it.
    #[arg(long)]
    pub role: Option<String>,
    /// The workflow the task belongs to (id).
    #[arg(long)]
    pub workflow: Option<Uuid>,
    /// The work item the task belongs to (id).
    #[arg(long)]
    pub work_item: Option<Uuid>,
    /// An orchestrator task (plans its workflow): only orchestrator or
    /// hybrid agents claim it.
    #[arg(long)]
    pub orchestrator: bool,
    /// The execution environment (id) the task runs in; only workers that
    /// declare it (routing tag `env:<id or name>`) claim the task.
    #[arg(long)]
    pub environment: Option<Uuid>,
    /// The task input as JSON.
    #[arg(long)]
    pub input: Option<String>,
    /// Makes the call replay-safe: the same id again answers the first
    /// task instead of creating a second.
    #[arg(long)]
    pub request_id: Option<String>,
    #[command(flatten)]
    pub run_control: CreateRunControl,
}

#[derive(Debug, Args)]
pub struct ClaimArgs {
    /// The agent that claims (id).
    #[arg(long)]
    pub agent: Uuid,
    /// Only tasks of this workflow (id).
    #[arg(long)]
    pub workflow: Option<Uuid>,
    /// Answer the task with its execution packet (what `tasks context`
    /// prints).
    #[arg(long)]
    pub include_context: bool,
    /// Only tasks of this execution environment (id).
    #[arg(long)]
    pub environment: Option<Uuid>,
}

#[derive(Debug, Args)]
pub struct ActorArgs {
    /// The task: its id, a unique id prefix or its short id (the last 8 hex
    /// digits, as listings show).
    pub id: String,
    /// The acting agent (only for keys not bound to an agent).
    #[arg(long)]
    pub agent: Option<Uuid>,
}

#[derive(Debug, Args)]
pub struct CompleteArgs {
    /// The task: its id, a unique id prefix or its short id (the last 8 hex
    /// digits, as listings show).
    pub id: String,
    /// The acting agent (only for keys not bound to an agent).
    #[arg(long)]
    pub agent: Option<Uuid>,
    /// The task's output as JSON (`--result '{"ok":true}'`).
    #[arg(long)]
    pub result: Option<String>,
    /// Makes the call replay-safe: the same id again answers the first
    /// completion.
    #[arg(long)]
    pub request_id: Option<String>,
}

#[derive(Debug, Args)]
pub struct CompleteBatchArgs {
    /// The tasks (ids, unique id prefixes or short ids), each completed
    /// with --result; or leave them out and give --items.
    #[arg(required_unless_present = "items", conflicts_with = "items")]
    pub ids: Vec<String>,
    /// The acting agent of every task (only for keys not bound to an
    /// agent; a worker key needs none).
    #[arg(long)]
    pub agent: Option<Uuid>,
    /// Every task's output as JSON.
    #[arg(long)]
    pub result: Option<String>,
    /// The items as a JSON array, each `{task_id, agent_id?, output?,
    /// metrics?, request_id?}` (1 to 256).
    #[arg(long)]
    pub items: Option<String>,
}

#[derive(Debug, Args)]
pub struct CreateBatchArgs {
    /// A file holding a JSON array of task bodies, or `-` for standard
    /// input.
    pub path: String,
}

#[derive(Debug, Args)]
pub struct FailArgs {
    /// The task: its id, a unique id prefix or its short id (the last 8 hex
    /// digits, as listings show).
    pub id: String,
    /// The acting agent (only for keys not bound to an agent).
    #[arg(long)]
    pub agent: Option<Uuid>,
    /// What went wrong, for the operator.
    #[arg(long)]
    pub message: Option<String>,
    /// A short error category (for example `build`, `timeout`).
    #[arg(long)]
    pub category: Option<String>,
}

/// One task by id, or every task matching `--filter` (a bulk action).
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  orch tasks cancel 3f6c…\n  orch tasks cancel --filter state=failed,workflow=9a1e… --dry-run\n  orch tasks retry --filter state=failed,type=code --yes"
)]
pub struct BulkReasonArgs {
    /// The task: its id, a unique id prefix or its short id (the last 8 hex
    /// digits, as listings show).
    #[arg(required_unless_present = "filter", conflicts_with = "filter")]
    pub id: Option<String>,
    /// Why (recorded in the task's history).
    #[arg(long)]
    pub reason: Option<String>,
    #[command(flatten)]
    pub bulk: crate::commands::bulk::BulkArgs,
}

#[derive(Debug, Args)]
pub struct ReasonArgs {
    /// The task: its id, a unique id prefix or its short id (the last 8 hex
    /// digits, as listings show).
    pub id: String,
    /// Why (recorded in the task's history).
    #[arg(long)]
    pub reason: Option<String>,
}

#[derive(Debug, Args)]
pub struct ReassignArgs {
    /// The task: its id, a unique id prefix or its short id (the last 8 hex
    /// digits, as listings show).
    pub id: String,
    /// Why (recorded in the task's history).
    #[arg(long)]
    pub reason: String,
    /// Only this agent (id) may claim it next.
    #[arg(long)]
    pub agent: Option<Uuid>,
}

impl TasksCommand {
    /// The task argument as typed, for the commands that name one task.
    pub fn task_text(&self) -> Option<&str> {
        match self {
            Self::Get(a) => Some(&a.id),
            Self::Why(a) | Self::Git(a) | Self::Handoffs(a) => Some(&a.id),
            Self::Watch(a) => Some(&a.id),
            Self::Context(a) => Some(&a.id),
            Self::Handoff(a) => Some(&a.id),
            Self::ClaimCredentials(a) => Some(&a.id),
            Self::RequestChanges(a) | Self::ResolveEscalation(a) => Some(&a.id),
            Self::ApproveOutput(a) | Self::Skip(a) | Self::Escalate(a) => Some(&a.id),
            Self::Start(a) => Some(&a.id),
            Self::Complete(a) => Some(&a.id),
            Self::Fail(a) => Some(&a.id),
            Self::Retry(a) | Self::Cancel(a) => a.id.as_deref(),
            Self::Reassign(a) => Some(&a.id),
            Self::Reschedule(a) => a.id.as_deref(),
            Self::Heartbeat(a) => Some(&a.id),
            Self::List(_)
            | Self::Create(_)
            | Self::CreateBatch(_)
            | Self::Claim(_)
            | Self::Artifacts(_)
            | Self::CompleteBatch(_) => None,
        }
    }
}
