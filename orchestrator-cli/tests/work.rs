//! `orch workflows|tasks|agents|workers` against a real server: launch with
//! parameters and files, list, events, tasks through their lifecycle, and
//! `launch --watch` exiting 0 when the workflow completes and non-zero when
//! it is cancelled.

use orchestrator_client::api::playbooks::CreatePlaybook;
use orchestrator_client::api::workspaces::CreateWorkspace;
use orchestrator_client::api::{ClaimTask, CompleteTask, ExecutionMode, RegisterAgent};
use orchestrator_tests::TestServer;
use serde_json::json;
use std::process::{Command, Output};
use std::time::Duration;

mod common;

use common::{ORCH, json, orch_with};

async fn orch(server: &TestServer, args: &[&str]) -> Output {
    let env = [
        ("ORCH_URL", server.url.as_str()),
        ("ORCH_API_KEY", server.admin_key.as_str()),
    ];
    orch_with(args, &env).await
}

async fn setup(server: &TestServer) {
    let admin = server.admin();
    admin
        .playbooks()
        .create(&CreatePlaybook {
            name: "Ship".into(),
            outcome: "done".into(),
            definition: json!({ "stages": [{ "name": "build" }] }),
            slug: Some("ship".into()),
            description: None,
            lifecycle: None,
            request_id: None,
        })
        .await
        .unwrap();
    admin
        .workspaces()
        .create(&CreateWorkspace {
            name: "Repo".into(),
            slug: Some("repo".into()),
            ..Default::default()
        })
        .await
        .unwrap();
}

#[tokio::test]
async fn launch_list_events_and_task_lifecycle_through_the_binary() {
    let server = TestServer::start().await;
    setup(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let brief = dir.path().join("brief.md");
    std::fs::write(&brief, "# Brief").unwrap();

    let launched = json(
        &orch(
            &server,
            &[
                "workflows",
                "launch",
                "--playbook",
                "ship",
                "--workspace",
                "repo",
                "--name",
                "Run 1",
                "--param",
                "env=prod",
                "--file",
                brief.to_str().unwrap(),
                "-o",
                "json",
            ],
        )
        .await,
    );
    assert_eq!(launched["state"], "pending");
    assert_eq!(launched["parameters"], json!({ "env": "prod" }));
    assert_eq!(
        launched["initial_input_packet"]["files"][0]["file_name"],
        "brief.md"
    );
    assert_eq!(
        launched["initial_input_packet"]["files"][0]["content_type"],
        "text/markdown"
    );
    let id = launched["id"].as_str().unwrap().to_owned();

    let list = json(&orch(&server, &["workflows", "list", "--json"]).await);
    assert_eq!(list["total"], 1);
    let table = orch(&server, &["workflows", "list"]).await;
    assert!(String::from_utf8_lossy(&table.stdout).contains("Run 1"));
    let events = orch(&server, &["workflows", "events", &id]).await;
    assert!(events.status.success());
    assert!(String::from_utf8_lossy(&events.stdout).contains("workflow.created"));

    let agent = json(
        &orch(
            &server,
            &[
                "agents",
                "register",
                "--name",
                "cli-agent",
                "--execution-mode",
                "hybrid",
                "--json",
            ],
        )
        .await,
    );
    let agent_id = agent["id"].as_str().unwrap().to_owned();
    assert_eq!(agent["routing_tags"], json!(["orchestrator"]));
    let claimed = json(&orch(&server, &["tasks", "claim", "--agent", &agent_id, "--json"]).await);
    assert_eq!(claimed["state"], "claimed");
    assert_eq!(claimed["task_kind"], "orchestrator");
    let task_id = claimed["id"].as_str().unwrap().to_owned();
    let started = json(
        &orch(
            &server,
            &["tasks", "start", &task_id, "--agent", &agent_id, "--json"],
        )
        .await,
    );
    assert_eq!(started["state"], "in_progress");
    let done = json(
        &orch(
            &server,
            &[
                "tasks",
                "complete",
                &task_id,
                "--agent",
                &agent_id,
                "--result",
                r#"{"ok":true}"#,
                "--json",
            ],
        )
        .await,
    );
    assert_eq!(done["state"], "completed");
    assert_eq!(done["output"], json!({ "ok": true }));
    // A refused transition exits 5 (conflict); nothing to claim prints nothing and exits 0.
    let again = orch(&server, &["tasks", "start", &task_id, "--agent", &agent_id]).await;
    assert_eq!(again.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&again.stderr).contains("INVALID_STATE_TRANSITION"));
    let none = orch(&server, &["tasks", "claim", "--agent", &agent_id]).await;
    assert!(none.status.success() && none.stdout.is_empty());
    // The operator verbs.
    let created = json(
        &orch(
            &server,
            &[
                "tasks",
                "create",
                "--title",
                "extra",
                "--priority",
                "high",
                "--json",
            ],
        )
        .await,
    );
    let extra = created["id"].as_str().unwrap().to_owned();
    assert_eq!(
        json(&orch(&server, &["tasks", "cancel", &extra, "--json"]).await)["state"],
        "cancelled"
    );
    assert_eq!(
        json(&orch(&server, &["tasks", "retry", &extra, "--json"]).await)["state"],
        "pending"
    );
    assert_eq!(
        json(
            &orch(
                &server,
                &["tasks", "skip", &extra, "--reason", "later", "--json"]
            )
            .await
        )["state"],
        "completed"
    );
    let retry = orch(&server, &["tasks", "retry", &extra]).await;
    assert_eq!(
        retry.status.code(),
        Some(5),
        "retry from completed is refused"
    );
    let tasks = json(&orch(&server, &["tasks", "list", "--workflow", &id, "--json"]).await);
    assert_eq!(tasks["total"], 1);
    let board = orch(&server, &["workflows", "board", &id]).await;
    assert!(board.status.success());
    let agents = json(&orch(&server, &["agents", "list", "--json"]).await);
    assert_eq!(agents["total"], 1);
}

