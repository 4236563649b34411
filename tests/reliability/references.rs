//! References a write names must exist in the caller's tenant; a write that
//! committed never answers an error.

use crate::raw::{assert_field_error, post};
use orchestrator_client::api::workspaces::CreateWorkspace;
use orchestrator_client::api::{ClaimTask, CreateTask, RegisterAgent};
use orchestrator_tests::TestServer;
use reqwest::StatusCode;
use serde_json::json;
use uuid::Uuid;

/// `POST /tasks` naming a workspace, preferred agent or worker, work item or
/// workflow that does not exist is 400 naming the field, and creates
/// nothing (a dangling workspace used to make `claim` with
/// `include_context` answer 404 after the claim had committed).
#[tokio::test]
async fn task_references_are_checked_at_create() {
    let server = TestServer::start().await;
    let admin = server.admin();
    for field in [
        "workspace_id",
        "preferred_agent_id",
        "preferred_worker_id",
        "work_item_id",
        "workflow_id",
    ] {
        let body = json!({ "title": "t", "type": "code", field: Uuid::new_v4() });
        let answer = post(&server, "/api/v1/tasks", &body.to_string()).await;
        assert_field_error(&answer, StatusCode::BAD_REQUEST, "VALIDATION_ERROR", field);
    }
    let tasks = admin
        .tasks()
        .list(&Default::default(), Default::default())
        .await
        .unwrap();
    assert_eq!(tasks.total, 0, "a refused create writes nothing");

    // Real references are accepted, and the claim with its context answers
    // the task it committed.
    let workspace = admin
        .workspaces()
        .create(&CreateWorkspace {
            name: "ws".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let agent = admin
        .agents()
        .register(&RegisterAgent {
            name: "a".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let task = admin
        .tasks()
        .create(&CreateTask {
            title: "t".into(),
            task_type: "code".into(),
            workspace_id: Some(workspace.id),
            preferred_agent_id: Some(agent.id),
            ..Default::default()
        })
        .await
        .unwrap();
    let claimed = admin
        .tasks()
        .claim(&ClaimTask {
            agent_id: agent.id,
            include_context: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claimed.id, task.id);
    assert_eq!(claimed.context["workspace"]["id"], json!(workspace.id));
}
