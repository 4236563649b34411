//! A small world to aim requests at: a workspace, a playbook, a workflow
//! with a work item, an agent, a worker and a task.

use orchestrator_client::Client;
use orchestrator_client::api::playbooks::CreatePlaybook;
use orchestrator_client::api::workspaces::CreateWorkspace;
use orchestrator_client::api::{
    CreateTask, CreateWorkItem, CreateWorkflow, RegisterAgent, RegisterWorker,
};
use serde_json::json;
use uuid::Uuid;

/// The ids of one of each resource.
#[derive(Debug, Clone, Copy)]
pub struct World {
    pub workspace: Uuid,
    pub playbook: Uuid,
    pub workflow: Uuid,
    pub work_item: Uuid,
    pub agent: Uuid,
    pub worker: Uuid,
    pub task: Uuid,
}

pub async fn world(admin: &Client) -> World {
    let workspace = admin
        .workspaces()
        .create(&CreateWorkspace {
            name: format!("ws-{}", Uuid::new_v4().simple()),
            ..Default::default()
        })
        .await
        .unwrap()
        .id;
    let playbook = admin
        .playbooks()
        .create(&CreatePlaybook {
            name: format!("pb-{}", Uuid::new_v4().simple()),
            outcome: "shipped".into(),
            definition: json!({
                "roles": [{ "name": "dev" }],
                "stages": [{ "name": "plan", "goal": "decide" }],
            }),
            slug: None,
            description: None,
            lifecycle: None,
            request_id: None,
        })
        .await
        .unwrap()
        .id;
    let workflow = admin
        .workflows()
        .create(&CreateWorkflow {
            playbook_id: playbook,
            workspace_id: workspace,
            name: "wf".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .id;
    let work_item = admin
        .workflows()
        .create_work_item(
            workflow,
            &CreateWorkItem {
                title: "item".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .id;
    let agent = admin
        .agents()
        .register(&RegisterAgent {
            name: "agent".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .id;
    let worker = admin
        .workers()
        .register(&RegisterWorker {
            name: "worker".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .worker_id;
    let task = admin
        .tasks()
        .create(&CreateTask {
            title: "task".into(),
            task_type: "code".into(),
            workspace_id: Some(workspace),
            ..Default::default()
        })
        .await
        .unwrap()
        .id;
    World {
        workspace,
        playbook,
        workflow,
        work_item,
        agent,
        worker,
        task,
    }
}
