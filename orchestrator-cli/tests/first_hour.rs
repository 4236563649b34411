//! What a new user meets in the first hour, through the real `orch`
//! binary: a first start that fails does not lose the admin key, a key
//! never shown can be made offline (`orch admin create-key`), the data
//! directory is private, a closed pipe is no panic, and the exit codes
//! the README promises.

mod common;

use common::{ORCH, orch_with};
use orchestrator_tests::TestServer;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `orch serve` with `args` on a free port, its stderr piped.
fn serve(args: &[&str], port: u16) -> Child {
    Command::new(ORCH)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args(args)
        .env_remove("ORCH_BOOTSTRAP_ADMIN_KEY")
        .env_remove("ORCH_DATABASE_URL")
        .env_remove("ORCH_DATA_DIR")
        .env("ORCH_LOG_FORMAT", "text")
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("orch serve starts")
}

/// Reads the child's stderr until the "listening" line (and whatever the
/// start printed right after it, up to a short quiet spell), then stops it.
fn start_output(mut child: Child) -> String {
    let stderr = child.stderr.take().expect("stderr");
    let (lines, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut text = String::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut listening = false;
    loop {
        let wait = if listening {
            Duration::from_millis(1500)
        } else {
            deadline.saturating_duration_since(Instant::now())
        };
        match received.recv_timeout(wait) {
            Ok(line) => {
                listening |= line.contains("orch is listening");
                text.push_str(&line);
                text.push('\n');
            }
            Err(_) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(listening, "the server did not start: {text}");
    text
}

/// Registers a specialist agent with `tags`, claims the next task it may
/// take and fails it with `message`.
async fn claim_and_fail(server: &TestServer, tags: &[&str], message: &str) -> uuid::Uuid {
    use orchestrator_client::api::{ClaimTask, ExecutionMode, FailTask, RegisterAgent, TaskError};
    let admin = server.admin();
    let agent = admin
        .agents()
        .register(&RegisterAgent {
            name: format!("agent {message}"),
            routing_tags: Some(tags.iter().map(|t| t.to_string()).collect()),
            execution_mode: Some(ExecutionMode::Specialist),
            ..Default::default()
        })
        .await
        .unwrap();
    let task = admin
        .tasks()
        .claim(&ClaimTask {
            agent_id: agent.id,
            ..Default::default()
        })
        .await
        .unwrap()
        .expect("a task to claim");
    let fail = FailTask {
        error: Some(TaskError {
            category: Some("exit_code".into()),
            message: Some(message.into()),
            recoverable: Some(true),
        }),
        agent_id: Some(agent.id),
        ..Default::default()
    };
    admin.tasks().fail(task.id, &fail).await.unwrap();
    task.id
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[tokio::test]
async fn a_start_that_cannot_listen_creates_nothing_and_the_next_one_shows_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data_arg = data.display().to_string();
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port();
    let failed = tokio::task::spawn_blocking({
        let data_arg = data_arg.clone();
        move || {
            let child = serve(&["--data-dir", &data_arg], port);
            child.wait_with_output().unwrap()
        }
    })
    .await
    .unwrap();
    assert!(!failed.status.success());
    let said = String::from_utf8_lossy(&failed.stderr);
    assert!(said.contains("could not listen"), "{said}");
    assert!(
        !data.join("orch.db").exists(),
        "a start that cannot listen must not create the database"
    );
    drop(busy);

    // The next start is the first one: it shows the key.
    let said = tokio::task::spawn_blocking({
        let data_arg = data_arg.clone();
        move || start_output(serve(&["--data-dir", &data_arg], free_port()))
    })
    .await
    .unwrap();
    assert!(said.contains("orch_admin_"), "no admin key shown: {said}");

    // The directory and the database files are this user's only.
    #[cfg(unix)]
    {
        assert_eq!(mode(&data), 0o700);
        for name in ["orch.db", "orch.db-wal", "orch.db-shm"] {
            let file = data.join(name);
            if file.exists() {
                assert_eq!(mode(&file), 0o600, "{name}");
            }
        }
        assert_eq!(mode(&data.join("orch.db")), 0o600);
        // A looser directory is served, with a warning saying what to do.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
        let said = tokio::task::spawn_blocking(move || {
            start_output(serve(&["--data-dir", &data_arg], free_port()))
        })
        .await
        .unwrap();
        assert!(said.contains("chmod 700"), "no warning: {said}");
        assert!(!said.contains("orch_admin_"), "a key is shown once: {said}");
    }
}

#[tokio::test]
async fn a_key_never_shown_is_pointed_out_and_create_key_makes_one_offline() {
    // An embedder's first start generates the admin key and never shows it.
    let mut server = TestServer::start_with(|c| c.core.bootstrap_admin_key = None).await;
    let url = server.database_url();
    server.stop().await;

    let said = tokio::task::spawn_blocking({
        let url = url.clone();
        move || start_output(serve(&["--database-url", &url], free_port()))
    })
    .await
    .unwrap();
    assert!(said.contains("orch admin create-key"), "no hint: {said}");

    let created = orch_with(&["admin", "create-key", "--database-url", &url], &[]).await;
    assert!(
        created.status.success(),
        "{}",
        String::from_utf8_lossy(&created.stderr)
    );
    let key = String::from_utf8_lossy(&created.stdout).trim().to_owned();
    assert!(key.starts_with("orch_admin_"), "{key}");

    // The key works, and the hint is gone.
    let port = free_port();
    let mut child = tokio::task::spawn_blocking({
        let url = url.clone();
        move || {
            serve(
                &["--database-url", &url, "--rate-limit-per-minute", "0"],
                port,
            )
        }
    })
    .await
    .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let mut whoami = None;
    for _ in 0..200 {
        let out = orch_with(
            &["whoami", "-o", "json"],
            &[("ORCH_URL", &base), ("ORCH_API_KEY", &key)],
        )
        .await;
        if out.status.success() {
            whoami = Some(common::json(&out));
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = child.kill();
    let mut rest = String::new();
    let _ = child.stderr.take().unwrap().read_to_string(&mut rest);
    let _ = child.wait();
    assert_eq!(whoami.expect("whoami with the new key")["scope"], "admin");
    assert!(!rest.contains("orch admin create-key"), "{rest}");
}

#[tokio::test]
async fn a_closed_pipe_ends_quietly() {
    let out = tokio::task::spawn_blocking(|| {
        let mut child = Command::new(ORCH)
            .args(["completions", "zsh"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        // The reader is gone (as `| head -1` would be).
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!said.contains("panicked"), "{said}");
    assert_ne!(out.status.code(), Some(101));
}

#[tokio::test]
async fn usage_errors_exit_2_and_name_the_valid_values() {
    let out = orch_with(&["tasks", "list", "--state", "bogus"], &[]).await;
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("pending") && said.contains("in_progress"),
        "{said}"
    );

    let id = uuid::Uuid::new_v4().to_string();
    let env = [
        ("ORCH_URL", "http://127.0.0.1:9"),
        ("ORCH_API_KEY", "orch_admin_x"),
    ];
    let out = orch_with(&["api-keys", "revoke", &id], &env).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--yes"));
}

#[tokio::test]
async fn a_field_path_that_matches_nothing_is_an_error() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let out = common::orch_admin(&server, dir.path(), &["whoami", "--field", "scope"]).await;
    assert_eq!(common::text(&out).trim(), "admin");
    let out = common::orch_admin(&server, dir.path(), &["whoami", "--field", "scoep"]).await;
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("--field scoep matched nothing"), "{said}");
}

#[tokio::test]
async fn a_server_that_is_down_is_named_once() {
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let out = orch_with(
        &["whoami"],
        &[("ORCH_URL", &url), ("ORCH_API_KEY", "orch_admin_x")],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        said.trim(),
        format!("error: cannot reach orch at {url} (connection refused): is `orch serve` running?")
    );
}

#[tokio::test]
async fn tasks_why_explains_a_failure_and_a_task_nobody_can_claim() {
    use orchestrator_client::api::CreateTask;
    let server = TestServer::start().await;
    let admin = server.admin();
    let task = admin
        .tasks()
        .create(&CreateTask {
            title: "build".into(),
            task_type: "code".into(),
            role: Some("dev".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let failed = claim_and_fail(
        &server,
        &["role:dev"],
        "make exited with status 2: missing header",
    )
    .await;
    assert_eq!(failed, task.id);
    let dir = tempfile::tempdir().unwrap();
    let id = task.id.to_string();
    let out = common::orch_admin(&server, dir.path(), &["tasks", "why", &id]).await;
    let text = common::text(&out);
    assert!(text.contains("is failed"), "{text}");
    assert!(
        text.contains("error: make exited with status 2: missing header"),
        "{text}"
    );

    let waiting = admin
        .tasks()
        .create(&CreateTask {
            title: "docs".into(),
            task_type: "docs".into(),
            role: Some("writer".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let id = waiting.id.to_string();
    let out = common::orch_admin(&server, dir.path(), &["tasks", "why", &id]).await;
    let text = common::text(&out);
    assert!(
        text.contains("no online agent has tags role:writer"),
        "{text}"
    );
}

#[tokio::test]
async fn every_list_ends_with_one_paging_footer() {
    let server = TestServer::start().await;
    for name in ["one", "two", "three"] {
        server
            .admin()
            .workspaces()
            .create(&orchestrator_client::api::workspaces::CreateWorkspace {
                name: name.into(),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let out = common::orch_admin(
        &server,
        dir.path(),
        &["workspaces", "list", "--per-page", "2"],
    )
    .await;
    common::text(&out);
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(said.trim(), "showing 1–2 of 3; --page 2 for more, or --all");
    let out = common::orch_admin(&server, dir.path(), &["api-keys", "list", "--all"]).await;
    common::text(&out);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.trim().starts_with("showing 1–"), "{said}");
}

#[tokio::test]
async fn playbooks_and_workspaces_are_found_by_slug_name_or_id_prefix() {
    let server = TestServer::start().await;
    let (playbook_id, workspace_id) = server.launch_fixtures("Ship It", "Main Repo").await;
    let dir = tempfile::tempdir().unwrap();
    let get = async |args: &[&str]| {
        common::json(&common::orch_admin(&server, dir.path(), args).await)["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let prefix = &playbook_id.to_string()[..8];
    for name in ["ship-it", "Ship It", prefix] {
        assert_eq!(
            get(&["playbooks", "get", name, "-o", "json"]).await,
            playbook_id.to_string()
        );
    }
    assert_eq!(
        get(&["workspaces", "get", "main repo", "-o", "json"]).await,
        workspace_id.to_string()
    );
    let out = common::orch_admin(&server, dir.path(), &["playbooks", "get", "nope"]).await;
    assert_eq!(out.status.code(), Some(4));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("no playbook has the id, id prefix, short id, slug or name `nope`"),
        "{said}"
    );
}

#[tokio::test]
async fn uploads_over_the_limits_are_refused_before_sending() {
    let server = TestServer::start().await;
    let (_, workspace_id) = server.launch_fixtures("Up", "Uploads").await;
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.bin");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(11 * 1024 * 1024)
        .unwrap();
    let id = workspace_id.to_string();
    let path = big.display().to_string();
    let out = common::orch_admin(
        &server,
        dir.path(),
        &["workspaces", "files", "upload", &id, &path],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("big.bin is 11.0 MiB; files may be up to 10 MiB each"),
        "{said}"
    );
}

#[tokio::test]
async fn watching_a_workflow_that_failed_exits_1_and_says_why() {
    use orchestrator_client::api::{
        ClaimTask, CompleteTask, CreateTask, CreateWorkflow, ExecutionMode, RegisterAgent,
    };
    let server = TestServer::start().await;
    let admin = server.admin();
    let (playbook_id, workspace_id) = server.launch_fixtures("Doomed", "Doomed repo").await;
    let workflow = admin
        .workflows()
        .create(&CreateWorkflow {
            playbook_id,
            workspace_id,
            name: "nightly build".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    // The orchestrator plans one task for a developer, who fails it.
    let planner = admin
        .agents()
        .register(&RegisterAgent {
            name: "planner".into(),
            execution_mode: Some(ExecutionMode::Hybrid),
            ..Default::default()
        })
        .await
        .unwrap();
    let plan = admin
        .tasks()
        .claim(&ClaimTask {
            agent_id: planner.id,
            ..Default::default()
        })
        .await
        .unwrap()
        .unwrap();
    admin
        .tasks()
        .create(&CreateTask {
            title: "compile".into(),
            task_type: "code".into(),
            role: Some("dev".into()),
            workflow_id: Some(workflow.id),
            ..Default::default()
        })
        .await
        .unwrap();
    let done = CompleteTask {
        agent_id: Some(planner.id),
        ..Default::default()
    };
    admin.tasks().complete(plan.id, &done).await.unwrap();
    claim_and_fail(&server, &["role:dev"], "the compiler crashed").await;
    let state = admin
        .workflows()
        .get(workflow.id)
        .await
        .unwrap()
        .workflow
        .state;
    assert_eq!(state.as_str(), "failed");
    let dir = tempfile::tempdir().unwrap();
    let out = common::orch_admin(
        &server,
        dir.path(),
        &["workflows", "get", "nightly build", "--watch"],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("error: the compiler crashed"), "{said}");
    assert!(said.contains("ended failed"), "{said}");
}
