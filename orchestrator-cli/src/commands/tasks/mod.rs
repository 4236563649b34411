//! `orch tasks list|get|create|claim|start|complete|fail|retry|skip|reassign|escalate|cancel`.

mod args;

use crate::cli::GlobalOpts;
use crate::commands::{resolve, task_run_control};
use crate::config;
use crate::output::{self, fields, opt, table};
pub use args::*;
use orchestrator_client::TaskOperation;
use orchestrator_client::api::{
    BulkActionKind, BulkTarget, ClaimTask, CompleteBatch, CompleteBatchItem, CompleteTask,
    CreateBatch, CreateTask, FailTask, Priority, StartTask, Task, TaskAction, TaskError,
    TaskFilter, TaskKind, TaskState,
};
use uuid::Uuid;

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
    // The one task the command names, resolved from what was typed (Uuid::nil
    // for the commands that name none: they never read it).
    let id = match command.task_text() {
        Some(text) => resolve::task(&client, text).await?,
        None => Uuid::nil(),
    };
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
                workflow_id: resolve::workflow_opt(&client, args.workflow.as_deref()).await?,
                assigned_agent_id: resolve::agent_opt(&client, args.agent.as_deref()).await?,
                delayed: args.delayed.then_some(true),
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
                let task = tasks.get(id).await?;
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
        TasksCommand::Get(_) => tasks.get(id).await?,
        TasksCommand::Watch(args) => {
            use futures_util::StreamExt;
            let mut stream = tasks.stream(id, args.after);
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
                Some(agent) => tasks.context_for_agent(id, agent).await?,
                None => tasks.context(id).await?,
            };
            output::emit(global.document_format(), &context, || table(&[]));
            return Ok(());
        }
        TasksCommand::Why(_) => {
            let task = tasks.get(id).await?;
            output::print_out(super::why::failure(&client, &task).await?.trim_end());
            for line in super::why::unclaimable(&client, std::slice::from_ref(&task)).await? {
                output::print_out(&format!("  {line}"));
            }
            return Ok(());
        }
        TasksCommand::Git(_) => {
            let git = tasks.git(id).await?;
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
                    id,
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
                    id,
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
        TasksCommand::Handoffs(_) => {
            let handoffs = tasks.handoffs(id).await?;
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
                    id,
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
                    id,
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
                    id,
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
            let args = *args;
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
            Some(_) => task_run_control::reschedule(&tasks, id, args).await?,
            None => return task_run_control::bulk_reschedule(global, &client, args).await,
        },
        TasksCommand::Heartbeat(args) => {
            return task_run_control::heartbeat(global, &tasks, id, args).await;
        }
        TasksCommand::CreateBatch(args) => {
            let text = crate::commands::read_path_or_stdin(&args.path)?;
            let items: Vec<CreateTask> = serde_json::from_str(&text)
                .map_err(|e| output::usage(format!("not a JSON array of task bodies: {e}")))?;
            let answers = tasks.create_batch(&CreateBatch { items }).await?;
            output::emit(global.format(), &answers, || {
                let mut t = table(&["#", "task", "state", "error"]);
                for (i, a) in answers.iter().enumerate() {
                    t.add_row(vec![
                        i.to_string(),
                        a.task
                            .as_ref()
                            .map(|t| t.id.to_string())
                            .unwrap_or_default(),
                        opt(&a.task.as_ref().map(|t| t.state)),
                        a.error
                            .as_ref()
                            .map(|e| format!("{}: {}", e.code.as_str(), e.message))
                            .unwrap_or_default(),
                    ]);
                }
                t
            });
            return Ok(());
        }
        TasksCommand::CompleteBatch(args) => {
            let items: Vec<CompleteBatchItem> = match args.items {
                Some(text) => serde_json::from_str(&text)
                    .map_err(|e| output::usage(format!("--items is not a list of items: {e}")))?,
                None => {
                    let output = json_arg(args.result)?;
                    let mut items = Vec::with_capacity(args.ids.len());
                    for text in &args.ids {
                        items.push(CompleteBatchItem {
                            task_id: crate::commands::resolve::task(&client, text).await?,
                            agent_id: args.agent,
                            output: output.clone(),
                            ..Default::default()
                        });
                    }
                    items
                }
            };
            let answers = tasks.complete_batch(&CompleteBatch { items }).await?;
            output::emit(global.format(), &answers, || {
                let mut t = table(&["task", "state", "error"]);
                for a in &answers {
                    t.add_row(vec![
                        a.task_id.to_string(),
                        opt(&a.state),
                        a.error
                            .as_ref()
                            .map(|e| format!("{}: {}", e.code.as_str(), e.message))
                            .unwrap_or_default(),
                    ]);
                }
                t
            });
            return Ok(());
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
                    id,
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
                    id,
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
                    id,
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
            Some(_) => act_with_reason(&tasks, TaskOperation::Retry, id, args.reason).await?,
            None => return bulk_tasks(global, &client, BulkActionKind::Retry, args).await,
        },
        TasksCommand::Skip(args) => {
            act_with_reason(&tasks, TaskOperation::Skip, id, args.reason).await?
        }
        TasksCommand::Escalate(args) => {
            act_with_reason(&tasks, TaskOperation::Escalate, id, args.reason).await?
        }
        TasksCommand::Cancel(args) => match args.id {
            Some(_) => act_with_reason(&tasks, TaskOperation::Cancel, id, args.reason).await?,
            None => return bulk_tasks(global, &client, BulkActionKind::Cancel, args).await,
        },
        TasksCommand::Reassign(args) => {
            tasks
                .act(
                    id,
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
    id: Uuid,
    reason: Option<String>,
) -> orchestrator_client::Result<orchestrator_client::api::Task> {
    tasks
        .act(
            id,
            operation,
            &TaskAction {
                reason,
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
