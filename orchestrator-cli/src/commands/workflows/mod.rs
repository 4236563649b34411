//! `orch workflows launch|list|get|events|redrive|pause|resume|cancel|board|rail|workspace`.
//!
//! `launch --watch` shows a live progress bar of the workflow's tasks (done
//! out of all, with counts by state) until the workflow ends, then exits 0
//! when it completed and 1 when it failed or was cancelled. `--playbook` and
//! `--workspace` take an id, a slug or a name.
//!
//! The argument types are here; the commands that launch are in `launch`,
//! those that read in `inspect`, those that change a workflow in `steer`.

mod inspect;
mod launch;
mod steer;

use crate::cli::{GlobalOpts, PageArgs};
use crate::config;
use crate::output::{self, fields};
use clap::{Args, Subcommand};
use orchestrator_client::Client;
use orchestrator_client::api::{
    BulkActionKind, TaskState, Workflow, WorkflowDetail, WorkflowState,
};

#[derive(Debug, Subcommand)]
pub enum WorkflowsCommand {
    /// Launch a workflow from a playbook in a workspace.
    Launch(LaunchArgs),
    /// List workflows, newest first.
    List(ListArgs),
    /// Show a workflow with its tasks, work items, activations and stages;
    /// with --watch, again each time it changes until it ends.
    #[command(
        after_help = "Examples:\n  orch workflows get 7d2a…\n  orch workflows get 7d2a… --watch -o json"
    )]
    Get(GetArgs),
    /// A workflow's activations, or enqueue one.
    #[command(subcommand)]
    Activations(ActivationsCommand),
    /// A workflow's stages with their progress.
    #[command(after_help = "Example:\n  orch workflows stages 7d2a… --field name")]
    Stages(IdArg),
    /// A workflow's work items: list, create, update.
    #[command(subcommand, name = "work-items")]
    WorkItems(WorkItemsCommand),
    /// Launch the planning workflow of a workspace from a brief.
    #[command(
        after_help = "Example:\n  orch workflows plan --workspace 5b0c… --name \"Q3 plan\" --brief \"ship search\""
    )]
    Plan(PlanArgs),
    /// Print a workflow's events, oldest first (`-f` keeps following).
    Events(EventsArgs),
    /// Start a new attempt of a workflow.
    Redrive(RedriveArgs),
    /// Pause a workflow (its tasks are not claimed meanwhile).
    Pause(BulkIdArg),
    /// Resume a paused workflow.
    Resume(BulkIdArg),
    /// Cancel a workflow and its open tasks.
    Cancel(BulkIdArg),
    /// Show the board: work items by column.
    Board(IdArg),
    /// The operations rail: workflows live, recently ended or in history,
    /// with what needs an operator.
    #[command(
        after_help = "Examples:\n  orch workflows rail --needs-action\n  orch workflows rail --mode history --search release --all"
    )]
    Rail(RailArgs),
    /// One workflow's operations packet (detail, board, selection, live
    /// console, briefs, history, deliverables), as JSON or YAML.
    #[command(after_help = "Example:\n  orch workflows workspace 7d2a… --tab-scope briefs -o yaml")]
    Workspace(WorkspaceArgs),
}

#[derive(Debug, Args)]
pub struct RailArgs {
    /// `live` (the default), `recent` (ended in the last 24 hours) or `history`.
    #[arg(long)]
    pub mode: Option<String>,
    /// Only workflows with a task escalated, failed or awaiting assessment.
    #[arg(long)]
    pub needs_action: bool,
    /// `all` (the default), `planned` or `ongoing`.
    #[arg(long)]
    pub lifecycle: Option<String>,
    /// Case-insensitive substring of the workflow's name.
    #[arg(long)]
    pub search: Option<String>,
    #[command(flatten)]
    pub page: PageArgs,
}

