//! The `id_prefix`, `id_suffix` and `name` list filters the CLI resolves
//! typed ids with (one request whatever the tenant holds), and the filter
//! flags of `orch tasks list`, `orch logs`, `orch events` and the artifact
//! commands, which take what `orch workflows …` takes: a name, a unique id
//! prefix or the short id listings show.

use orchestrator_client::api::{
    ClaimTask, CreateTask, CreateWorkflow, LogCategory, NewLogEntry, RegisterAgent,
};
use orchestrator_tests::TestServer;
use reqwest::StatusCode;
use serde_json::Value;
use std::collections::BTreeSet;
use uuid::Uuid;

mod common;

/// The short id `orch` prints for `id` (its last 8 hex digits).
fn short(id: Uuid) -> String {
    id.simple().to_string()[24..].to_owned()
}

/// `GET /api/v1/{path}` as the admin: status and body.
async fn get(server: &TestServer, path: &str) -> (StatusCode, Value) {
    let response = server
        .http()
        .get(server.at(&format!("/api/v1/{path}")))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap())
}

/// The ids of a list answer, checking its `total` counts them all.
fn ids(body: &Value) -> BTreeSet<String> {
    let items = body["data"].as_array().expect("a list");
    let ids: BTreeSet<String> = items
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(body["meta"]["total"], ids.len(), "{body}");
    ids
}

/// The ids of `all` starting with (or ending with) the hex digits `digits`.
fn expected(all: &[Uuid], digits: &str, suffix: bool) -> BTreeSet<String> {
    all.iter()
        .filter(|id| {
            let hex = id.simple().to_string();
            if suffix {
                hex.ends_with(digits)
            } else {
                hex.starts_with(digits)
            }
        })
        .map(Uuid::to_string)
        .collect()
}

