//! Steering a workflow: activations, pause, resume, cancel and the planning workflow.

use super::*;

#[tokio::test]
async fn activations_pause_resume_cancel_and_the_planning_workflow() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let playbook_id = playbook(&admin, "Ops").await;
    let workspace_id = workspace(&admin, "Ops repo").await;
    let wf = admin
        .workflows()
        .create(&launch(playbook_id, workspace_id, "Ops run"))
        .await
        .unwrap();

    // Enqueue while one is processing: it queues; idempotent by request_id.
    let enqueue = EnqueueActivation {
        request_id: Some("wake-1".into()),
        reason: Some("ping".into()),
        event_type: Some("operator.ping".into()),
        payload: Some(json!({ "n": 1 })),
    };
    let first = admin
        .workflows()
        .enqueue_activation(wf.id, &enqueue)
        .await
        .unwrap();
    assert!(first.applied);
    let replay = admin
        .workflows()
        .enqueue_activation(wf.id, &enqueue)
        .await
        .unwrap();
    assert_eq!((replay.id, replay.applied), (first.id, false));
    let activations = admin.workflows().activations(wf.id).await.unwrap();
    let statuses: Vec<&str> = activations.iter().map(|a| a.status.as_str()).collect();
    assert_eq!(statuses, vec!["processing", "queued"]);

    // Pause stops claims in the workflow; resume allows them again.
    let (orch_id, orch, _) = register(&admin, "orch", &[], ExecutionMode::Hybrid).await;
    let paused = admin
        .workflows()
        .act(wf.id, "pause", &WorkflowAction::default())
        .await
        .unwrap();
    assert_eq!(paused.state, WorkflowState::Paused);
    let err = admin
        .workflows()
        .act(wf.id, "pause", &WorkflowAction::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::InvalidStateTransition));
    assert!(
        orch.tasks()
            .claim(&ClaimTask {
                agent_id: orch_id,
                ..Default::default()
            })
            .await
            .unwrap()
            .is_none()
    );
    let resumed = admin
        .workflows()
        .act(wf.id, "resume", &WorkflowAction::default())
        .await
        .unwrap();
    assert_eq!(resumed.state, WorkflowState::Pending);
    let task = orch
        .tasks()
        .claim(&ClaimTask {
            agent_id: orch_id,
            ..Default::default()
        })
        .await
        .unwrap()
        .unwrap();

    // Completing the orchestrator task completes its activation and starts the queued one.
    orch.tasks()
        .complete(task.id, &CompleteTask::default())
        .await
        .unwrap();
    let activations = admin.workflows().activations(wf.id).await.unwrap();
    let statuses: Vec<&str> = activations.iter().map(|a| a.status.as_str()).collect();
    assert_eq!(statuses, vec!["completed", "processing"]);
    let next = orch
        .tasks()
        .claim(&ClaimTask {
            agent_id: orch_id,
            ..Default::default()
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(next.input["payload"], json!({ "n": 1 }));
    assert_eq!(next.input["reason"], "ping");

    // Cancel cancels open tasks and fails open activations.
    let cancelled = admin
        .workflows()
        .act(
            wf.id,
            "cancel",
            &WorkflowAction {
                reason: Some("enough".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(cancelled.state, WorkflowState::Cancelled);
    assert_eq!(
        orch.tasks().get(next.id).await.unwrap().state,
        TaskState::Cancelled
    );
    assert_eq!(
        admin.workflows().activations(wf.id).await.unwrap()[1].status,
        "failed"
    );
    let err = admin
        .workflows()
        .enqueue_activation(wf.id, &EnqueueActivation::default())
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(409));

    // A planned workflow fails when a task fails with no retry left and nothing else is open.
    let doomed = admin
        .workflows()
        .create(&launch(playbook_id, workspace_id, "Doomed"))
        .await
        .unwrap();
    let (dev_id, dev, _) = register(&admin, "dev", &["role:dev"], ExecutionMode::Specialist).await;
    let plan = {
        let t = orch
            .tasks()
            .claim(&ClaimTask {
                agent_id: orch_id,
                workflow_id: Some(doomed.id),
                ..Default::default()
            })
            .await
            .unwrap()
            .unwrap();
        assert_eq!(t.workflow_id, Some(doomed.id));
        t
    };
    orch.tasks()
        .create(&CreateTask {
            title: "risky".into(),
            task_type: "code".into(),
            role: Some("dev".into()),
            workflow_id: Some(doomed.id),
            ..Default::default()
        })
        .await
        .unwrap();
    orch.tasks()
        .complete(plan.id, &CompleteTask::default())
        .await
        .unwrap();
    let risky = dev
        .tasks()
        .claim(&ClaimTask {
            agent_id: dev_id,
            ..Default::default()
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(risky.workflow_id, Some(doomed.id));
    let failed = dev
        .tasks()
        .fail(
            risky.id,
            &orchestrator_client::api::FailTask {
                error: Some(orchestrator_client::api::TaskError {
                    message: Some("no".into()),
                    ..Default::default()
                }),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(failed.state, TaskState::Failed);
    assert_eq!(
        admin
            .workflows()
            .get(doomed.id)
            .await
            .unwrap()
            .workflow
            .state,
        WorkflowState::Failed
    );

    // Another tenant sees none of it.
    let other = server
        .service()
        .tenants()
        .create(&orchestrator_client::api::CreateTenant {
            name: "Other".into(),
            slug: None,
            request_id: None,
        })
        .await
        .unwrap();
    let stranger = Client::new(&server.url)
        .unwrap()
        .with_api_key(other.admin_key.api_key);
    assert_eq!(
        stranger.workflows().get(wf.id).await.unwrap_err().status(),
        Some(404)
    );
    assert_eq!(
        stranger.tasks().get(next.id).await.unwrap_err().status(),
        Some(404)
    );
    assert_eq!(
        stranger
            .workflows()
            .list(&WorkflowFilter::default(), Default::default())
            .await
            .unwrap()
            .total,
        0
    );
    assert_eq!(
        stranger
            .tasks()
            .list(&Default::default(), Default::default())
            .await
            .unwrap()
            .total,
        0
    );

    // A missing playbook or workspace is refused; another tenant's ids are unknown.
    let err = admin
        .workflows()
        .create(&launch(Uuid::new_v4(), workspace_id, "x"))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(400));

    // The planning workflow: the newest active playbook, the brief as summary.
    let planned = admin
        .workflows()
        .planning(
            workspace_id,
            &PlanningWorkflow {
                brief: "Plan Q3".into(),
                name: "Q3 plan".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(planned.workspace_id, workspace_id);
    assert_eq!(planned.playbook_id, playbook_id);
    assert_eq!(
        planned.initial_input_packet.unwrap().summary.as_deref(),
        Some("Plan Q3")
    );
    let rail: Value = server
        .http()
        .get(server.at("/api/v1/operations/workflows/rail?mode=live"))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(rail["meta"]["total"], 1);
    assert_eq!(rail["data"][0]["id"], json!(planned.id));
    let packet: Value = server
        .http()
        .get(server.at(&format!("/api/v1/operations/workflows/{}/workspace", wf.id)))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(packet["data"]["workflow"]["id"], json!(wf.id));
    assert!(
        packet["data"]["live_console"]["events"]
            .as_array()
            .unwrap()
            .len()
            > 3
    );
    assert_eq!(
        packet["data"]["history"]["activations"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}