#[derive(Debug, Args)]
pub struct WorkspaceArgs {
    /// The workflow: its id, a unique id prefix, its short id (last 8 hex
    /// digits, as listings show) or its name.
    pub id: String,
    /// Select this work item (id, id prefix, short id or title).
    #[arg(long)]
    pub work_item: Option<String>,
    /// Select this task of the workflow (id, id prefix or short id).
    #[arg(long)]
    pub task: Option<String>,
    /// Only this section: `live_console`, `briefs`, `history` or `deliverables`.
    #[arg(long)]
    pub tab_scope: Option<String>,
}

#[derive(Debug, Args)]
pub struct IdArg {
    /// The workflow: its id, a unique id prefix, its short id (last 8 hex
    /// digits, as listings show) or its name.
    pub id: String,
}

/// One workflow by id, or every workflow matching `--filter` (a bulk
/// action).
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  orch workflows pause 9a1e…\n  orch workflows cancel --filter state=active,workspace=… --dry-run\n  orch workflows resume --filter state=paused --yes"
)]
pub struct BulkIdArg {
    /// The workflow: its id, a unique id prefix, its short id (last 8 hex
    /// digits, as listings show) or its name.
    #[arg(required_unless_present = "filter", conflicts_with = "filter")]
    pub id: Option<String>,
    #[command(flatten)]
    pub bulk: crate::commands::bulk::BulkArgs,
}

impl BulkIdArg {
    /// The single-workflow form, or the bulk action over the filter.
    async fn run(
        self,
        global: &GlobalOpts,
        client: &Client,
        action: BulkActionKind,
    ) -> anyhow::Result<()> {
        use orchestrator_client::api::BulkTarget;
        let Some(id) = self.id else {
            return crate::commands::bulk::run(
                global,
                client,
                BulkTarget::Workflows,
                action,
                &self.bulk,
                None,
                None,
            )
            .await;
        };
        let args = IdArg { id };
        match action {
            BulkActionKind::Cancel => steer::cancel(global, client, args).await,
            other => steer::act(global, client, args, other.as_str()).await,
        }
    }
}

#[derive(Debug, Args)]
pub struct GetArgs {
    /// The workflow: its id, a unique id prefix, its short id (last 8 hex
    /// digits, as listings show) or its name.
    pub id: String,
    /// Print again whenever the workflow changes, until it ends (polls
    /// every --interval seconds); exits 1 when it ends failed, after
    /// saying why.
    #[arg(long)]
    pub watch: bool,
    /// Seconds between polls with --watch.
    #[arg(long, default_value_t = 2, requires = "watch")]
    pub interval: u64,
}

#[derive(Debug, Subcommand)]
pub enum ActivationsCommand {
    /// List a workflow's activations (`GET /workflows/:id/activations`).
    #[command(after_help = "Example:\n  orch workflows activations list 7d2a… -o json")]
    List(IdArg),
    /// Enqueue an activation (`POST /workflows/:id/activations`).
    #[command(
        after_help = "Example:\n  orch workflows activations enqueue 7d2a… --event-type manual --reason \"re-plan\""
    )]
    Enqueue(EnqueueArgs),
}

#[derive(Debug, Args)]
pub struct EnqueueArgs {
    /// The workflow: its id, a unique id prefix, its short id (last 8 hex
    /// digits, as listings show) or its name.
    pub id: String,
    /// Why the workflow should be activated (shown in its history).
    #[arg(long)]
    pub reason: Option<String>,
    /// The activation's event type (default `manual`).
    #[arg(long)]
    pub event_type: Option<String>,
    /// JSON payload.
    #[arg(long)]
    pub payload: Option<String>,
    /// Makes the call replay-safe: the same id again answers the first
    /// result instead of enqueueing twice.
    #[arg(long)]
    pub request_id: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum WorkItemsCommand {
    /// List a workflow's work items.
    #[command(after_help = "Example:\n  orch workflows work-items list 7d2a…")]
    List(IdArg),
    /// Add a work item.
    #[command(
        after_help = "Example:\n  orch workflows work-items create 7d2a… --title \"Search API\""
    )]
    Create(WorkItemArgs),
    /// Change a work item (title, goal, stage, column).
    #[command(
        after_help = "Example:\n  orch workflows work-items update 7d2a… 1c9e… --column done"
    )]
    Update(UpdateWorkItemArgs),
}

