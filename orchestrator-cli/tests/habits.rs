//! The habits of gh and kubectl through the real `orch` binary: `-o yaml`,
//! `--field`, `--all`/`--limit`, confirmations, profiles and logout, error
//! lines, `--watch`, and the commands for routes the CLI lacked before.

use orchestrator_client::api::{CreateTask, CreateWorkflow, TaskState};
use orchestrator_tests::TestServer;
use serde_json::Value;
use std::io::Write;
use std::process::{Command, Output, Stdio};

mod common;

use common::{ORCH, json, orch_admin, orch_with, text};

fn lines(output: &Output) -> Vec<String> {
    text(output).lines().map(str::to_owned).collect()
}

async fn create_tasks(server: &TestServer, n: usize) -> Vec<String> {
    let admin = server.admin();
    let mut ids = Vec::new();
    for i in 0..n {
        let task = admin
            .tasks()
            .create(&CreateTask {
                title: format!("habit {i}"),
                task_type: "code".into(),
                ..Default::default()
            })
            .await
            .unwrap();
        ids.push(task.id.to_string());
    }
    ids
}

#[tokio::test]
async fn yaml_field_selection_and_auto_paging() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mut ids = create_tasks(&server, 45).await;
    ids.sort();

    // -o yaml parses back to the same record as -o json.
    let id = &ids[0];
    let as_json = json(&orch_admin(&server, dir.path(), &["tasks", "get", id, "-o", "json"]).await);
    let yaml = text(&orch_admin(&server, dir.path(), &["tasks", "get", id, "-o", "yaml"]).await);
    let as_yaml: Value = serde_norway::from_str(&yaml).unwrap();
    assert_eq!(as_json, as_yaml);

    // --field on one record: the bare value.
    let state = lines(
        &orch_admin(
            &server,
            dir.path(),
            &["tasks", "get", id, "--field", "state"],
        )
        .await,
    );
    assert_eq!(state, vec!["pending"]);

    // A list without --all is one page; --all reads every page.
    let one_page = lines(
        &orch_admin(
            &server,
            dir.path(),
            &["tasks", "list", "--per-page", "10", "--field", "id"],
        )
        .await,
    );
    assert_eq!(one_page.len(), 10);
    let mut all = lines(
        &orch_admin(
            &server,
            dir.path(),
            &[
                "tasks",
                "list",
                "--per-page",
                "10",
                "--all",
                "--field",
                "id",
            ],
        )
        .await,
    );
    all.sort();
    assert_eq!(all, ids, "every task exactly once");
    let limited = lines(
        &orch_admin(
            &server,
            dir.path(),
            &[
                "tasks",
                "list",
                "--per-page",
                "10",
                "--limit",
                "25",
                "--field",
                "id",
            ],
        )
        .await,
    );
    assert_eq!(limited.len(), 25);
    // The page fields stay reachable.
    let total =
        lines(&orch_admin(&server, dir.path(), &["tasks", "list", "--field", "total"]).await);
    assert_eq!(total, vec!["45"]);
}

