//! The packets the dashboard reads are whole: the rail's `recent` mode
//! filters before paging, the workspace packet's `briefs_after`,
//! `history_after` and `deliverables_after` cursors return only what arrived
//! since, and `GET /tasks/:id/context?agent_id=` prepares the packet for that
//! agent.

use orchestrator_client::Client;
use orchestrator_client::api::{
    ClaimTask, CompleteTask, CreateHandoff, CreateTask, CreateWorkflow, EnqueueActivation,
    ExecutionMode, RailQuery, RegisterAgent, StartTask, WorkflowAction, WorkspacePacketQuery,
};
use orchestrator_tests::TestServer;
use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

async fn launch_in(admin: &Client, playbook_id: Uuid, workspace_id: Uuid, name: &str) -> Uuid {
    admin
        .workflows()
        .create(&CreateWorkflow {
            playbook_id,
            workspace_id,
            name: name.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .id
}

/// A specialist agent (no tags) and a client acting with its own key.
async fn specialist(admin: &Client, name: &str) -> (Uuid, Client) {
    let agent = admin
        .agents()
        .register(&RegisterAgent {
            name: name.into(),
            execution_mode: Some(ExecutionMode::Specialist),
            issue_api_key: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    let client = Client::new(admin.base_url())
        .unwrap()
        .with_api_key(agent.api_key.clone().expect("key issued"));
    (agent.id, client)
}

async fn get(server: &TestServer, path: &str) -> (StatusCode, Value) {
    let response = server
        .http()
        .get(server.at(path))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap())
}

/// Moves ended workflows' `completed_at` two days back, straight in the
/// database (no route can age a row).
async fn age(server: &TestServer, ids: &[Uuid]) {
    let url = server.database_url();
    let two_days_ago = chrono::Utc::now() - chrono::Duration::days(2);
    let sql = "UPDATE workflows SET completed_at = $1 WHERE id = $2";
    // The same statements over either pool type.
    macro_rules! run {
        ($pool:expr) => {{
            let pool = $pool.await.unwrap();
            for id in ids {
                sqlx::query(sql)
                    .bind(two_days_ago)
                    .bind(id)
                    .execute(&pool)
                    .await
                    .unwrap();
            }
            pool.close().await;
        }};
    }
    if url.starts_with("postgres") {
        run!(sqlx::PgPool::connect(&url));
    } else {
        run!(sqlx::SqlitePool::connect(&url));
    }
}

#[tokio::test]
async fn rail_recent_mode_filters_before_paging() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let first = server.launch_workflow("wf-0").await;
    let detail = admin.workflows().get(first).await.unwrap();
    let mut ids = vec![first];
    for n in 1..5 {
        ids.push(
            launch_in(
                &admin,
                detail.workflow.playbook_id,
                detail.workflow.workspace_id,
                &format!("wf-{n}"),
            )
            .await,
        );
    }
    for id in &ids {
        admin
            .workflows()
            .act(*id, "cancel", &WorkflowAction::default())
            .await
            .unwrap();
    }
    // Three ended two days ago: history keeps them, recent does not.
    age(&server, &ids[..3]).await;

    let (status, recent) = get(
        &server,
        "/api/v1/operations/workflows/rail?mode=recent&per_page=2",
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(recent["meta"]["total"], 2);
    assert_eq!(recent["meta"]["pages"], 1);
    let shown: Vec<&str> = recent["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(shown, ["wf-4", "wf-3"], "newest first, only the last day");
    assert!(
        recent["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["mode"] == "recent")
    );

    let (_, history) = get(
        &server,
        "/api/v1/operations/workflows/rail?mode=history&per_page=2&page=3",
    )
    .await;
    assert_eq!(history["meta"]["total"], 5);
    assert_eq!(history["meta"]["pages"], 3);
    assert_eq!(history["data"].as_array().unwrap().len(), 1);

    // Search and recent combine before paging too.
    let (_, searched) = get(
        &server,
        "/api/v1/operations/workflows/rail?mode=recent&search=WF-4",
    )
    .await;
    assert_eq!(searched["meta"]["total"], 1);
    let (_, live) = get(&server, "/api/v1/operations/workflows/rail").await;
    assert_eq!(live["meta"]["total"], 0);
    let (status, _) = get(&server, "/api/v1/operations/workflows/rail?mode=soon").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn workspace_packet_cursors_return_only_what_arrived_since() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let wf = server.launch_workflow("packets").await;
    let (agent_id, agent) = specialist(&admin, "dev").await;
    let task = |title: &str| CreateTask {
        title: title.into(),
        task_type: "code".into(),
        workflow_id: Some(wf),
        ..Default::default()
    };
    admin.tasks().create(&task("one")).await.unwrap();
    admin.tasks().create(&task("two")).await.unwrap();
    // The agent holds both (handoffs come from work in progress).
    let mut held = Vec::new();
    for _ in 0..2 {
        let claimed = agent
            .tasks()
            .claim(&ClaimTask {
                agent_id,
                workflow_id: Some(wf),
                ..Default::default()
            })
            .await
            .unwrap()
            .expect("a task to claim");
        agent
            .tasks()
            .start(claimed.id, &StartTask::default())
            .await
            .unwrap();
        held.push(claimed.id);
    }
    let (one, two) = (held[0], held[1]);
    for (id, summary) in [(one, "first"), (two, "second")] {
        agent
            .tasks()
            .handoff(
                id,
                &CreateHandoff {
                    summary: summary.into(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    }
    let packet = |query: &str| {
        let path = format!("/api/v1/operations/workflows/{wf}/workspace{query}");
        let server = &server;
        async move {
            let (status, body) = get(server, &path).await;
            assert_eq!(status, StatusCode::OK, "{path}: {body}");
            body["data"].clone()
        }
    };

    // Briefs: everything, then only what follows the cursor.
    let all = packet("").await;
    assert_eq!(all["briefs"]["total"], 2);
    assert_eq!(all["briefs"]["next_after"], 2);
    assert_eq!(all["briefs"]["handoffs"].as_array().unwrap().len(), 2);
    let after_one = packet("?briefs_after=1").await;
    let handoffs = after_one["briefs"]["handoffs"].as_array().unwrap();
    assert_eq!(handoffs.len(), 1);
    assert_eq!(handoffs[0]["handoff"]["summary"], "second");
    assert_eq!(
        packet("?briefs_after=2").await["briefs"]["handoffs"],
        json!([])
    );
    agent
        .tasks()
        .handoff(
            one,
            &CreateHandoff {
                summary: "third".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let since = packet("?briefs_after=2&tab_scope=briefs").await;
    assert_eq!(
        since["briefs"]["handoffs"][0]["handoff"]["summary"],
        "third"
    );
    assert_eq!(since["briefs"]["next_after"], 3);
    assert_eq!(
        since["history"],
        Value::Null,
        "tab_scope narrows the packet"
    );

    // History: the launch's activation, then one enqueued later.
    let seen = all["history"]["next_after"].as_u64().unwrap();
    assert_eq!(seen, 1);
    assert_eq!(
        packet(&format!("?history_after={seen}")).await["history"]["activations"],
        json!([])
    );
    admin
        .workflows()
        .enqueue_activation(
            wf,
            &EnqueueActivation {
                reason: Some("operator nudge".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let history = packet(&format!("?history_after={seen}")).await;
    let fresh = history["history"]["activations"].as_array().unwrap();
    assert_eq!(fresh.len(), 1);
    assert_eq!(fresh[0]["reason"], "operator nudge");

    // Deliverables: a completed task appears once, after the cursor.
    assert_eq!(all["deliverables"]["total"], 0);
    agent
        .tasks()
        .complete(
            two,
            &CompleteTask {
                output: Some(json!({ "shipped": true })),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let done = packet("?deliverables_after=0").await;
    assert_eq!(done["deliverables"]["tasks"][0]["task_id"], json!(two));
    assert_eq!(done["deliverables"]["tasks"][0]["output"]["shipped"], true);
    assert_eq!(done["deliverables"]["next_after"], 1);
    assert_eq!(
        packet("?deliverables_after=1").await["deliverables"]["tasks"],
        json!([])
    );

    // A negative cursor or an unknown parameter is refused and names the field.
    let (status, body) = get(
        &server,
        &format!("/api/v1/operations/workflows/{wf}/workspace?history_after=-1"),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.to_string().contains("history_after"), "{body}");
    let (status, _) = get(
        &server,
        &format!("/api/v1/operations/workflows/{wf}/workspace?briefs_since=1"),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn task_context_honours_agent_id() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let wf = server.launch_workflow("context").await;
    let (holder_id, holder) = specialist(&admin, "holder").await;
    let (other_id, _) = specialist(&admin, "other").await;
    let task = admin
        .tasks()
        .create(&CreateTask {
            title: "read me".into(),
            task_type: "docs".into(),
            workflow_id: Some(wf),
            ..Default::default()
        })
        .await
        .unwrap();

    // Before anyone holds it, any agent of the tenant may read it.
    let packet = admin
        .tasks()
        .context_for_agent(task.id, other_id)
        .await
        .unwrap();
    assert_eq!(packet.agent.as_ref().map(|a| a.id), Some(other_id));
    assert_eq!(packet.task.id, task.id);
    assert_eq!(packet.workflow.as_ref().unwrap()["id"], json!(wf));
    assert!(
        admin
            .tasks()
            .context(task.id)
            .await
            .unwrap()
            .agent
            .is_none()
    );

    holder
        .tasks()
        .claim(&ClaimTask {
            agent_id: holder_id,
            workflow_id: Some(wf),
            ..Default::default()
        })
        .await
        .unwrap()
        .expect("claimed");
    let mine = holder
        .tasks()
        .context_for_agent(task.id, holder_id)
        .await
        .unwrap();
    assert_eq!(mine.agent.unwrap().name, "holder");
    let err = admin
        .tasks()
        .context_for_agent(task.id, other_id)
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(409), "another agent holds the task");
    let err = admin
        .tasks()
        .context_for_agent(task.id, Uuid::new_v4())
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(404), "no such agent");
    let (status, _) = get(
        &server,
        &format!("/api/v1/tasks/{}/context?agent_id=nope", task.id),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn packets_decode_into_the_typed_wire_structs_unchanged() {
    let server = TestServer::start().await;
    let wf = server.launch_workflow("Typed").await;
    let admin = server.admin();
    admin
        .tasks()
        .create(&CreateTask {
            title: "typed task".into(),
            task_type: "code".into(),
            workflow_id: Some(wf),
            ..Default::default()
        })
        .await
        .unwrap();

    // The SDK's typed rail serializes back to exactly the JSON on the wire.
    let (status, raw) = get(&server, "/api/v1/operations/workflows/rail?per_page=5").await;
    assert_eq!(status, StatusCode::OK, "{raw}");
    let rail = admin
        .workflows()
        .rail(&RailQuery {
            per_page: Some(5),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(rail.total, 1);
    assert_eq!(rail.items[0].item.workflow.id, wf);
    assert_eq!(rail.items[0].mode, "live");
    assert_eq!(serde_json::to_value(&rail.items).unwrap(), raw["data"]);

    // The workspace packet too, whole and narrowed by tab_scope.
    for query in ["", "?tab_scope=history"] {
        let (status, raw) = get(
            &server,
            &format!("/api/v1/operations/workflows/{wf}/workspace{query}"),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{raw}");
        let packet = admin
            .workflows()
            .workspace_packet(
                wf,
                &WorkspacePacketQuery {
                    tab_scope: (!query.is_empty()).then(|| "history".into()),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(packet.workflow.workflow.id, wf);
        assert_eq!(packet.board.workflow_id, wf);
        assert!(
            packet
                .workflow
                .tasks
                .iter()
                .any(|t| t.title == "typed task")
        );
        assert_eq!(packet.history.as_ref().unwrap().total, 1);
        assert_eq!(packet.live_console.is_some(), query.is_empty());
        // Event ids and times are the server's; compare all but the feed's
        // newest events, which may grow between the two reads.
        let mut typed = serde_json::to_value(&packet).unwrap();
        let mut wire = raw["data"].clone();
        for v in [&mut typed, &mut wire] {
            v["live_console"] = Value::Null;
        }
        assert_eq!(typed, wire, "{query}");
    }
}
