//! A failed workflow is not the end of it (decisions §6): its state is
//! derived again after every task move, so retrying, skipping or reworking
//! the failed task takes it back to `in_progress`, and finishing the work
//! completes it, its stage and its work item. A failed task records when it
//! ended (`completed_at`), which a retry clears.

use orchestrator_client::api::{
    ClaimTask, CompleteTask, CreateTask, CreateWorkItem, CreateWorkflow, ExecutionMode, FailTask,
    RegisterAgent, TaskAction, TaskError, TaskState, WorkflowState,
};
use orchestrator_client::{Client, TaskOperation};
use orchestrator_tests::TestServer;
use uuid::Uuid;

/// An agent with `tags`, and a client holding its key.
async fn agent(admin: &Client, name: &str, tags: &[&str], mode: ExecutionMode) -> (Uuid, Client) {
    let agent = admin
        .agents()
        .register(&RegisterAgent {
            name: name.into(),
            routing_tags: Some(tags.iter().map(|t| t.to_string()).collect()),
            execution_mode: Some(mode),
            issue_api_key: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    let key = agent.api_key.expect("a key");
    let client = Client::new(admin.base_url()).unwrap().with_api_key(key);
    (agent.id, client)
}

/// Claims the next task the agent may take.
async fn claim(client: &Client, agent_id: Uuid) -> orchestrator_client::api::Task {
    client
        .tasks()
        .claim(&ClaimTask {
            agent_id,
            ..Default::default()
        })
        .await
        .unwrap()
        .expect("a task to claim")
}

/// A launched workflow whose only specialist task (on a work item) failed
/// with no retry left: the workflow is `failed`. Answers the workflow, the
/// task, and the developer agent.
async fn failed_workflow(server: &TestServer, name: &str) -> (Uuid, Uuid, (Uuid, Client)) {
    let admin = server.admin();
    let (playbook_id, workspace_id) = server
        .launch_fixtures(&format!("{name} book"), &format!("{name} space"))
        .await;
    let wf = admin
        .workflows()
        .create(&CreateWorkflow {
            playbook_id,
            workspace_id,
            name: name.into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let (orch_id, orch) = agent(&admin, &format!("{name} orch"), &[], ExecutionMode::Hybrid).await;
    let dev = agent(
        &admin,
        &format!("{name} dev"),
        &["role:dev"],
        ExecutionMode::Specialist,
    )
    .await;
    let plan = claim(&orch, orch_id).await;
    let item = admin
        .workflows()
        .create_work_item(
            wf.id,
            &CreateWorkItem {
                title: "the change".into(),
                goal: None,
                stage_name: None,
                column_id: None,
                priority: None,
                metadata: None,
                request_id: None,
            },
        )
        .await
        .unwrap();
    let task = orch
        .tasks()
        .create(&CreateTask {
            title: "risky".into(),
            task_type: "code".into(),
            role: Some("dev".into()),
            workflow_id: Some(wf.id),
            work_item_id: Some(item.id),
            ..Default::default()
        })
        .await
        .unwrap();
    orch.tasks()
        .complete(plan.id, &CompleteTask::default())
        .await
        .unwrap();
    let claimed = claim(&dev.1, dev.0).await;
    assert_eq!(claimed.id, task.id);
    let failed = dev
        .1
        .tasks()
        .fail(
            task.id,
            &FailTask {
                error: Some(TaskError {
                    message: Some("tests failed".into()),
                    ..Default::default()
                }),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(failed.state, TaskState::Failed);
    assert!(
        failed.completed_at.is_some(),
        "a failed task records when it ended"
    );
    let detail = admin.workflows().get(wf.id).await.unwrap();
    assert_eq!(detail.workflow.state, WorkflowState::Failed);
    (wf.id, task.id, dev)
}

/// The workflow's state, its one stage's status and its one work item's
/// completion.
async fn derived(admin: &Client, workflow_id: Uuid) -> (WorkflowState, String, bool) {
    let detail = admin.workflows().get(workflow_id).await.unwrap();
    (
        detail.workflow.state,
        detail.workflow_stages[0].status.clone(),
        detail.work_items[0].completed_at.is_some(),
    )
}

async fn act(admin: &Client, task_id: Uuid, op: TaskOperation, action: TaskAction) {
    admin.tasks().act(task_id, op, &action).await.unwrap();
}

#[tokio::test]
async fn retrying_the_failed_task_reopens_the_workflow_and_finishing_it_completes_it() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let (wf, task, (dev_id, dev)) = failed_workflow(&server, "retry").await;
    act(&admin, task, TaskOperation::Retry, TaskAction::default()).await;
    let retried = admin.tasks().get(task).await.unwrap();
    assert_eq!(retried.state, TaskState::Pending);
    assert_eq!(retried.completed_at, None, "a retry clears the end time");
    let (state, stage, item_done) = derived(&admin, wf).await;
    assert_eq!(state, WorkflowState::InProgress);
    assert_eq!((stage.as_str(), item_done), ("active", false));
    assert_eq!(
        admin
            .workflows()
            .get(wf)
            .await
            .unwrap()
            .workflow
            .completed_at,
        None
    );

    claim(&dev, dev_id).await;
    dev.tasks()
        .complete(task, &CompleteTask::default())
        .await
        .unwrap();
    let (state, stage, item_done) = derived(&admin, wf).await;
    assert_eq!(state, WorkflowState::Completed);
    assert_eq!((stage.as_str(), item_done), ("completed", true));
}

#[tokio::test]
async fn skipping_the_failed_task_completes_the_workflow() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let (wf, task, _) = failed_workflow(&server, "skip").await;
    let action = TaskAction {
        reason: Some("not needed".into()),
        ..Default::default()
    };
    act(&admin, task, TaskOperation::Skip, action).await;
    let (state, stage, item_done) = derived(&admin, wf).await;
    assert_eq!(state, WorkflowState::Completed);
    assert_eq!((stage.as_str(), item_done), ("completed", true));
    let detail = admin.workflows().get(wf).await.unwrap();
    assert!(detail.workflow.completed_at.is_some());
}

#[tokio::test]
async fn requesting_changes_on_the_failed_task_reopens_the_workflow() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let (wf, task, (dev_id, dev)) = failed_workflow(&server, "rework").await;
    let action = TaskAction {
        feedback: Some("handle the empty case".into()),
        ..Default::default()
    };
    act(&admin, task, TaskOperation::RequestChanges, action).await;
    assert_eq!(derived(&admin, wf).await.0, WorkflowState::InProgress);
    let again = claim(&dev, dev_id).await;
    assert_eq!(again.input["feedback"][0], "handle the empty case");
    dev.tasks().fail(task, &FailTask::default()).await.unwrap();
    assert_eq!(
        derived(&admin, wf).await.0,
        WorkflowState::Failed,
        "failing again fails the workflow again"
    );
    act(&admin, task, TaskOperation::Retry, TaskAction::default()).await;
    claim(&dev, dev_id).await;
    dev.tasks()
        .complete(task, &CompleteTask::default())
        .await
        .unwrap();
    let (state, stage, item_done) = derived(&admin, wf).await;
    assert_eq!(state, WorkflowState::Completed);
    assert_eq!((stage.as_str(), item_done), ("completed", true));
}