#[tokio::test]
async fn destructive_commands_ask_and_refuse_without_a_terminal() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let key = json(
        &orch_admin(
            &server,
            dir.path(),
            &[
                "api-keys", "create", "--scope", "agent", "--name", "doomed", "-o", "json",
            ],
        )
        .await,
    );
    let key_id = key["id"].as_str().unwrap().to_owned();

    // No terminal on stdin and no --yes: refused, nothing changed.
    let refused = orch_admin(&server, dir.path(), &["api-keys", "revoke", &key_id]).await;
    assert_eq!(refused.status.code(), Some(2), "a refusal is a usage error");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--yes"), "{stderr}");
    let keys = server
        .admin()
        .api_keys()
        .list(Default::default())
        .await
        .unwrap();
    assert!(
        keys.items
            .iter()
            .any(|k| k.id.to_string() == key_id && k.revoked_at.is_none())
    );

    let revoked = orch_admin(
        &server,
        dir.path(),
        &["api-keys", "revoke", &key_id, "--yes"],
    )
    .await;
    assert!(revoked.status.success());

    // Cancelling a workflow asks too.
    let (playbook, workspace) = server.launch_fixtures("pb", "ws").await;
    let workflow = server
        .admin()
        .workflows()
        .create(&CreateWorkflow {
            playbook_id: playbook,
            workspace_id: workspace,
            name: "to cancel".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let id = workflow.id.to_string();
    let refused = orch_admin(&server, dir.path(), &["workflows", "cancel", &id]).await;
    assert_eq!(refused.status.code(), Some(2), "a refusal is a usage error");
    assert_ne!(
        server
            .admin()
            .workflows()
            .get(workflow.id)
            .await
            .unwrap()
            .workflow
            .state
            .as_str(),
        "cancelled"
    );
    let cancelled = json(
        &orch_admin(
            &server,
            dir.path(),
            &["workflows", "cancel", &id, "-y", "-o", "json"],
        )
        .await,
    );
    assert_eq!(cancelled["state"], "cancelled");

    // A terminal workflow: --watch prints once and ends.
    let watched = lines(
        &orch_admin(
            &server,
            dir.path(),
            &["workflows", "get", &id, "--watch", "--field", "state"],
        )
        .await,
    );
    assert_eq!(watched, vec!["cancelled"]);

    // The routes the CLI gained.
    let stages = json(
        &orch_admin(
            &server,
            dir.path(),
            &["workflows", "stages", &id, "-o", "json"],
        )
        .await,
    );
    assert!(stages.is_array());
    let activations = json(
        &orch_admin(
            &server,
            dir.path(),
            &["workflows", "activations", "list", &id, "-o", "json"],
        )
        .await,
    );
    assert!(activations.is_array());
    let items = json(
        &orch_admin(
            &server,
            dir.path(),
            &["workflows", "work-items", "list", &id, "-o", "json"],
        )
        .await,
    );
    assert!(items.is_array());
}

#[tokio::test]
async fn errors_print_message_field_errors_and_hint_one_line_each() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let missing = orch_admin(
        &server,
        dir.path(),
        &["tasks", "get", "00000000-0000-0000-0000-00000000abcd"],
    )
    .await;
    assert_eq!(missing.status.code(), Some(4), "exit codes as before");
    let stderr = String::from_utf8_lossy(&missing.stderr).into_owned();
    assert!(stderr.starts_with("error: NOT_FOUND (404): "), "{stderr}");
    for line in stderr.lines() {
        assert!(!line.trim().is_empty());
    }

    // A body the server refuses field by field.
    let bad = orch_admin(
        &server,
        dir.path(),
        &["tasks", "create", "--title", "", "--type", "code"],
    )
    .await;
    assert!(!bad.status.success());
    let stderr = String::from_utf8_lossy(&bad.stderr).into_owned();
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(
        !stderr.contains("[\""),
        "field errors are plain text: {stderr}"
    );
}

