//! The commands that read: list, get, stages, events, board, rail and the
//! operations workspace packet.

use super::{EventsArgs, GetArgs, IdArg, ListArgs, RailArgs, WorkspaceArgs};
use crate::cli::{GlobalOpts, OutputFormat};
use crate::commands::resolve;
use crate::output::{self, fields, opt, table};
use orchestrator_client::Client;
use orchestrator_client::api::{
    RailQuery, WorkflowEventQuery, WorkflowFilter, WorkflowState, WorkspacePacketQuery,
};
use std::time::Duration;

/// Lists workflows, filtered by state, workspace or playbook.
pub(super) async fn list(
    global: &GlobalOpts,
    client: &Client,
    args: ListArgs,
) -> anyhow::Result<()> {
    let state = match args.state.as_deref() {
        Some(s) => {
            Some(WorkflowState::parse(s).ok_or_else(|| anyhow::anyhow!("unknown state {s}"))?)
        }
        None => None,
    };
    let workspace_id = match &args.workspace {
        Some(text) => Some(resolve::workspace(client, text).await?),
        None => None,
    };
    let playbook_id = match &args.playbook {
        Some(text) => Some(resolve::playbook(client, text).await?),
        None => None,
    };
    let filter = WorkflowFilter {
        state,
        workspace_id,
        playbook_id,
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
    Ok(())
}

/// Shows a workflow with its tasks and stages.
pub(super) async fn get(global: &GlobalOpts, client: &Client, args: GetArgs) -> anyhow::Result<()> {
    let id = resolve::workflow(client, &args.id).await?;
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
    Ok(())
}

/// Prints a workflow's summary line each time it changes, until it ends.
pub(super) async fn get_watch(
    global: &GlobalOpts,
    client: &Client,
    args: GetArgs,
) -> anyhow::Result<()> {
    let id = resolve::workflow(client, &args.id).await?;
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
            super::explain_end(client, &detail).await;
            anyhow::bail!("workflow {id} ended {}", detail.workflow.state.as_str());
        }
        // Nobody can take its pending work: say so once per change.
        let now = crate::commands::why::unclaimable(client, &detail.tasks).await?;
        if now != stalled {
            for line in &now {
                eprintln!("waiting: {line}");
            }
            stalled = now;
        }
        tokio::time::sleep(Duration::from_secs(args.interval.max(1))).await;
    }
}

/// Lists a workflow's stages.
pub(super) async fn stages(
    global: &GlobalOpts,
    client: &Client,
    args: IdArg,
) -> anyhow::Result<()> {
    let id = resolve::workflow(client, &args.id).await?;
    let stages = client.workflows().stages(id).await?;
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
    Ok(())
}

/// Prints a workflow's events, and with `--follow` waits for more.
pub(super) async fn events(
    global: &GlobalOpts,
    client: &Client,
    args: EventsArgs,
) -> anyhow::Result<()> {
    let id = resolve::workflow(client, &args.id).await?;
    let mut after = args.after;
    loop {
        let feed = client
            .workflows()
            .events(
                id,
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
                    event.id, event.created_at, event.event_type, event.entity_id, event.data
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
    Ok(())
}

/// A workflow's board: its columns and their work items.
pub(super) async fn board(global: &GlobalOpts, client: &Client, args: IdArg) -> anyhow::Result<()> {
    let id = resolve::workflow(client, &args.id).await?;
    let board = client.workflows().board(id).await?;
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
    Ok(())
}

/// The operations rail: workflows and whether they need an operator.
pub(super) async fn rail(
    global: &GlobalOpts,
    client: &Client,
    args: RailArgs,
) -> anyhow::Result<()> {
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
    Ok(())
}

/// The operations workspace packet of a workflow, summarised.
pub(super) async fn workspace(
    global: &GlobalOpts,
    client: &Client,
    args: WorkspaceArgs,
) -> anyhow::Result<()> {
    let id = resolve::workflow(client, &args.id).await?;
    let (mut work_item_id, mut task_id) = (None, None);
    if args.work_item.is_some() || args.task.is_some() {
        let detail = client.workflows().get(id).await?;
        if let Some(text) = &args.work_item {
            work_item_id = Some(resolve::work_item_of(&detail.work_items, text)?);
        }
        if let Some(text) = &args.task {
            task_id = Some(resolve::task_of(&detail, text)?);
        }
    }
    let query = WorkspacePacketQuery {
        work_item_id,
        task_id,
        tab_scope: args.tab_scope,
        ..Default::default()
    };
    let packet = client.workflows().workspace_packet(id, &query).await?;
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
    Ok(())
}
