//! Workflows end to end: launch → orchestrator activation → specialist work →
//! completed; the event feed; list items; redrives; activations; pause,
//! resume, cancel; the planning workflow; playbook and workspace wiring.

mod steering;

use orchestrator_client::Client;
use orchestrator_client::api::playbooks::CreatePlaybook;
use orchestrator_client::api::workspaces::CreateWorkspace;
use orchestrator_client::api::{
    ClaimTask, CompleteTask, CreateTask, CreateWorkItem, CreateWorkflow, EnqueueActivation,
    ErrorCode, ExecutionMode, InitialInputPacket, InputFile, PlanningWorkflow, RedriveWorkflow,
    RegisterAgent, StartTask, TaskKind, TaskState, WorkflowAction, WorkflowEventQuery,
    WorkflowFilter, WorkflowState,
};
use orchestrator_tests::TestServer;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use uuid::Uuid;

async fn playbook(admin: &Client, name: &str) -> Uuid {
    admin
        .playbooks()
        .create(&CreatePlaybook {
            name: name.into(),
            outcome: "shipped".into(),
            definition: json!({
                "roles": [{ "name": "dev" }],
                "stages": [{ "name": "plan", "goal": "decide" }, { "name": "build" }],
            }),
            slug: None,
            description: None,
            lifecycle: None,
            request_id: None,
        })
        .await
        .unwrap()
        .id
}

