//! Embeds the control plane in-process, with no HTTP: opens a SQLite store in
//! a temporary directory, runs the background work (liveness, timeouts,
//! retention) and a workflow from launch to completion through
//! `ControlPlane` alone — a playbook with two stages, a workspace, the
//! launch (which queues the `workflow.created` activation and its
//! orchestrator task), and one in-process worker, a hybrid agent that plans a
//! task per stage and then does them. The worker sleeps on the core's
//! wake-ups when there is nothing to claim, instead of polling.
//!
//! The embedder acts as `Caller::system`, the control plane's own admin
//! principal in a tenant: no API key is invented or bootstrapped.
//!
//! ```sh
//! cargo run --example embedded
//! ```

use orchestrator_core::api::playbooks::CreatePlaybook;
use orchestrator_core::api::workspaces::CreateWorkspace;
use orchestrator_core::api::{
    ClaimTask, CompleteTask, CreateTask, CreateWorkflow, DEFAULT_TENANT_ID, ExecutionMode,
    RegisterAgent, StartTask,
};
use orchestrator_core::{Caller, ControlPlane, CoreConfig};
use serde_json::json;
use std::time::Duration;
use tokio::sync::{broadcast, watch};
use uuid::Uuid;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("orch.db").display());
    let cp = ControlPlane::open(CoreConfig::new(url)).await?;
    let admin = Caller::system(DEFAULT_TENANT_ID);

    // The background work, once per process, until `stop` turns true.
    let (stop, stopped) = watch::channel(false);
    let background = tokio::spawn({
        let cp = cp.clone();
        async move { cp.run_background(stopped).await }
    });

    let playbook = cp
        .create_playbook(&admin, CreatePlaybook {
            name: "Ship a change".into(),
            outcome: "merged".into(),
            definition: json!({ "roles": [{ "name": "dev" }], "stages": [{ "name": "build" }, { "name": "review" }] }),
            slug: None,
            description: None,
            lifecycle: None,
            request_id: None,
        })
        .await?;
    let workspace = cp
        .create_workspace(
            &admin,
            CreateWorkspace {
                name: "Repo".into(),
                ..Default::default()
            },
        )
        .await?;
    let agent = cp
        .register_agent(
            &admin,
            RegisterAgent {
                name: "in-process".into(),
                execution_mode: Some(ExecutionMode::Hybrid),
                issue_api_key: Some(false),
                ..Default::default()
            },
        )
        .await?;
    let worker = tokio::spawn(work(cp.clone(), admin.clone(), agent.id));

    let workflow = cp
        .create_workflow(
            &admin,
            CreateWorkflow {
                playbook_id: playbook.id,
                workspace_id: workspace.id,
                name: "Change 1".into(),
                ..Default::default()
            },
        )
        .await?;
    println!("launched {} ({})", workflow.name, workflow.state.as_str());

    // Wait for the workflow to end, on the same wake-ups.
    let mut wakeups = cp.store().wakeups();
    let detail = loop {
        let detail = cp.get_workflow(&admin, workflow.id).await?;
        if detail.workflow.state.is_terminal() {
            break detail;
        }
        wait(&mut wakeups).await;
    };
    println!(
        "workflow {} is {} after {} tasks",
        detail.workflow.name,
        detail.workflow.state.as_str(),
        detail.tasks.len()
    );
    worker.abort();
    let _ = stop.send(true);
    background.await?;
    cp.store().close().await;
    Ok(())
}

/// The worker loop: claim, do, complete; when nothing is claimable, sleep
/// until the next commit that wrote events (a task created, released or
/// retried) instead of polling.
async fn work(cp: ControlPlane, caller: Caller, agent_id: Uuid) -> anyhow::Result<()> {
    // Subscribed before the first claim, so no wake-up between an empty
    // claim and the wait is missed.
    let mut wakeups = cp.store().wakeups();
    let claim = ClaimTask {
        agent_id,
        ..Default::default()
    };
    loop {
        let Some(task) = cp.claim_task(&caller, claim.clone()).await? else {
            wait(&mut wakeups).await;
            continue;
        };
        cp.start_task(
            &caller,
            task.id,
            StartTask {
                agent_id: Some(agent_id),
                ..Default::default()
            },
        )
        .await?;
        if task.is_orchestrator_task
            && let Some(workflow_id) = task.workflow_id
        {
            // The orchestrator plans one task per stage.
            let detail = cp.get_workflow(&caller, workflow_id).await?;
            for stage in &detail.workflow_stages {
                cp.create_task(
                    &caller,
                    CreateTask {
                        title: format!("{} stage", stage.name),
                        task_type: "code".into(),
                        workflow_id: Some(workflow_id),
                        stage_name: Some(stage.name.clone()),
                        ..Default::default()
                    },
                )
                .await?;
            }
        }
        let done = cp
            .complete_task(
                &caller,
                task.id,
                CompleteTask {
                    agent_id: Some(agent_id),
                    ..Default::default()
                },
            )
            .await?;
        println!("  {} {}", done.title, done.state);
    }
}

/// Waits for the next wake-up of the store (a commit that wrote events or
/// log rows, here or on another replica). A receiver that fell behind has
/// missed wake-ups, which is itself a reason to look again; the timeout is
/// only a safety net.
async fn wait(wakeups: &mut broadcast::Receiver<orchestrator_core::store::Topic>) {
    let _ = tokio::time::timeout(Duration::from_secs(30), wakeups.recv()).await;
}
