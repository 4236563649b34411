//! `orch workflows launch|list|get|events|redrive|pause|resume|cancel|board|rail|workspace`.
//!
//! `launch --watch` shows a live progress bar of the workflow's tasks (done
//! out of all, with counts by state) until the workflow ends, then exits 0
//! when it completed and 1 when it failed or was cancelled. `--playbook` and
//! `--workspace` take an id, a slug or a name.

use crate::cli::{GlobalOpts, OutputFormat, PageArgs};
use crate::config;
use crate::output::{self, fields, opt, table};
use base64::Engine;
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use orchestrator_client::Client;
use orchestrator_client::api::{
    CreateWorkItem, CreateWorkflow, EnqueueActivation, InitialInputPacket, InputFile,
    PlanningWorkflow, RedriveWorkflow, TaskState, UpdateWorkItem, Workflow, WorkflowAction,
    WorkflowEventQuery, WorkflowFilter, WorkflowState,
};
use orchestrator_client::api::{RailQuery, WorkspacePacketQuery};
use std::collections::BTreeMap;
use std::time::Duration;
use uuid::Uuid;

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
    Pause(IdArg),
    /// Resume a paused workflow.
    Resume(IdArg),
    /// Cancel a workflow and its open tasks.
    Cancel(IdArg),
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
    pub id: Uuid,
    /// Select this work item.
    #[arg(long)]
    pub work_item: Option<Uuid>,
    /// Select this task.
    #[arg(long)]
    pub task: Option<Uuid>,
    /// Only this section: `live_console`, `briefs`, `history` or `deliverables`.
    #[arg(long)]
    pub tab_scope: Option<String>,
}

#[derive(Debug, Args)]
pub struct IdArg {
    pub id: Uuid,
}

#[derive(Debug, Args)]
pub struct GetArgs {
    /// The workflow: its id, a unique id prefix or its name.
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
    pub id: Uuid,
    #[arg(long)]
    pub reason: Option<String>,
    #[arg(long)]
    pub event_type: Option<String>,
    /// JSON payload.
    #[arg(long)]
    pub payload: Option<String>,
    /// Makes the call replay-safe.
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
    pub id: Uuid,
    #[arg(long)]
    pub title: String,
    #[arg(long)]
    pub goal: Option<String>,
    #[arg(long)]
    pub stage: Option<String>,
    #[arg(long)]
    pub column: Option<String>,
}

#[derive(Debug, Args)]
pub struct UpdateWorkItemArgs {
    pub id: Uuid,
    pub work_item_id: Uuid,
    #[arg(long)]
    pub title: Option<String>,
    #[arg(long)]
    pub goal: Option<String>,
    #[arg(long)]
    pub stage: Option<String>,
    #[arg(long)]
    pub column: Option<String>,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The workspace to plan in.
    #[arg(long)]
    pub workspace: Uuid,
    #[arg(long)]
    pub name: String,
    #[arg(long)]
    pub brief: String,
    /// The planning playbook (default: the server's choice).
    #[arg(long)]
    pub playbook: Option<Uuid>,
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
    #[arg(long)]
    pub workspace: Option<Uuid>,
    #[arg(long)]
    pub playbook: Option<Uuid>,
    #[command(flatten)]
    pub page: PageArgs,
}

#[derive(Debug, Args)]
pub struct EventsArgs {
    pub id: Uuid,
    /// Comma-separated event types.
    #[arg(long)]
    pub types: Option<String>,
    #[arg(long)]
    pub after: Option<i64>,
    /// Keep following new events.
    #[arg(short = 'f', long)]
    pub follow: bool,
}

#[derive(Debug, Args)]
pub struct RedriveArgs {
    pub id: Uuid,
    #[arg(long)]
    pub name: Option<String>,
    #[arg(long)]
    pub reason: Option<String>,
    /// Start fresh instead of inheriting parameters and inputs.
    #[arg(long)]
    pub fresh: bool,
    #[arg(long)]
    pub request_id: Option<String>,
}

