//! `orch envs` against a real server: create from the catalog and by hand,
//! verify with the host probe, block, list, delete.

use common::{json, orch_admin as orch, text};
use orchestrator_tests::TestServer;

mod common;

#[tokio::test]
async fn envs_create_verify_support_list_delete() {
    let server = TestServer::start_with(|config| config.core.host_probe = true).await;
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();

    let catalog = text(&orch(&server, dir, &["envs", "catalog"]).await);
    assert!(
        catalog.contains("python") && catalog.contains("rust"),
        "{catalog}"
    );
    let node = json(
        &orch(
            &server,
            dir,
            &["envs", "from-catalog", "node", "-o", "json"],
        )
        .await,
    );
    assert_eq!(node["catalog_key"], "node");
    assert_eq!(node["compatibility_status"], "unknown");
    let missing = orch(&server, dir, &["envs", "from-catalog", "cobol"]).await;
    assert!(!missing.status.success());
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("not found"),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );

    let mine = json(
        &orch(
            &server,
            dir,
            &[
                "envs",
                "create",
                "--name",
                "Mine",
                "--image",
                "debian:bookworm-slim",
                "--cpu",
                "0.5",
                "--memory",
                "512m",
                "--pull-policy",
                "never",
                "-o",
                "json",
            ],
        )
        .await,
    );
    assert_eq!(mine["pull_policy"], "never");
    let id = mine["id"].as_str().unwrap();
    let verdict = text(&orch(&server, dir, &["envs", "verify", id]).await);
    assert!(
        verdict.contains("compatible") && verdict.contains("host"),
        "{verdict}"
    );
    let shown = json(&orch(&server, dir, &["envs", "get", id, "-o", "json"]).await);
    assert_eq!(shown["compatibility_status"], "compatible");
    let blocked = json(
        &orch(
            &server,
            dir,
            &["envs", "support", id, "blocked", "-o", "json"],
        )
        .await,
    );
    assert_eq!(blocked["support_status"], "blocked");
    let listing = text(&orch(&server, dir, &["envs", "list", "--support", "blocked"]).await);
    assert!(
        listing.contains("Mine") && !listing.contains("Node"),
        "{listing}"
    );
    text(&orch(&server, dir, &["envs", "delete", id]).await);
    let all = json(&orch(&server, dir, &["envs", "list", "-o", "json"]).await);
    assert_eq!(all["total"], 1, "{all}");
}

#[tokio::test]
async fn fleet_workers_and_containers_show_heartbeat_reports() {
    use orchestrator_client::api::fleet::{ContainerReport, ContainerState};
    use orchestrator_client::api::{RegisterWorker, Timestamp, WorkerHeartbeat};
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let registered = server
        .admin()
        .workers()
        .register(&RegisterWorker {
            name: "cli-box".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    server
        .client(&registered.worker_api_key)
        .workers()
        .heartbeat(
            registered.worker_id,
            &WorkerHeartbeat {
                containers: Some(vec![ContainerReport {
                    id: "pid:7".into(),
                    name: "job".into(),
                    image: "host".into(),
                    state: ContainerState::Running,
                    task_id: None,
                    started_at: Timestamp::now(),
                    cpu_percent: None,
                    memory_bytes: None,
                }]),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let workers = text(&orch(&server, dir, &["fleet", "workers"]).await);
    assert!(
        workers.contains("cli-box") && workers.contains("online"),
        "{workers}"
    );
    let live = json(
        &orch(
            &server,
            dir,
            &["fleet", "containers", "--live", "-o", "json"],
        )
        .await,
    );
    assert_eq!(live[0]["id"], "pid:7", "{live}");
    let stopped = json(
        &orch(
            &server,
            dir,
            &["fleet", "containers", "--state", "exited", "-o", "json"],
        )
        .await,
    );
    assert_eq!(stopped["total"], 0, "{stopped}");
}

#[tokio::test]
async fn tasks_create_and_claim_with_an_environment() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let env = json(
        &orch(
            &server,
            dir,
            &[
                "envs", "create", "--name", "Box", "--image", "box:1", "-o", "json",
            ],
        )
        .await,
    );
    let env_id = env["id"].as_str().unwrap().to_owned();
    let task = json(
        &orch(
            &server,
            dir,
            &[
                "tasks",
                "create",
                "--title",
                "boxed",
                "--environment",
                &env_id,
                "-o",
                "json",
            ],
        )
        .await,
    );
    assert_eq!(task["execution_environment"]["id"], env_id.as_str());
    let agent = json(
        &orch(
            &server,
            dir,
            &["agents", "register", "--name", "cli", "-o", "json"],
        )
        .await,
    );
    let agent_id = agent["id"].as_str().unwrap().to_owned();
    // Without the environment the agent gets nothing; asking for it, the task.
    let none = orch(&server, dir, &["tasks", "claim", "--agent", &agent_id]).await;
    assert!(none.status.success() && none.stdout.is_empty());
    let claimed = json(
        &orch(
            &server,
            dir,
            &[
                "tasks",
                "claim",
                "--agent",
                &agent_id,
                "--environment",
                &env_id,
                "-o",
                "json",
            ],
        )
        .await,
    );
    assert_eq!(claimed["id"], task["id"]);
    assert_eq!(claimed["state"], "claimed");
}