#[derive(Debug, Args)]
pub struct WorkItemArgs {
    /// The workflow: its id, a unique id prefix, its short id (last 8 hex
    /// digits, as listings show) or its name.
    pub id: String,
    /// The work item's title.
    #[arg(long)]
    pub title: String,
    /// What done looks like for this work item.
    #[arg(long)]
    pub goal: Option<String>,
    /// The stage it belongs to.
    #[arg(long)]
    pub stage: Option<String>,
    /// Board column: `inbox`, `active`, `blocked` or `done`.
    #[arg(long)]
    pub column: Option<String>,
}

#[derive(Debug, Args)]
pub struct UpdateWorkItemArgs {
    /// The workflow: its id, a unique id prefix, its short id (last 8 hex
    /// digits, as listings show) or its name.
    pub id: String,
    /// The work item: its id, a unique id prefix, its short id or its title.
    pub work_item_id: String,
    /// A new title.
    #[arg(long)]
    pub title: Option<String>,
    /// A new goal.
    #[arg(long)]
    pub goal: Option<String>,
    /// Move it to this stage.
    #[arg(long)]
    pub stage: Option<String>,
    /// Move it to this board column: `inbox`, `active`, `blocked` or `done`.
    #[arg(long)]
    pub column: Option<String>,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The workspace to plan in: its id, slug or name.
    #[arg(long)]
    pub workspace: String,
    /// The planning workflow's name.
    #[arg(long)]
    pub name: String,
    /// What to plan: the brief the planning orchestrator starts from.
    #[arg(long)]
    pub brief: String,
    /// The planning playbook, by id, slug or name (default: the server's
    /// choice).
    #[arg(long)]
    pub playbook: Option<String>,
    /// Makes the call replay-safe: the same id again answers the first
    /// workflow instead of launching a second.
    #[arg(long)]
    pub request_id: Option<String>,
}

#[derive(Debug, Args)]
pub struct LaunchArgs {
    /// Playbook id, slug or name.
    #[arg(long)]
    pub playbook: String,
    /// Workspace id, slug or name.
    #[arg(long)]
    pub workspace: String,
    /// The new workflow's name.
    #[arg(long)]
    pub name: String,
    /// A launch parameter `key=value` (repeatable).
    #[arg(long = "param")]
    pub params: Vec<String>,
    /// A file to attach to the input packet (repeatable).
    #[arg(long = "file")]
    pub files: Vec<std::path::PathBuf>,
    /// The kickoff brief.
    #[arg(long)]
    pub summary: Option<String>,
    /// Makes the call replay-safe: the same id again answers the first
    /// workflow instead of launching a second.
    #[arg(long)]
    pub request_id: Option<String>,
    /// Follow progress until the workflow ends (exit 0 completed, 1 otherwise).
    #[arg(long)]
    pub watch: bool,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only workflows in this state.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(WorkflowState::ALL.map(WorkflowState::as_str)))]
    pub state: Option<String>,
    /// Only workflows of this workspace (id, slug or name).
    #[arg(long)]
    pub workspace: Option<String>,
    /// Only workflows launched from this playbook (id, slug or name).
    #[arg(long)]
    pub playbook: Option<String>,
    #[command(flatten)]
    pub page: PageArgs,
}