fn content_type(path: &std::path::Path) -> Option<String> {
    let ext = path.extension()?.to_str()?.to_lowercase();
    Some(
        match ext.as_str() {
            "md" => "text/markdown",
            "txt" => "text/plain",
            "json" => "application/json",
            "yaml" | "yml" => "application/yaml",
            "pdf" => "application/pdf",
            "png" => "image/png",
            _ => "application/octet-stream",
        }
        .to_owned(),
    )
}

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

/// Polls until the workflow ends, drawing task progress; the final state.
async fn watch(client: &Client, id: Uuid) -> anyhow::Result<WorkflowState> {
    let bar = ProgressBar::new(0);
    bar.set_style(ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} tasks done  {msg}",
    )?);
    bar.enable_steady_tick(Duration::from_millis(120));
    let (mut polls, mut said) = (0u64, Vec::new());
    loop {
        let detail = client.workflows().get(id).await?;
        let count = |s: TaskState| detail.tasks.iter().filter(|t| t.state == s).count();
        let done = detail.tasks.iter().filter(|t| t.state.is_done()).count();
        bar.set_length(detail.tasks.len() as u64);
        bar.set_position(done as u64);
        bar.set_message(format!(
            "{} | pending {} claimed {} in_progress {} completed {} failed {}",
            detail.workflow.state.as_str(),
            count(TaskState::Pending),
            count(TaskState::Claimed),
            count(TaskState::InProgress),
            count(TaskState::Completed),
            count(TaskState::Failed),
        ));
        if detail.workflow.state.is_terminal() {
            bar.finish();
            return Ok(detail.workflow.state);
        }
        // Every few seconds: pending work nobody online can take.
        if polls % 10 == 0 {
            let stalled = super::why::unclaimable(client, &detail.tasks).await?;
            if stalled != said {
                for line in &stalled {
                    bar.println(format!("waiting: {line}"));
                }
                said = stalled;
            }
        }
        polls += 1;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Why a workflow ended failed (or cancelled): each failed task with its
/// error and its command's last stderr lines, on stderr.
async fn explain_end(client: &Client, detail: &orchestrator_client::api::WorkflowDetail) {
    for task in detail.tasks.iter().filter(|t| t.state == TaskState::Failed) {
        match super::why::failure(client, task).await {
            Ok(text) => eprint!("{text}"),
            Err(e) => eprintln!("task {}: cannot explain the failure: {e}", task.id),
        }
    }
}

pub async fn run(global: &GlobalOpts, command: WorkflowsCommand) -> anyhow::Result<()> {
    let client = config::client(global)?;
    match command {
        WorkflowsCommand::Launch(args) => {
            let playbook_id = super::resolve::playbook(&client, &args.playbook).await?;
            let workspace_id = super::resolve::workspace(&client, &args.workspace).await?;
            let mut parameters = BTreeMap::new();
            for param in &args.params {
                let (k, v) = param.split_once('=').ok_or_else(|| {
                    output::usage(format!("--param takes key=value, got `{param}`"))
                })?;
                parameters.insert(k.to_owned(), v.to_owned());
            }
            let mut sizes = Vec::with_capacity(args.files.len());
            for path in &args.files {
                let meta = std::fs::metadata(path)
                    .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
                sizes.push((path.as_path(), meta.len() as usize));
            }
            super::upload::check(&sizes)?;
            let mut files = Vec::new();
            for path in &args.files {
                let bytes = std::fs::read(path)
                    .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
                files.push(InputFile {
                    file_name: path
                        .file_name()
                        .and_then(|n| n.to_str())
                        .unwrap_or("file")
                        .to_owned(),
                    content_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
                    content_type: content_type(path),
                });
            }
            let packet =
                (args.summary.is_some() || !files.is_empty()).then(|| InitialInputPacket {
                    summary: args.summary.clone(),
                    structured_inputs: None,
                    files: (!files.is_empty()).then_some(files),
                });
            let workflow = client
                .workflows()
                .create(&CreateWorkflow {
                    request_id: args.request_id,
                    playbook_id,
                    workspace_id,
                    name: args.name,
                    parameters: (!parameters.is_empty()).then_some(parameters),
                    initial_input_packet: packet,
                    ..Default::default()
                })
                .await?;
            if !args.watch {
                show_workflow(global, &workflow);
                return Ok(());
            }
            eprintln!("launched workflow {} ({})", workflow.id, workflow.name);
            let state = watch(&client, workflow.id).await?;
            let detail = client.workflows().get(workflow.id).await?;
            show_workflow(global, &detail.workflow);
            if state != WorkflowState::Completed {
                explain_end(&client, &detail).await;
                anyhow::bail!("workflow {} ended {}", workflow.id, state.as_str());
            }
        }
        WorkflowsCommand::List(args) => {
            let state = match args.state.as_deref() {
                Some(s) => Some(
                    WorkflowState::parse(s).ok_or_else(|| anyhow::anyhow!("unknown state {s}"))?,
                ),
                None => None,
            };
            let filter = WorkflowFilter {
                state,
                workspace_id: args.workspace,
                playbook_id: args.playbook,
                ..Default::default()
            };
            let workflows = client.workflows();
            let page = args.page.fetch(|p| workflows.list(&filter, p)).await?;
            output::emit(global.format(), &page, || {
                let mut t = table(&[
                    "id",
                    "name",
                    "state",
                    "playbook",
                    "workspace",
                    "tasks done",
                    "created",
                ]);
                for w in &page.items {
                    let total: i64 = w.task_counts.values().sum();
                    let done = w.task_counts.get("completed").copied().unwrap_or(0);
                    t.add_row(vec![
                        w.workflow.id.to_string(),
                        w.workflow.name.clone(),
                        w.workflow.state.as_str().to_owned(),
                        opt(&w.playbook_name),
                        opt(&w.workspace_name),
                        format!("{done}/{total}"),
                        w.workflow.created_at.to_string(),
                    ]);
                }
                t
            });
        }
        WorkflowsCommand::Get(args) if args.watch => {
            let id = super::resolve::workflow(&client, &args.id).await?;
            let mut last = None;
            let mut stalled = Vec::new();
            loop {
                let detail = client.workflows().get(id).await?;
                let text = serde_json::to_string(&detail)?;
                if last.as_ref() != Some(&text) {
                    output::emit_line(global.format(), &detail, || {
                        format!(
                            "{} {} {}: {} tasks, {} done",
                            detail.workflow.id,
                            detail.workflow.name,
                            detail.workflow.state.as_str(),
                            detail.tasks.len(),
                            detail.tasks.iter().filter(|t| t.state.is_done()).count()
                        )
                    });
                    last = Some(text);
                }
                if detail.workflow.state.is_terminal() {
                    // Cancelled is an operator's choice, not a failure.
                    if detail.workflow.state != WorkflowState::Failed {
                        return Ok(());
                    }
                    explain_end(&client, &detail).await;
                    anyhow::bail!("workflow {id} ended {}", detail.workflow.state.as_str());
                }
                // Nobody can take its pending work: say so once per change.
                let now = super::why::unclaimable(&client, &detail.tasks).await?;
                if now != stalled {
                    for line in &now {
                        eprintln!("waiting: {line}");
                    }
                    stalled = now;
                }
                tokio::time::sleep(Duration::from_secs(args.interval.max(1))).await;
            }
        }
        WorkflowsCommand::Activations(ActivationsCommand::List(args)) => {
            let list = client.workflows().activations(args.id).await?;
            output::emit(global.format(), &list, || {
                let mut t = table(&["id", "status", "event", "reason", "task", "attempts"]);
                for a in &list {
                    t.add_row(vec![
                        a.id.to_string(),
                        a.status.clone(),
                        a.event_type.clone(),
                        a.reason.clone(),
                        opt(&a.task_id),
                        a.attempts.to_string(),
                    ]);
                }
                t
            });
        }
        WorkflowsCommand::Activations(ActivationsCommand::Enqueue(args)) => {
            let applied = client
                .workflows()
                .enqueue_activation(
                    args.id,
                    &EnqueueActivation {
                        request_id: args.request_id,
                        reason: args.reason,
                        event_type: args.event_type,
                        payload: crate::commands::tasks::json_arg(args.payload)?,
                    },
                )
                .await?;
            output::emit(global.format(), &applied, || {
                fields(&[
                    ("id", applied.id.to_string()),
                    ("applied", applied.applied.to_string()),
                ])
            });
        }
        WorkflowsCommand::Stages(args) => {
            let stages = client.workflows().stages(args.id).await?;
            output::emit(global.format(), &stages, || {
                let mut t = table(&["#", "name", "status", "work items", "open", "goal"]);
                for s in &stages {
                    t.add_row(vec![
                        s.position.to_string(),
                        s.name.clone(),
                        s.status.clone(),
                        s.work_item_count.to_string(),
                        s.open_work_item_count.to_string(),
                        opt(&s.goal),
                    ]);
                }
                t
            });
        }
        WorkflowsCommand::WorkItems(command) => {
            let workflows = client.workflows();
            let items = match command {
                WorkItemsCommand::List(args) => workflows.work_items(args.id).await?,
                WorkItemsCommand::Create(args) => vec![
                    workflows
                        .create_work_item(
                            args.id,
                            &CreateWorkItem {
                                title: args.title,
                                goal: args.goal,
                                stage_name: args.stage,
                                column_id: args.column,
                                ..Default::default()
                            },
                        )
                        .await?,
                ],
                WorkItemsCommand::Update(args) => vec![
                    workflows
                        .update_work_item(
                            args.id,
                            args.work_item_id,
                            &UpdateWorkItem {
                                title: args.title,
                                goal: args.goal,
                                stage_name: args.stage,
                                column_id: args.column,
                                ..Default::default()
                            },
                        )
                        .await?,
                ],
            };
            let single = items.len() == 1;
            let table_of = |items: &[orchestrator_client::api::WorkItem]| {
                let mut t = table(&["id", "title", "stage", "column", "priority"]);
                for w in items {
                    t.add_row(vec![
                        w.id.to_string(),
                        w.title.clone(),
                        opt(&w.stage_name),
                        w.column_id.clone(),
                        w.priority.clone(),
                    ]);
                }
                t
            };
            if single {
                output::emit(global.format(), &items[0], || table_of(&items));
            } else {
                output::emit(global.format(), &items, || table_of(&items));
            }
        }
        WorkflowsCommand::Plan(args) => {
            let workflow = client
                .workflows()
                .planning(
                    args.workspace,
                    &PlanningWorkflow {
                        brief: args.brief,
                        name: args.name,
                        playbook_id: args.playbook,
                        request_id: args.request_id,
                    },
                )
                .await?;
            show_workflow(global, &workflow);
        }
        WorkflowsCommand::Get(args) => {
            let id = super::resolve::workflow(&client, &args.id).await?;
            let detail = client.workflows().get(id).await?;
            output::emit(global.format(), &detail, || {
                let mut t = table(&["task", "title", "state", "kind", "stage", "agent"]);
                for task in &detail.tasks {
                    t.add_row(vec![
                        task.id.to_string(),
                        task.title.clone(),
                        task.state.to_string(),
                        task.task_kind.as_str().to_owned(),
                        opt(&task.stage_name),
                        opt(&task.assigned_agent_id),
                    ]);
                }
                t
            });
            if global.format() == OutputFormat::Table {
                eprintln!(
                    "{} {} ({}), stages: {}",
                    detail.workflow.name,
                    detail.workflow.state.as_str(),
                    detail.workflow.id,
                    detail
                        .workflow_stages
                        .iter()
                        .map(|s| format!("{} [{}]", s.name, s.status))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
        WorkflowsCommand::Events(args) => {
            let mut after = args.after;
            loop {
                let feed = client
                    .workflows()
                    .events(
                        args.id,
                        &WorkflowEventQuery {
                            types: args.types.clone(),
                            after,
                            limit: Some(500),
                            ..Default::default()
                        },
                    )
                    .await?;
                for event in &feed.events {
                    output::emit_line(global.format(), event, || {
                        format!(
                            "{} {} {} {} {}",
                            event.id,
                            event.created_at,
                            event.event_type,
                            event.entity_id,
                            event.data
                        )
                    });
                }
                if let Some(last) = feed.events.last() {
                    after = Some(last.id);
                }
                if feed.has_more {
                    continue;
                }
                if !args.follow {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
        WorkflowsCommand::Redrive(args) => {
            let applied = client
                .workflows()
                .redrive(
                    args.id,
                    &RedriveWorkflow {
                        name: args.name,
                        reason: args.reason,
                        request_id: args.request_id,
                        inheritance_policy: Some(if args.fresh {
                            orchestrator_client::api::InheritancePolicy::InheritNone
                        } else {
                            orchestrator_client::api::InheritancePolicy::InheritAll
                        }),
                        ..Default::default()
                    },
                )
                .await?;
            output::emit(global.format(), &applied, || {
                fields(&[
                    ("id", applied.id.to_string()),
                    ("applied", applied.applied.to_string()),
                ])
            });
        }
        WorkflowsCommand::Pause(args) => show_workflow(
            global,
            &client
                .workflows()
                .act(args.id, "pause", &WorkflowAction::default())
                .await?,
        ),
        WorkflowsCommand::Resume(args) => show_workflow(
            global,
            &client
                .workflows()
                .act(args.id, "resume", &WorkflowAction::default())
                .await?,
        ),
        WorkflowsCommand::Cancel(args) => {
            output::confirm(
                global.yes,
                &format!("cancel workflow {} and its open tasks", args.id),
            )?;
            let workflow = client
                .workflows()
                .act(args.id, "cancel", &WorkflowAction::default())
                .await?;
            show_workflow(global, &workflow)
        }
        WorkflowsCommand::Rail(args) => {
            let query = RailQuery {
                mode: args.mode,
                needs_action_only: args.needs_action.then_some(true),
                lifecycle: args.lifecycle,
                search: args.search,
                ..Default::default()
            };
            let workflows = client.workflows();
            let page = args
                .page
                .fetch(|p| {
                    let query = RailQuery {
                        page: Some(p.page),
                        per_page: Some(p.per_page),
                        ..query.clone()
                    };
                    let workflows = &workflows;
                    async move { workflows.rail(&query).await }
                })
                .await?;
            output::emit(global.format(), &page, || {
                let mut t = table(&["id", "name", "state", "needs action", "tasks done", "mode"]);
                for item in &page.items {
                    let w = &item.item;
                    let total: i64 = w.task_counts.values().sum();
                    let done = w.task_counts.get("completed").copied().unwrap_or(0);
                    t.add_row(vec![
                        w.workflow.id.to_string(),
                        w.workflow.name.clone(),
                        w.workflow.state.as_str().to_owned(),
                        if item.needs_action { "yes" } else { "" }.to_owned(),
                        format!("{done}/{total}"),
                        item.mode.clone(),
                    ]);
                }
                t
            });
        }
        WorkflowsCommand::Workspace(args) => {
            let query = WorkspacePacketQuery {
                work_item_id: args.work_item,
                task_id: args.task,
                tab_scope: args.tab_scope,
                ..Default::default()
            };
            let packet = client.workflows().workspace_packet(args.id, &query).await?;
            output::emit(global.format(), &packet, || {
                let count = |n: Option<usize>| n.map_or_else(|| "-".to_owned(), |n| n.to_string());
                fields(&[
                    ("workflow", packet.workflow.workflow.name.clone()),
                    ("state", packet.workflow.workflow.state.as_str().to_owned()),
                    ("tasks", packet.workflow.tasks.len().to_string()),
                    (
                        "live console events",
                        count(packet.live_console.as_ref().map(|c| c.events.len())),
                    ),
                    (
                        "briefs",
                        count(packet.briefs.as_ref().map(|b| b.handoffs.len())),
                    ),
                    (
                        "history",
                        count(packet.history.as_ref().map(|h| h.activations.len())),
                    ),
                    (
                        "deliverables",
                        count(packet.deliverables.as_ref().map(|d| d.tasks.len())),
                    ),
                ])
            });
        }
        WorkflowsCommand::Board(args) => {
            let board = client.workflows().board(args.id).await?;
            output::emit(global.format(), &board, || {
                let mut t = table(&["column", "work item", "title", "stage"]);
                for column in &board.columns {
                    if column.work_items.is_empty() {
                        t.add_row(vec![column.id.clone(), "-".into(), "-".into(), "-".into()]);
                    }
                    for item in &column.work_items {
                        t.add_row(vec![
                            column.id.clone(),
                            item.id.to_string(),
                            item.title.clone(),
                            opt(&item.stage_name),
                        ]);
                    }
                }
                t
            });
        }
    }
    Ok(())
}