async fn workspace(admin: &Client, name: &str) -> Uuid {
    admin
        .workspaces()
        .create(&CreateWorkspace {
            name: name.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .id
}

async fn register(
    admin: &Client,
    name: &str,
    tags: &[&str],
    mode: ExecutionMode,
) -> (Uuid, Client, String) {
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
    let key = agent.api_key.clone().expect("a key was issued");
    let client = Client::new(admin.base_url())
        .unwrap()
        .with_api_key(key.clone());
    (agent.id, client, key)
}

fn launch(playbook_id: Uuid, workspace_id: Uuid, name: &str) -> CreateWorkflow {
    CreateWorkflow {
        playbook_id,
        workspace_id,
        name: name.into(),
        ..Default::default()
    }
}

#[tokio::test]
async fn a_workflow_runs_from_launch_to_completed_through_an_orchestrator_and_a_specialist() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let playbook_id = playbook(&admin, "Ship it").await;
    let workspace_id = workspace(&admin, "Repo").await;

    // Launch (idempotent by request_id), budget flattened, input packet kept.
    let mut parameters = BTreeMap::new();
    parameters.insert("branch".to_owned(), "main".to_owned());
    let request = CreateWorkflow {
        request_id: Some("launch-1".into()),
        parameters: Some(parameters.clone()),
        budget: Some(orchestrator_client::api::Budget {
            token_budget: Some(1000.0),
            cost_cap_usd: Some(2.5),
            max_duration_minutes: Some(30.0),
        }),
        initial_input_packet: Some(InitialInputPacket {
            summary: Some("build the thing".into()),
            structured_inputs: Some(json!({ "k": 1 })),
            files: Some(vec![InputFile {
                file_name: "brief.md".into(),
                content_base64: "aGVsbG8=".into(),
                content_type: Some("text/markdown".into()),
            }]),
        }),
        ..launch(playbook_id, workspace_id, "Release 1")
    };
    let workflow = admin.workflows().create(&request).await.unwrap();
    assert_eq!(workflow.state, WorkflowState::Pending);
    assert_eq!(
        (
            workflow.lifecycle.as_str(),
            workflow.attempt_number,
            workflow.attempt_kind.as_str()
        ),
        ("planned", 1, "initial")
    );
    assert_eq!(workflow.parameters, parameters);
    assert_eq!(workflow.token_budget, Some(1000.0));
    assert_eq!(workflow.cost_cap_usd, Some(2.5));
    assert_eq!(
        workflow
            .initial_input_packet
            .as_ref()
            .unwrap()
            .files
            .as_ref()
            .unwrap()[0]
            .file_name,
        "brief.md"
    );
    let replay = admin.workflows().create(&request).await.unwrap();
    assert_eq!(replay.id, workflow.id);

    // Stages from the playbook, a processing activation and its orchestrator task.
    let detail = admin.workflows().get(workflow.id).await.unwrap();
    let stages: Vec<(&str, &str)> = detail
        .workflow_stages
        .iter()
        .map(|s| (s.name.as_str(), s.status.as_str()))
        .collect();
    assert_eq!(stages, vec![("plan", "active"), ("build", "pending")]);
    assert_eq!(detail.activations.len(), 1);
    assert_eq!(detail.activations[0].status, "processing");
    assert_eq!(detail.activations[0].event_type, "workflow.created");
    assert_eq!(detail.tasks.len(), 1);
    let orchestration = &detail.tasks[0];
    assert_eq!(orchestration.task_kind, TaskKind::Orchestrator);
    assert_eq!(detail.activations[0].task_id, Some(orchestration.id));
    assert_eq!(orchestration.input["reason"], "workflow created");

    // The specialist cannot take the orchestrator task; the orchestrator can.
    let (dev_id, dev, _) = register(&admin, "dev", &["role:dev"], ExecutionMode::Specialist).await;
    let (orch_id, orch, _) = register(&admin, "orch", &[], ExecutionMode::Orchestrator).await;
    assert!(
        dev.tasks()
            .claim(&ClaimTask {
                agent_id: dev_id,
                ..Default::default()
            })
            .await
            .unwrap()
            .is_none()
    );
    let claimed = orch
        .tasks()
        .claim(&ClaimTask {
            agent_id: orch_id,
            include_context: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claimed.id, orchestration.id);
    assert_eq!(claimed.context["workflow"]["id"], json!(workflow.id));
    assert_eq!(claimed.context["workspace"]["name"], "Repo");
    assert_eq!(claimed.context["attachments"][0]["file_name"], "brief.md");
    assert_eq!(
        admin
            .workflows()
            .get(workflow.id)
            .await
            .unwrap()
            .workflow
            .state,
        WorkflowState::InProgress
    );

    // An agent acting on another agent's task is refused.
    let err = dev
        .tasks()
        .start(claimed.id, &StartTask::default())
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(403));

    // The orchestrator plans: a work item in `build` and a dev task on it, then completes.
    let item = orch
        .workflows()
        .create_work_item(
            workflow.id,
            &CreateWorkItem {
                title: "Implement".into(),
                stage_name: Some("build".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(item.column_id, "inbox");
    let dev_task = orch
        .tasks()
        .create(&CreateTask {
            title: "Implement it".into(),
            task_type: "code".into(),
            role: Some("dev".into()),
            workflow_id: Some(workflow.id),
            work_item_id: Some(item.id),
            stage_name: Some("build".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(dev_task.workspace_id, Some(workspace_id));
    orch.tasks()
        .start(claimed.id, &StartTask::default())
        .await
        .unwrap();
    let done = orch
        .tasks()
        .complete(
            claimed.id,
            &CompleteTask {
                output: Some(json!({ "planned": 1 })),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(done.state, TaskState::Completed);
    let detail = admin.workflows().get(workflow.id).await.unwrap();
    assert_eq!(detail.activations[0].status, "completed");
    assert_eq!(
        detail.workflow.state,
        WorkflowState::InProgress,
        "the dev task is still open"
    );
    assert_eq!(detail.workflow_stages[1].status, "active");

    // The specialist does the work; the work item and the workflow complete.
    let mine = dev
        .tasks()
        .claim(&ClaimTask {
            agent_id: dev_id,
            ..Default::default()
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(mine.id, dev_task.id);
    dev.tasks()
        .start(mine.id, &StartTask::default())
        .await
        .unwrap();
    let again = dev
        .tasks()
        .start(mine.id, &StartTask::default())
        .await
        .unwrap();
    assert_eq!(
        again.state,
        TaskState::InProgress,
        "a repeated start is a no-op"
    );
    let added = server
        .http()
        .post(server.at(&format!("/api/v1/tasks/{}/artifacts", mine.id)))
        .bearer_auth(&server.admin_key)
        .json(
            &json!({ "file_name": "notes.txt", "content_base64": "bm90ZXM=", "agent_id": dev_id }),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(added.status(), StatusCode::CREATED);
    let complete = CompleteTask {
        artifacts: Some(vec![orchestrator_client::api::TaskArtifact {
            file_name: "report.md".into(),
            content_base64: "IyBkb25l".into(),
            ..Default::default()
        }]),
        request_id: Some("done-1".into()),
        output: Some(json!({ "ok": true })),
        git_info: Some(json!({ "branches": ["feat"], "linked_prs": [{ "number": 7 }] })),
        ..Default::default()
    };
    let finished = dev.tasks().complete(mine.id, &complete).await.unwrap();
    let replayed = dev.tasks().complete(mine.id, &complete).await.unwrap();
    assert_eq!(replayed, finished, "complete replays by request_id");
    let artifacts: Value = server
        .http()
        .get(server.at(&format!(
            "/api/v1/workspaces/{workspace_id}/artifacts?task_id={}",
            mine.id
        )))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut names: Vec<&str> = artifacts["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["file_name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, vec!["notes.txt", "report.md"], "{artifacts}");
    let git = dev.tasks().git(mine.id).await.unwrap();
    assert_eq!(git.branches, json!(["feat"]));
    let detail = admin.workflows().get(workflow.id).await.unwrap();
    assert_eq!(detail.workflow.state, WorkflowState::Completed);
    assert!(detail.workflow.completed_at.is_some());
    assert_eq!(detail.work_items[0].column_id, "done");
    let board = admin.workflows().board(workflow.id).await.unwrap();
    let columns: Vec<(&str, usize)> = board
        .columns
        .iter()
        .map(|c| (c.id.as_str(), c.work_items.len()))
        .collect();
    assert_eq!(
        columns,
        vec![("inbox", 0), ("active", 0), ("blocked", 0), ("done", 1)]
    );

    // The event feed: oldest first, filters, cursor.
    let feed = admin
        .workflows()
        .events(
            workflow.id,
            &WorkflowEventQuery {
                types: Some("task.state_changed".into()),
                limit: Some(500),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(feed.events.windows(2).all(|w| w[0].id < w[1].id));
    assert!(
        feed.events
            .iter()
            .all(|e| e.event_type == "task.state_changed")
    );
    assert!(feed.events.iter().any(|e| e.data["from_state"] == "claimed"
        && e.data["to_state"] == "in_progress"
        && e.data["agent_id"] == json!(dev_id)));
    assert!(!feed.has_more);
    assert_eq!(
        feed.next_after,
        feed.events.last().map(|e| e.id.to_string()),
        "the last page names its last id too"
    );
    let first = admin
        .workflows()
        .events(
            workflow.id,
            &WorkflowEventQuery {
                limit: Some(2),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(first.events.len(), 2);
    assert!(first.has_more);
    assert_eq!(first.events[0].event_type, "workflow.created");
    let next = admin
        .workflows()
        .events(
            workflow.id,
            &WorkflowEventQuery {
                after: first.next_after.as_ref().map(|a| a.parse().unwrap()),
                limit: Some(500),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(next.events[0].id > first.events[1].id);
    let by_item = admin
        .workflows()
        .events(
            workflow.id,
            &WorkflowEventQuery {
                work_item_id: Some(item.id),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(
        !by_item.events.is_empty()
            && by_item
                .events
                .iter()
                .all(|e| e.data["work_item_id"] == json!(item.id))
    );
    let raw: Value = server
        .http()
        .get(server.at(&format!("/api/v1/workflows/{}/events?limit=1", workflow.id)))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        raw["meta"]["next_after"].is_string()
            && raw["meta"]["has_more"] == true
            && raw["meta"]["request_id"].is_string()
    );

    // List items: names, task counts by state, work item summary.
    let list = admin
        .workflows()
        .list(
            &WorkflowFilter {
                workspace_id: Some(workspace_id),
                ..Default::default()
            },
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(list.total, 1);
    let row = &list.items[0];
    assert_eq!(row.workspace_name.as_deref(), Some("Repo"));
    assert_eq!(row.playbook_name.as_deref(), Some("Ship it"));
    assert_eq!(row.task_counts["completed"], 2);
    assert_eq!(row.task_counts["pending"], 0);
    assert_eq!(row.work_item_summary.total_work_items, 1);
    assert_eq!(row.work_item_summary.completed_work_item_count, 1);
    let none = admin
        .workflows()
        .list(
            &WorkflowFilter {
                state: Some(WorkflowState::Pending),
                ..Default::default()
            },
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(none.total, 0);

    // The workspace counts its workflows; the playbook cannot be deleted while referenced.
    let ws = admin.workspaces().get(workspace_id).await.unwrap();
    assert_eq!(
        (ws.summary.workflow_count, ws.summary.open_workflow_count),
        (1, 0)
    );
    let deleted = server
        .http()
        .delete(server.at(&format!("/api/v1/playbooks/{playbook_id}")))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), StatusCode::CONFLICT);

    // A redrive makes attempt 2 in the lineage; a replay answers applied: false.
    let redrive = RedriveWorkflow {
        request_id: Some("again".into()),
        reason: Some("retry".into()),
        ..Default::default()
    };
    let applied = admin
        .workflows()
        .redrive(workflow.id, &redrive)
        .await
        .unwrap();
    assert!(applied.applied);
    let replayed = admin
        .workflows()
        .redrive(workflow.id, &redrive)
        .await
        .unwrap();
    assert_eq!((replayed.id, replayed.applied), (applied.id, false));
    let second = admin.workflows().get(applied.id).await.unwrap().workflow;
    assert_eq!(
        (
            second.attempt_number,
            second.attempt_kind.as_str(),
            second.lineage_id
        ),
        (2, "redrive", workflow.lineage_id)
    );
    assert_eq!(
        second.parameters, parameters,
        "inherit_all carries parameters forward"
    );
    assert_eq!(
        second.initial_input_packet.unwrap().summary.as_deref(),
        Some("build the thing")
    );
}

/// A launch's input files have the upload limits (10 MiB each, 16 MiB per
/// request), not the 1 MiB of a JSON body; a file over them is refused by
/// its name.
#[tokio::test]
async fn a_launch_takes_files_up_to_the_upload_limits() {
    use base64::Engine;
    let server = TestServer::start().await;
    let admin = server.admin();
    let (playbook_id, workspace_id) = server.launch_fixtures("Files", "Files repo").await;
    let file = |name: &str, size: usize| InputFile {
        file_name: name.into(),
        content_base64: base64::engine::general_purpose::STANDARD.encode(vec![b'x'; size]),
        content_type: None,
    };
    let with = |files: Vec<InputFile>| CreateWorkflow {
        initial_input_packet: Some(InitialInputPacket {
            summary: None,
            structured_inputs: None,
            files: Some(files),
        }),
        ..launch(playbook_id, workspace_id, "With files")
    };
    let launched = admin
        .workflows()
        .create(&with(vec![file("design.pdf", 3 * 1024 * 1024)]))
        .await
        .expect("a 3 MiB attachment fits");
    assert_eq!(launched.state, WorkflowState::Pending);
    let error = admin
        .workflows()
        .create(&with(vec![file("video.mp4", 10 * 1024 * 1024 + 1)]))
        .await
        .unwrap_err();
    assert_eq!(error.status(), Some(400));
    assert!(
        error
            .to_string()
            .contains("`video.mp4` is 10.0 MiB; files may be up to 10 MiB each"),
        "{error}"
    );
}

#[tokio::test]
async fn a_work_item_without_a_stage_goes_to_the_current_stage() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let playbook_id = playbook(&admin, "Staged").await;
    let workspace_id = workspace(&admin, "Staged repo").await;
    let workflow = admin
        .workflows()
        .create(&launch(playbook_id, workspace_id, "Staged run"))
        .await
        .unwrap();
    let detail = admin.workflows().get(workflow.id).await.unwrap();
    let current = detail
        .workflow_stages
        .iter()
        .find(|s| s.status == "active")
        .map(|s| s.name.clone())
        .expect("a launched workflow has an active stage");
    let item = admin
        .workflows()
        .create_work_item(
            workflow.id,
            &CreateWorkItem {
                title: "Unstaged".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(item.stage_name.as_deref(), Some(current.as_str()));
    // A named stage is kept as named.
    let last = detail.workflow_stages.last().unwrap().name.clone();
    let named = admin
        .workflows()
        .create_work_item(
            workflow.id,
            &CreateWorkItem {
                title: "Staged".into(),
                stage_name: Some(last.clone()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(named.stage_name, Some(last));
}