#[derive(Debug, Args)]
pub struct EventsArgs {
    /// The workflow: its id, a unique id prefix, its short id (last 8 hex
    /// digits, as listings show) or its name.
    pub id: String,
    /// Comma-separated event types.
    #[arg(long)]
    pub types: Option<String>,
    /// Only events after this event id (as printed in the first column).
    #[arg(long)]
    pub after: Option<i64>,
    /// Keep following new events.
    #[arg(short = 'f', long)]
    pub follow: bool,
}

#[derive(Debug, Args)]
pub struct RedriveArgs {
    /// The workflow: its id, a unique id prefix, its short id (last 8 hex
    /// digits, as listings show) or its name.
    pub id: String,
    /// The new attempt's name (default: the workflow's).
    #[arg(long)]
    pub name: Option<String>,
    /// Why it is run again (kept with the attempt).
    #[arg(long)]
    pub reason: Option<String>,
    /// Start fresh instead of inheriting parameters and inputs.
    #[arg(long)]
    pub fresh: bool,
    /// Makes the call replay-safe: the same id again answers the first
    /// attempt instead of starting a second.
    #[arg(long)]
    pub request_id: Option<String>,
}

/// A workflow as fields (or JSON/YAML).
fn show_workflow(global: &GlobalOpts, w: &Workflow) {
    output::emit(global.format(), w, || {
        fields(&[
            ("id", w.id.to_string()),
            ("name", w.name.clone()),
            ("state", w.state.as_str().to_owned()),
            ("lifecycle", w.lifecycle.clone()),
            ("playbook_id", w.playbook_id.to_string()),
            ("workspace_id", w.workspace_id.to_string()),
            (
                "attempt",
                format!("{} ({})", w.attempt_number, w.attempt_kind),
            ),
            ("created_at", w.created_at.to_string()),
        ])
    });
}

/// Why a workflow ended failed: each failed task with its error and its
/// command's last stderr lines, on stderr.
async fn explain_end(client: &Client, detail: &WorkflowDetail) {
    for task in detail.tasks.iter().filter(|t| t.state == TaskState::Failed) {
        match crate::commands::why::failure(client, task).await {
            Ok(text) => eprint!("{text}"),
            Err(e) => eprintln!("task {}: cannot explain the failure: {e}", task.id),
        }
    }
}

pub async fn run(global: &GlobalOpts, command: WorkflowsCommand) -> anyhow::Result<()> {
    let client = config::client(global)?;
    let client = &client;
    match command {
        WorkflowsCommand::Launch(args) => launch::launch(global, client, args).await,
        WorkflowsCommand::List(args) => inspect::list(global, client, args).await,
        WorkflowsCommand::Get(args) if args.watch => inspect::get_watch(global, client, args).await,
        WorkflowsCommand::Activations(ActivationsCommand::List(args)) => {
            steer::activations(global, client, args).await
        }
        WorkflowsCommand::Activations(ActivationsCommand::Enqueue(args)) => {
            steer::enqueue(global, client, args).await
        }
        WorkflowsCommand::Stages(args) => inspect::stages(global, client, args).await,
        WorkflowsCommand::WorkItems(command) => steer::work_items(global, client, command).await,
        WorkflowsCommand::Plan(args) => steer::plan(global, client, args).await,
        WorkflowsCommand::Get(args) => inspect::get(global, client, args).await,
        WorkflowsCommand::Events(args) => inspect::events(global, client, args).await,
        WorkflowsCommand::Redrive(args) => steer::redrive(global, client, args).await,
        WorkflowsCommand::Pause(args) => args.run(global, client, BulkActionKind::Pause).await,
        WorkflowsCommand::Resume(args) => args.run(global, client, BulkActionKind::Resume).await,
        WorkflowsCommand::Cancel(args) => args.run(global, client, BulkActionKind::Cancel).await,
        WorkflowsCommand::Rail(args) => inspect::rail(global, client, args).await,
        WorkflowsCommand::Workspace(args) => inspect::workspace(global, client, args).await,
        WorkflowsCommand::Board(args) => inspect::board(global, client, args).await,
    }
}