#[tokio::test]
async fn list_filters_find_ids_by_prefix_suffix_and_name() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let (playbook_id, workspace_id) = server.launch_fixtures("Filters", "Filters repo").await;
    let mut workflows = Vec::new();
    for name in ["alpha", "beta", "Gamma"] {
        let created = admin
            .workflows()
            .create(&CreateWorkflow {
                playbook_id,
                workspace_id,
                name: name.into(),
                ..Default::default()
            })
            .await
            .unwrap();
        workflows.push(created.id);
    }
    for n in 0..12 {
        admin
            .tasks()
            .create(&CreateTask {
                title: format!("task {n}"),
                task_type: "code".into(),
                workflow_id: (n % 2 == 0).then_some(workflows[0]),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    let (_, every) = get(&server, "tasks?per_page=100").await;
    let tasks: Vec<Uuid> = ids(&every).iter().map(|i| i.parse().unwrap()).collect();
    assert!(tasks.len() >= 12);

    // Every length of prefix and suffix finds exactly the ids that start or
    // end with it (UUIDv7 ids made together share their leading digits, so
    // the short prefixes match several), in either case.
    for task in &tasks {
        let hex = task.simple().to_string();
        for len in [4, 7, 12, 13, 20, 32] {
            let prefix = &hex[..len];
            let (status, body) = get(&server, &format!("tasks?id_prefix={prefix}")).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            assert_eq!(
                ids(&body),
                expected(&tasks, prefix, false),
                "prefix {prefix}"
            );
            let suffix = &hex[32 - len..];
            let upper = suffix.to_uppercase();
            let (status, body) = get(&server, &format!("tasks?id_suffix={upper}")).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            assert_eq!(
                ids(&body),
                expected(&tasks, suffix, true),
                "suffix {suffix}"
            );
        }
    }
    let shared = &tasks[0].simple().to_string()[..4];
    let (_, body) = get(&server, &format!("tasks?id_prefix={shared}&per_page=1")).await;
    assert_eq!(body["data"].as_array().unwrap().len(), 1);
    assert_eq!(body["meta"]["total"], tasks.len(), "{body}");
    // With the other filters: only the workflow's tasks.
    let (_, body) = get(
        &server,
        &format!("tasks?id_prefix={shared}&workflow_id={}", workflows[0]),
    )
    .await;
    let of_alpha = ids(&body);
    assert!(
        of_alpha.len() >= 6 && of_alpha.len() < tasks.len(),
        "{body}"
    );
    let one = tasks[3].simple().to_string();
    let (_, body) = get(&server, &format!("tasks?id_suffix={}", &one[20..])).await;
    assert_eq!(ids(&body), BTreeSet::from([tasks[3].to_string()]));

    // Workflows: the same filters, and the name (case-insensitive).
    for workflow in &workflows {
        let hex = workflow.simple().to_string();
        let (_, body) = get(&server, &format!("workflows?id_prefix={}", &hex[..5])).await;
        assert_eq!(ids(&body), expected(&workflows, &hex[..5], false));
        let (_, body) = get(&server, &format!("workflows?id_suffix={}", &hex[24..])).await;
        assert_eq!(ids(&body), expected(&workflows, &hex[24..], true));
    }
    let (_, body) = get(&server, "workflows?name=GAMMA").await;
    assert_eq!(ids(&body), BTreeSet::from([workflows[2].to_string()]));
    let (_, body) = get(&server, "workflows?name=gam").await;
    assert!(ids(&body).is_empty());

    // Agents: the same three.
    let mut agents = Vec::new();
    for name in ["scout", "Builder", "reviewer"] {
        let agent = admin
            .agents()
            .register(&RegisterAgent {
                name: name.into(),
                issue_api_key: Some(false),
                ..Default::default()
            })
            .await
            .unwrap();
        agents.push(agent.id);
    }
    for agent in &agents {
        let hex = agent.simple().to_string();
        let (_, body) = get(&server, &format!("agents?id_prefix={}", &hex[..6])).await;
        assert_eq!(ids(&body), expected(&agents, &hex[..6], false));
        let (_, body) = get(&server, &format!("agents?id_suffix={}", &hex[24..])).await;
        assert_eq!(ids(&body), expected(&agents, &hex[24..], true));
    }
    let (_, body) = get(&server, "agents?name=builder").await;
    assert_eq!(ids(&body), BTreeSet::from([agents[1].to_string()]));
    let (_, body) = get(&server, "agents").await;
    assert!(ids(&body).len() >= 3);

    // Not 4 to 32 hex digits: 422 naming the field, on every list.
    let long = "a".repeat(33);
    for bad in ["abc", "0196-a2b3", "xyz1", "%25%25%25%25", long.as_str()] {
        for list in ["tasks", "workflows", "agents"] {
            for field in ["id_prefix", "id_suffix"] {
                let (status, body) = get(&server, &format!("{list}?{field}={bad}")).await;
                assert_eq!(
                    status,
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "{list} {field}={bad}"
                );
                assert!(
                    body["error"]["details"]["issues"]["fieldErrors"][field].is_array(),
                    "{body}"
                );
            }
        }
    }
}

#[tokio::test]
async fn filter_flags_take_names_prefixes_and_short_ids() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let (playbook_id, workspace_id) = server.launch_fixtures("Flags", "Flags repo").await;
    let create = |name: &str| CreateWorkflow {
        playbook_id,
        workspace_id,
        name: name.into(),
        ..Default::default()
    };
    let nightly = admin.workflows().create(&create("nightly")).await.unwrap();
    let weekly = admin.workflows().create(&create("weekly")).await.unwrap();
    let task_in = async |workflow: Uuid, title: &str| {
        admin
            .tasks()
            .create(&CreateTask {
                title: title.into(),
                task_type: "code".into(),
                workflow_id: Some(workflow),
                ..Default::default()
            })
            .await
            .unwrap()
    };
    let held = task_in(nightly.id, "held").await;
    let agent = admin
        .agents()
        .register(&RegisterAgent {
            name: "builder".into(),
            issue_api_key: Some(false),
            ..Default::default()
        })
        .await
        .unwrap();
    let claimed = admin
        .tasks()
        .claim(&ClaimTask {
            agent_id: agent.id,
            workflow_id: Some(nightly.id),
            ..Default::default()
        })
        .await
        .unwrap()
        .expect("a claimable task");
    assert_eq!(claimed.id, held.id);
    let other = task_in(weekly.id, "other").await;
    let dir = tempfile::tempdir().unwrap();
    let orch = async |args: &[&str]| common::orch_admin(&server, dir.path(), args).await;
    let listed_ids = |out: &std::process::Output| -> BTreeSet<String> {
        common::json(out)["items"]
            .as_array()
            .expect("a page")
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_owned())
            .collect()
    };

    // `orch tasks list --workflow/--agent`: a name, a short id, a prefix.
    let by_name = orch(&["tasks", "list", "--workflow", "weekly", "-o", "json"]).await;
    assert!(listed_ids(&by_name).contains(&other.id.to_string()));
    assert!(!listed_ids(&by_name).contains(&held.id.to_string()));
    let by_short = orch(&[
        "tasks",
        "list",
        "--workflow",
        &short(nightly.id),
        "-o",
        "json",
    ])
    .await;
    assert!(listed_ids(&by_short).contains(&held.id.to_string()));
    assert!(!listed_ids(&by_short).contains(&other.id.to_string()));
    for agent_text in [
        "builder".to_owned(),
        short(agent.id),
        agent.id.to_string()[..30].to_owned(),
    ] {
        let out = orch(&["tasks", "list", "--agent", &agent_text, "-o", "json"]).await;
        assert_eq!(
            listed_ids(&out),
            BTreeSet::from([held.id.to_string()]),
            "--agent {agent_text}"
        );
    }

    // `orch logs query|tail|export --workflow/--task`.
    let mut row = NewLogEntry::new(LogCategory::Tool, "tool.build");
    row.workflow_id = Some(nightly.id);
    row.task_id = Some(held.id);
    let mut elsewhere = NewLogEntry::new(LogCategory::Tool, "tool.elsewhere");
    elsewhere.workflow_id = Some(weekly.id);
    elsewhere.task_id = Some(other.id);
    admin.logs().ingest(vec![row, elsewhere]).await.unwrap();
    let logged = orch(&[
        "logs",
        "query",
        "--workflow",
        "nightly",
        "--task",
        &short(held.id),
        "-o",
        "json",
    ])
    .await;
    let rows = common::json(&logged)["items"].as_array().unwrap().clone();
    assert!(!rows.is_empty());
    assert!(
        rows.iter().all(|r| r["task_id"] == held.id.to_string()),
        "{rows:?}"
    );
    assert!(rows.iter().any(|r| r["operation"] == "tool.build"));
    let tail = common::text(&orch(&["logs", "tail", "--workflow", &short(weekly.id)]).await);
    assert!(
        tail.contains("tool.elsewhere") && !tail.contains("tool.build"),
        "{tail}"
    );
    let export = dir.path().join("export.json");
    let export_text = export.display().to_string();
    common::text(
        &orch(&[
            "logs",
            "export",
            "--task",
            &short(other.id),
            "--out",
            &export_text,
        ])
        .await,
    );
    let exported = std::fs::read_to_string(&export).unwrap();
    assert!(
        exported.contains("tool.elsewhere") && !exported.contains("tool.build"),
        "{exported}"
    );

    // `orch events list --workflow` and `--entity-type task --entity-id`.
    let events =
        common::json(&orch(&["events", "list", "--workflow", "weekly", "-o", "json"]).await);
    let events = events["items"].as_array().unwrap();
    assert!(!events.is_empty());
    assert!(
        events
            .iter()
            .all(|e| e["workflow_id"] == weekly.id.to_string())
    );
    let about = orch(&[
        "events",
        "list",
        "--entity-type",
        "task",
        "--entity-id",
        &short(held.id),
        "-o",
        "json",
    ])
    .await;
    let about = common::json(&about);
    let about = about["items"].as_array().unwrap();
    assert!(!about.is_empty());
    assert!(about.iter().all(|e| e["entity_id"] == held.id.to_string()));

    // Artifacts: a task by short id, a workspace by name, filters by name.
    let file = dir.path().join("report.md");
    std::fs::write(&file, "# report").unwrap();
    let file_text = file.display().to_string();
    let uploaded = orch(&[
        "tasks",
        "artifacts",
        "upload",
        &short(held.id),
        &file_text,
        "-o",
        "json",
    ])
    .await;
    let artifact = common::json(&uploaded)["id"].as_str().unwrap().to_owned();
    let listed = orch(&["tasks", "artifacts", "list", &short(held.id), "-o", "json"]).await;
    assert_eq!(listed_ids(&listed), BTreeSet::from([artifact.clone()]));
    let linked = orch(&[
        "workspaces",
        "artifacts",
        "upload",
        "Flags repo",
        &file_text,
        "--name",
        "weekly.md",
        "--workflow-id",
        "weekly",
        "--task-id",
        &short(other.id),
        "-o",
        "json",
    ])
    .await;
    let linked = common::json(&linked);
    assert_eq!(linked["workflow_id"], weekly.id.to_string());
    assert_eq!(linked["task_id"], other.id.to_string());
    let filtered = orch(&[
        "workspaces",
        "artifacts",
        "list",
        "Flags repo",
        "--workflow-id",
        "nightly",
        "-o",
        "json",
    ])
    .await;
    assert_eq!(listed_ids(&filtered), BTreeSet::from([artifact]));

    // Ambiguous (the leading digits ids made together share): exit 1 with
    // both listed; nothing matching: exit 4, as a 404.
    let (a, b) = (held.id.to_string(), other.id.to_string());
    let shared: String = a
        .chars()
        .zip(b.chars())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect();
    assert!(shared.len() >= 4, "{a} {b}");
    let ambiguous = orch(&["logs", "query", "--task", &shared]).await;
    assert_eq!(ambiguous.status.code(), Some(1));
    let said = String::from_utf8_lossy(&ambiguous.stderr);
    assert!(said.contains(&a) && said.contains(&b), "{said}");
    let ambiguous = orch(&["tasks", "get", &shared]).await;
    assert_eq!(ambiguous.status.code(), Some(1));
    for args in [
        &["tasks", "list", "--workflow", "monthly"][..],
        &["tasks", "list", "--agent", "0badc0de"],
        &["events", "list", "--workflow", "0badc0de"],
        &["tasks", "artifacts", "list", "0badc0de"],
        &["tasks", "get", "0badc0de"],
    ] {
        let miss = orch(args).await;
        assert_eq!(miss.status.code(), Some(4), "{args:?}");
    }
}
