//! Embeds the control plane in-process, with no HTTP: opens a SQLite store in
//! a temporary directory and runs a workflow from launch to completion
//! through `ControlPlane` alone — a playbook with two stages, a workspace, the
//! launch (which queues the `workflow.created` activation and its
//! orchestrator task), one hybrid agent that plans a task per stage and then
//! does them.
//!
//! ```sh
//! cargo run --example embedded
//! ```

use orchestrator_core::api::playbooks::CreatePlaybook;
use orchestrator_core::api::workspaces::CreateWorkspace;
use orchestrator_core::api::{
    ClaimTask, CompleteTask, CreateTask, CreateWorkflow, ExecutionMode, RegisterAgent, StartTask,
};
use orchestrator_core::{ControlPlane, CoreConfig};
use serde_json::json;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("orch.db").display());
    let admin_key = format!("orch_admin_{}", uuid::Uuid::new_v4().simple());
    let mut config = CoreConfig::new(url);
    config.bootstrap_admin_key = Some(admin_key.clone());
    let cp = ControlPlane::open(config).await?;
    let admin = cp.authenticate(&admin_key).await?;

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

    let agent = cp
        .register_agent(
            &admin,
            RegisterAgent {
                name: "in-process".into(),
                execution_mode: Some(ExecutionMode::Hybrid),
                ..Default::default()
            },
        )
        .await?;
    let claim = ClaimTask {
        agent_id: agent.id,
        ..Default::default()
    };
    let as_agent = |id| CompleteTask {
        agent_id: Some(id),
        ..Default::default()
    };
    while let Some(task) = cp.claim_task(&admin, claim.clone()).await? {
        cp.start_task(
            &admin,
            task.id,
            StartTask {
                agent_id: Some(agent.id),
                ..Default::default()
            },
        )
        .await?;
        if task.is_orchestrator_task {
            let detail = cp.get_workflow(&admin, workflow.id).await?;
            for stage in &detail.workflow_stages {
                cp.create_task(
                    &admin,
                    CreateTask {
                        title: format!("{} stage", stage.name),
                        task_type: "code".into(),
                        workflow_id: Some(workflow.id),
                        stage_name: Some(stage.name.clone()),
                        ..Default::default()
                    },
                )
                .await?;
            }
        }
        let done = cp
            .complete_task(&admin, task.id, as_agent(agent.id))
            .await?;
        println!("  {} {}", done.title, done.state);
    }
    let detail = cp.get_workflow(&admin, workflow.id).await?;
    println!(
        "workflow {} is {} after {} tasks",
        detail.workflow.name,
        detail.workflow.state.as_str(),
        detail.tasks.len()
    );
    cp.store().close().await;
    Ok(())
}