#[tokio::test]
async fn launch_watch_exits_zero_on_completed_and_non_zero_on_cancelled() {
    let server = TestServer::start().await;
    setup(&server).await;
    let admin = server.admin();
    let agent = admin
        .agents()
        .register(&RegisterAgent {
            name: "worker".into(),
            execution_mode: Some(ExecutionMode::Hybrid),
            ..Default::default()
        })
        .await
        .unwrap();

    // Completed: the agent does the orchestrator task while `--watch` follows.
    let watcher = {
        let (url, key) = (server.url.clone(), server.admin_key.clone());
        tokio::task::spawn_blocking(move || {
            Command::new(ORCH)
                .args([
                    "workflows",
                    "launch",
                    "--playbook",
                    "ship",
                    "--workspace",
                    "repo",
                    "--name",
                    "Watched",
                    "--watch",
                    "-o",
                    "json",
                ])
                .env("ORCH_URL", url)
                .env("ORCH_API_KEY", key)
                .env("ORCH_CONFIG", "/nonexistent/orch-config.json")
                .output()
                .unwrap()
        })
    };
    let task = loop {
        if let Some(task) = admin
            .tasks()
            .claim(&ClaimTask {
                agent_id: agent.id,
                ..Default::default()
            })
            .await
            .unwrap()
        {
            break task;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    admin
        .tasks()
        .complete(
            task.id,
            &CompleteTask {
                agent_id: Some(agent.id),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let output = watcher.await.unwrap();
    let value = json(&output);
    assert_eq!(value["state"], "completed");

    // Cancelled while watching: non-zero.
    let watcher = {
        let (url, key) = (server.url.clone(), server.admin_key.clone());
        tokio::task::spawn_blocking(move || {
            Command::new(ORCH)
                .args([
                    "workflows",
                    "launch",
                    "--playbook",
                    "ship",
                    "--workspace",
                    "repo",
                    "--name",
                    "Doomed",
                    "--watch",
                ])
                .env("ORCH_URL", url)
                .env("ORCH_API_KEY", key)
                .env("ORCH_CONFIG", "/nonexistent/orch-config.json")
                .output()
                .unwrap()
        })
    };
    let doomed = loop {
        let list = admin
            .workflows()
            .list(&Default::default(), Default::default())
            .await
            .unwrap();
        if let Some(w) = list.items.iter().find(|w| w.workflow.name == "Doomed") {
            break w.workflow.id;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    admin
        .workflows()
        .act(doomed, "cancel", &Default::default())
        .await
        .unwrap();
    let output = watcher.await.unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cancelled"));
}

#[tokio::test]
async fn rail_and_workspace_packet_through_the_binary() {
    let server = TestServer::start().await;
    let (playbook_id, workspace_id) = server.launch_fixtures("Rail", "Rail repo").await;
    let admin = server.admin();
    let mut ids = Vec::new();
    for name in ["Release 1", "Release 2", "Hotfix"] {
        let created = admin
            .workflows()
            .create(&orchestrator_client::api::CreateWorkflow {
                playbook_id,
                workspace_id,
                name: name.into(),
                ..Default::default()
            })
            .await
            .unwrap();
        ids.push(created.id);
    }

    // The rail pages through every live workflow with --all; search narrows it.
    let rail = json(
        &orch(
            &server,
            &[
                "workflows",
                "rail",
                "--per-page",
                "1",
                "--all",
                "-o",
                "json",
            ],
        )
        .await,
    );
    let items = rail["items"].as_array().unwrap();
    assert_eq!(items.len(), 3, "{rail}");
    assert!(items.iter().all(|i| i["mode"] == "live"), "{rail}");
    let found = json(
        &orch(
            &server,
            &["workflows", "rail", "--search", "hotfix", "-o", "json"],
        )
        .await,
    );
    let found = found["items"].as_array().unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0]["id"], ids[2].to_string());
    let table = orch(&server, &["workflows", "rail"]).await;
    assert!(String::from_utf8_lossy(&table.stdout).contains("Release 2"));

    // The packet of one workflow, and only one section with --tab-scope.
    let packet = json(
        &orch(
            &server,
            &["workflows", "workspace", &ids[0].to_string(), "-o", "json"],
        )
        .await,
    );
    assert_eq!(packet["workflow"]["id"], ids[0].to_string());
    assert!(packet["board"]["columns"].is_array(), "{packet}");
    assert!(packet["live_console"].is_object(), "{packet}");
    let briefs = json(
        &orch(
            &server,
            &[
                "workflows",
                "workspace",
                &ids[0].to_string(),
                "--tab-scope",
                "briefs",
                "-o",
                "json",
            ],
        )
        .await,
    );
    assert!(briefs["briefs"].is_object(), "{briefs}");
    assert!(briefs["live_console"].is_null(), "{briefs}");
    // An unknown workflow is "not found" (exit code 4).
    let missing = orch(
        &server,
        &["workflows", "workspace", &uuid::Uuid::new_v4().to_string()],
    )
    .await;
    assert_eq!(missing.status.code(), Some(4));
}
