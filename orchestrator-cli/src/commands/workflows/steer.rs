//! The commands that change a workflow: activations, work items, planning,
//! redrive, pause, resume and cancel.

use super::{EnqueueArgs, IdArg, PlanArgs, RedriveArgs, WorkItemsCommand, show_workflow};
use crate::cli::GlobalOpts;
use crate::commands::resolve;
use crate::output::{self, fields, opt, table};
use orchestrator_client::Client;
use orchestrator_client::api::{
    CreateWorkItem, EnqueueActivation, PlanningWorkflow, RedriveWorkflow, UpdateWorkItem,
    WorkflowAction,
};

/// Lists a workflow's activations.
pub(super) async fn activations(
    global: &GlobalOpts,
    client: &Client,
    args: IdArg,
) -> anyhow::Result<()> {
    let id = resolve::workflow(client, &args.id).await?;
    let list = client.workflows().activations(id).await?;
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
    Ok(())
}

/// Enqueues an activation.
pub(super) async fn enqueue(
    global: &GlobalOpts,
    client: &Client,
    args: EnqueueArgs,
) -> anyhow::Result<()> {
    let id = resolve::workflow(client, &args.id).await?;
    let applied = client
        .workflows()
        .enqueue_activation(
            id,
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
    Ok(())
}

/// Lists, creates or updates a workflow's work items.
pub(super) async fn work_items(
    global: &GlobalOpts,
    client: &Client,
    command: WorkItemsCommand,
) -> anyhow::Result<()> {
    let workflows = client.workflows();
    let items = match command {
        WorkItemsCommand::List(args) => {
            workflows
                .work_items(resolve::workflow(client, &args.id).await?)
                .await?
        }
        WorkItemsCommand::Create(args) => vec![
            workflows
                .create_work_item(
                    resolve::workflow(client, &args.id).await?,
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
        WorkItemsCommand::Update(args) => {
            let id = resolve::workflow(client, &args.id).await?;
            let items = workflows.work_items(id).await?;
            let work_item_id = resolve::work_item_of(&items, &args.work_item_id)?;
            vec![
                workflows
                    .update_work_item(
                        id,
                        work_item_id,
                        &UpdateWorkItem {
                            title: args.title,
                            goal: args.goal,
                            stage_name: args.stage,
                            column_id: args.column,
                            ..Default::default()
                        },
                    )
                    .await?,
            ]
        }
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
    Ok(())
}

/// Starts a planning workflow in a workspace.
pub(super) async fn plan(
    global: &GlobalOpts,
    client: &Client,
    args: PlanArgs,
) -> anyhow::Result<()> {
    let workflow = client
        .workflows()
        .planning(
            resolve::workspace(client, &args.workspace).await?,
            &PlanningWorkflow {
                brief: args.brief,
                name: args.name,
                playbook_id: match &args.playbook {
                    Some(text) => Some(resolve::playbook(client, text).await?),
                    None => None,
                },
                request_id: args.request_id,
            },
        )
        .await?;
    show_workflow(global, &workflow);
    Ok(())
}

/// Redrives a workflow (a new attempt).
pub(super) async fn redrive(
    global: &GlobalOpts,
    client: &Client,
    args: RedriveArgs,
) -> anyhow::Result<()> {
    let id = resolve::workflow(client, &args.id).await?;
    let applied = client
        .workflows()
        .redrive(
            id,
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
    Ok(())
}

/// Cancels a workflow and its open tasks, after confirming.
pub(super) async fn cancel(
    global: &GlobalOpts,
    client: &Client,
    args: IdArg,
) -> anyhow::Result<()> {
    let id = resolve::workflow(client, &args.id).await?;
    output::confirm(
        global.yes,
        &format!("cancel workflow {id} and its open tasks"),
    )?;
    let workflow = client
        .workflows()
        .act(id, "cancel", &WorkflowAction::default())
        .await?;
    show_workflow(global, &workflow);
    Ok(())
}

/// Pauses, resumes (or, confirmed elsewhere, cancels) a workflow: `action`
/// is the route's last segment.
pub(super) async fn act(
    global: &GlobalOpts,
    client: &Client,
    args: IdArg,
    action: &str,
) -> anyhow::Result<()> {
    let id = resolve::workflow(client, &args.id).await?;
    show_workflow(
        global,
        &client
            .workflows()
            .act(id, action, &WorkflowAction::default())
            .await?,
    );
    Ok(())
}