#[tokio::test]
async fn profiles_use_delete_and_logout_revoking_the_saved_session() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json").display().to_string();
    let env = |profile: &'static str| {
        vec![
            ("ORCH_CONFIG", config.clone()),
            ("ORCH_PROFILE", profile.to_owned()),
        ]
    };
    let run = |args: Vec<String>, env: Vec<(&'static str, String)>| async move {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        orch_with(&args, &env).await
    };
    let login = |profile: &'static str, session: bool, use_it: bool| {
        let mut args = vec![
            "login".to_owned(),
            "--url".to_owned(),
            server.url.clone(),
            "--api-key".to_owned(),
            server.admin_key.clone(),
        ];
        if session {
            args.push("--session".into());
        }
        if use_it {
            args.push("--use".into());
        }
        run(args, env(profile))
    };
    assert!(login("main", true, false).await.status.success());
    assert!(login("spare", false, false).await.status.success());
    let current = async || {
        let list = json(
            &run(
                vec!["profiles".into(), "list".into(), "-o".into(), "json".into()],
                vec![("ORCH_CONFIG", config.clone())],
            )
            .await,
        );
        list.as_array()
            .unwrap()
            .iter()
            .find(|p| p["current"] == true)
            .map(|p| p["name"].as_str().unwrap().to_owned())
    };
    assert_eq!(
        current().await.as_deref(),
        Some("main"),
        "the first profile saved is current; logging in to another does not switch"
    );
    assert!(login("spare", false, true).await.status.success());

    let list = json(
        &run(
            vec!["profiles".into(), "list".into(), "-o".into(), "json".into()],
            vec![("ORCH_CONFIG", config.clone())],
        )
        .await,
    );
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["main", "spare"]);
    assert_eq!(list[1]["current"], true, "login --use switches");
    assert_eq!(list[0]["has_session"], true);

    let used = run(
        vec!["profiles".into(), "use".into(), "main".into()],
        vec![("ORCH_CONFIG", config.clone())],
    )
    .await;
    assert!(used.status.success());
    let whoami = json(
        &run(
            vec!["whoami".into(), "-o".into(), "json".into()],
            vec![("ORCH_CONFIG", config.clone())],
        )
        .await,
    );
    assert_eq!(whoami["scope"], "admin");

    // The saved session refreshes, then logout revokes it.
    let file: Value = serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    let refresh = file["profiles"]["main"]["refresh_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let refreshed = json(
        &run(
            vec!["auth".into(), "refresh".into(), "-o".into(), "json".into()],
            vec![("ORCH_CONFIG", config.clone())],
        )
        .await,
    );
    assert!(refreshed["token"].as_str().is_some_and(|t| !t.is_empty()));
    let file: Value = serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    let rotated = file["profiles"]["main"]["refresh_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = json(
        &run(
            vec!["logout".into(), "-o".into(), "json".into()],
            vec![("ORCH_CONFIG", config.clone())],
        )
        .await,
    );
    assert_eq!(out["session_revoked"], true);
    assert!(
        server.anonymous().auth().refresh(&rotated).await.is_err(),
        "the session is gone"
    );
    let _ = refresh;
    // The credential is gone from the profile.
    let whoami = run(vec!["whoami".into()], vec![("ORCH_CONFIG", config.clone())]).await;
    assert!(!whoami.status.success());
    assert!(String::from_utf8_lossy(&whoami.stderr).contains("no credential"));

    // Deleting asks, like every destructive command.
    let refused = run(
        vec!["profiles".into(), "delete".into(), "spare".into()],
        vec![("ORCH_CONFIG", config.clone())],
    )
    .await;
    assert!(!refused.status.success());
    let deleted = run(
        vec![
            "profiles".into(),
            "delete".into(),
            "spare".into(),
            "--yes".into(),
        ],
        vec![("ORCH_CONFIG", config.clone())],
    )
    .await;
    assert!(deleted.status.success());
    let list = json(
        &run(
            vec!["profiles".into(), "list".into(), "-o".into(), "json".into()],
            vec![("ORCH_CONFIG", config.clone())],
        )
        .await,
    );
    assert_eq!(list.as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_saved_session_is_refreshed_by_any_command_and_saved_back() {
    let server = TestServer::start_with(|config| {
        config.core.access_token_ttl = std::time::Duration::from_secs(1);
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json").display().to_string();
    let env = [("ORCH_CONFIG", config.as_str())];
    let saved = || -> Value {
        let file: Value = serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
        file["profiles"]["default"].clone()
    };
    let login = orch_with(
        &[
            "login",
            "--url",
            &server.url,
            "--api-key",
            &server.admin_key,
            "--session",
        ],
        &env,
    )
    .await;
    assert!(login.status.success(), "{login:?}");
    let first = saved();
    assert_eq!(
        first["api_key"], "",
        "a session login keeps the key off disk"
    );
    assert!(first["refresh_token"].is_string() && first["access_token"].is_string());

    // The saved access token expires (1 s here); the next command refreshes
    // it before sending and writes the rotated tokens back.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let whoami = json(&orch_with(&["whoami", "-o", "json"], &env).await);
    assert_eq!(whoami["scope"], "admin");
    let second = saved();
    assert_ne!(second["refresh_token"], first["refresh_token"], "rotated");
    assert_ne!(second["access_token"], first["access_token"]);
    // The saved tokens are the live ones: another command, another refresh
    // from them (a stale refresh token would have ended the session).
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let tasks = orch_with(&["tasks", "list", "-o", "json"], &env).await;
    assert!(tasks.status.success(), "{tasks:?}");
    assert_ne!(saved()["refresh_token"], second["refresh_token"]);

    let out = json(&orch_with(&["logout", "-o", "json"], &env).await);
    assert_eq!(out["session_revoked"], true);
    assert!(saved()["access_token"].is_null());
}

#[tokio::test]
async fn task_and_log_commands_for_routes_the_cli_lacked() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let id = create_tasks(&server, 1).await.remove(0);

    let context = json(
        &orch_admin(
            &server,
            dir.path(),
            &["tasks", "context", &id, "-o", "json"],
        )
        .await,
    );
    assert!(context.is_object());
    let git = json(&orch_admin(&server, dir.path(), &["tasks", "git", &id, "-o", "json"]).await);
    assert!(git.get("branches").is_some());
    // A pending task does not stream: the 409 is reported, not a hang.
    let watch = orch_admin(&server, dir.path(), &["tasks", "watch", &id]).await;
    assert!(!watch.status.success());
    // request-changes on a pending task: the server's conflict, exit 5 or 1.
    let changes = orch_admin(
        &server,
        dir.path(),
        &["tasks", "request-changes", &id, "--feedback", "more tests"],
    )
    .await;
    assert!(!changes.status.success());
    let skipped =
        json(&orch_admin(&server, dir.path(), &["tasks", "skip", &id, "-o", "json"]).await);
    assert_eq!(skipped["state"], TaskState::Completed.to_string());
    let watched = lines(
        &orch_admin(
            &server,
            dir.path(),
            &["tasks", "get", &id, "--watch", "--field", "state"],
        )
        .await,
    );
    assert_eq!(watched, vec!["completed"]);

    // logs ingest from stdin (one object a line) and from a file (an array).
    let config = dir.path().join("config.json").display().to_string();
    let mut child = Command::new(ORCH)
        .args(["logs", "ingest", "-", "-o", "json"])
        .env_remove("ORCH_PROFILE")
        .env("ORCH_URL", &server.url)
        .env("ORCH_API_KEY", &server.admin_key)
        .env("ORCH_CONFIG", &config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"category\":\"tool\",\"operation\":\"cli.ingest\"}\n{\"category\":\"tool\",\"operation\":\"cli.ingest\"}\n")
        .unwrap();
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = dir.path().join("rows.json");
    std::fs::write(&file, br#"[{"category":"tool","operation":"cli.ingest"}]"#).unwrap();
    let path = file.display().to_string();
    assert!(
        orch_admin(&server, dir.path(), &["logs", "ingest", &path])
            .await
            .status
            .success()
    );
    let rows = lines(
        &orch_admin(
            &server,
            dir.path(),
            &[
                "logs",
                "query",
                "--operation",
                "cli.ingest",
                "--field",
                "id",
            ],
        )
        .await,
    );
    assert_eq!(rows.len(), 3);
    let operations =
        json(&orch_admin(&server, dir.path(), &["logs", "operations", "-o", "json"]).await);
    assert!(
        operations
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o == "cli.ingest")
    );
    let specialists = json(
        &orch_admin(
            &server,
            dir.path(),
            &["catalog", "specialists", "--all", "-o", "json"],
        )
        .await,
    );
    assert!(specialists["items"].is_array());
    let skills = json(&orch_admin(&server, dir.path(), &["catalog", "skills", "-o", "json"]).await);
    assert!(skills["items"].is_array());
    // claim-credentials reaches the route: no handle is the server's 400.
    let id = create_tasks(&server, 1).await.remove(0);
    let claim = orch_admin(&server, dir.path(), &["tasks", "claim-credentials", &id]).await;
    assert_eq!(claim.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&claim.stderr).starts_with("error: VALIDATION_ERROR (400)"),
        "{}",
        String::from_utf8_lossy(&claim.stderr)
    );
    for helper in ["roles", "actors", "workflows"] {
        let out = json(&orch_admin(&server, dir.path(), &["logs", helper, "-o", "json"]).await);
        assert!(out.is_array(), "{helper}");
    }
}
