//! What a person types where the CLI wants a workflow, work item or task:
//! a name (or title), a unique id prefix, or the short id listings show
//! (the last 8 hex digits). Every `orch workflows` subcommand and the task
//! commands take them; an ambiguous text is an error listing the matches,
//! and a miss exits 4.

use orchestrator_client::api::{CreateTask, CreateWorkflow};
use orchestrator_tests::TestServer;
use uuid::Uuid;

mod common;

/// The short id `orch` prints for `id` (its last 8 hex digits).
fn short(id: Uuid) -> String {
    id.simple().to_string()[24..].to_owned()
}

#[tokio::test]
async fn workflow_commands_take_names_prefixes_and_short_ids() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let (playbook_id, workspace_id) = server.launch_fixtures("Names", "Names repo").await;
    let create = |name: &str| CreateWorkflow {
        playbook_id,
        workspace_id,
        name: name.into(),
        ..Default::default()
    };
    let nightly = admin.workflows().create(&create("nightly")).await.unwrap();
    let weekly = admin.workflows().create(&create("weekly")).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let orch = async |args: &[&str]| common::orch_admin(&server, dir.path(), args).await;
    let id_of = |out: &std::process::Output| common::json(out)["id"].as_str().unwrap().to_owned();

    // By name, by short id, by a unique prefix.
    let paused = common::json(&orch(&["workflows", "pause", "nightly", "-o", "json"]).await);
    assert_eq!(paused["id"], nightly.id.to_string());
    assert_eq!(paused["state"], "paused");
    let resumed = orch(&["workflows", "resume", &short(nightly.id), "-o", "json"]).await;
    assert_eq!(id_of(&resumed), nightly.id.to_string());
    let prefix = &nightly.id.to_string()[..30];
    let stages = orch(&["workflows", "stages", prefix, "-o", "json"]).await;
    common::json(&stages);
    let events = orch(&["workflows", "events", "weekly"]).await;
    assert!(common::text(&events).contains(&weekly.id.to_string()));

    // A work item by short id and by title, within its workflow.
    let item = orch(&[
        "workflows",
        "work-items",
        "create",
        "nightly",
        "--title",
        "Search API",
        "-o",
        "json",
    ])
    .await;
    let item_id: Uuid = id_of(&item).parse().unwrap();
    let moved = common::json(
        &orch(&[
            "workflows",
            "work-items",
            "update",
            &short(nightly.id),
            &short(item_id),
            "--column",
            "active",
            "-o",
            "json",
        ])
        .await,
    );
    assert_eq!(moved["id"], item_id.to_string());
    assert_eq!(moved["column_id"], "active");
    let by_title = orch(&[
        "workflows",
        "work-items",
        "update",
        "nightly",
        "search api",
        "--column",
        "blocked",
        "-o",
        "json",
    ])
    .await;
    assert_eq!(common::json(&by_title)["column_id"], "blocked");

    // A task by short id: in `orch tasks` and in a workflow's packet.
    let task = admin
        .tasks()
        .create(&CreateTask {
            title: "index the docs".into(),
            task_type: "code".into(),
            workflow_id: Some(nightly.id),
            ..Default::default()
        })
        .await
        .unwrap();
    let got = orch(&["tasks", "get", &short(task.id), "-o", "json"]).await;
    assert_eq!(id_of(&got), task.id.to_string());
    let packet = orch(&[
        "workflows",
        "workspace",
        "nightly",
        "--task",
        &short(task.id),
        "--work-item",
        &short(item_id),
        "-o",
        "json",
    ])
    .await;
    common::json(&packet);

    // Ambiguous: two workflows named alike, and the leading digits UUIDv7
    // ids share (a timestamp): both listed, nothing changed.
    admin.workflows().create(&create("weekly")).await.unwrap();
    let twice = orch(&["workflows", "pause", "weekly"]).await;
    assert_eq!(twice.status.code(), Some(1));
    let said = String::from_utf8_lossy(&twice.stderr);
    assert!(said.contains("`weekly` names 2 workflows"), "{said}");
    assert!(said.contains(&weekly.id.to_string()), "{said}");
    assert_ne!(
        admin
            .workflows()
            .get(weekly.id)
            .await
            .unwrap()
            .workflow
            .state
            .as_str(),
        "paused"
    );
    let (a, b) = (nightly.id.to_string(), weekly.id.to_string());
    let shared: String = a
        .chars()
        .zip(b.chars())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect();
    assert!(
        shared.len() >= 4,
        "UUIDv7 ids made together share a prefix: {a} {b}"
    );
    let ambiguous = orch(&["workflows", "board", &shared]).await;
    assert_eq!(ambiguous.status.code(), Some(1));
    let said = String::from_utf8_lossy(&ambiguous.stderr);
    assert!(said.contains(&a) && said.contains(&b), "{said}");

    // Nothing matches: exit 4, as a 404.
    let miss = orch(&["tasks", "get", "0badc0de"]).await;
    assert_eq!(miss.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&miss.stderr).contains("no task has the id"));
}
