//! The `orch` binary against a real server: serve, login, whoami, api-keys,
//! tenants, output formats, exit codes and completions.

use orchestrator_tests::TestServer;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::{ORCH, json, orch_with};

async fn orch(config: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let config = config.display().to_string();
    let mut env = env.to_vec();
    env.push(("ORCH_CONFIG", &config));
    orch_with(args, &env).await
}

#[tokio::test]
async fn login_whoami_and_key_management_through_the_binary() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");

    let login = orch(
        &config,
        &[],
        &[
            "login",
            "--url",
            &server.url,
            "--api-key",
            &server.admin_key,
            "-o",
            "json",
        ],
    )
    .await;
    let login = json(&login);
    assert_eq!(login["scope"], "admin");
    let saved: Value = serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    assert_eq!(saved["profiles"]["default"]["url"], server.url.as_str());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&config).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    // whoami uses the saved profile; --json is short for -o json.
    let me = json(&orch(&config, &[], &["whoami", "--json"]).await);
    assert_eq!(me["scope"], "admin");
    assert_eq!(me["tenant_id"], "00000000-0000-0000-0000-000000000001");
    let table = orch(&config, &[], &["whoami"]).await;
    assert!(String::from_utf8_lossy(&table.stdout).contains("tenant_id"));

    // ORCH_API_KEY overrides the profile.
    let as_service = json(
        &orch(
            &config,
            &[("ORCH_API_KEY", &server.service_key)],
            &["whoami", "-o", "json"],
        )
        .await,
    );
    assert_eq!(as_service["scope"], "service");

    let created = json(
        &orch(
            &config,
            &[],
            &[
                "api-keys", "create", "--scope", "agent", "--name", "runner", "-o", "json",
            ],
        )
        .await,
    );
    let key = created["api_key"].as_str().unwrap().to_owned();
    assert!(key.starts_with("orch_agent_"));
    let id = created["id"].as_str().unwrap().to_owned();
    let listed = json(&orch(&config, &[], &["api-keys", "list", "-o", "json"]).await);
    assert!(
        listed["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["id"] == id.as_str())
    );
    assert!(server.client(&key).auth().me().await.is_ok());
    let revoked = json(
        &orch(
            &config,
            &[],
            &["api-keys", "revoke", &id, "--yes", "-o", "json"],
        )
        .await,
    );
    assert!(revoked["revoked_at"].is_string());
    assert_eq!(
        server.client(&key).auth().me().await.unwrap_err().status(),
        Some(401)
    );

    // Exit codes: 3 for a refused credential or scope, 4 for not found.
    let forbidden = orch(
        &config,
        &[],
        &["tenants", "create", "--name", "Nope", "--yes"],
    )
    .await;
    assert_eq!(
        forbidden.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&forbidden.stderr)
    );
    assert!(String::from_utf8_lossy(&forbidden.stderr).contains("FORBIDDEN"));
    let missing = orch(
        &config,
        &[],
        &[
            "api-keys",
            "revoke",
            "00000000-0000-0000-0000-000000000009",
            "-y",
        ],
    )
    .await;
    assert_eq!(missing.status.code(), Some(4));
    let bad_key = orch(
        &config,
        &[(
            "ORCH_API_KEY",
            "orch_admin_00000000000000000000000000000000",
        )],
        &["whoami"],
    )
    .await;
    assert_eq!(bad_key.status.code(), Some(3));

    let tenant = json(
        &orch(
            &config,
            &[("ORCH_API_KEY", &server.service_key)],
            &[
                "tenants",
                "create",
                "--name",
                "Acme Labs",
                "-o",
                "json",
                "--yes",
            ],
        )
        .await,
    );
    assert_eq!(tenant["slug"], "acme-labs");
    assert!(
        tenant["admin_key"]["api_key"]
            .as_str()
            .unwrap()
            .starts_with("orch_admin_")
    );

    let completions = orch(&config, &[], &["completions", "bash"]).await;
    assert!(
        completions.status.success()
            && String::from_utf8_lossy(&completions.stdout).contains("_orch")
    );
}

#[tokio::test]
async fn serve_prints_the_first_key_once_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let listen = format!("127.0.0.1:{port}");
    let start = |dir: &Path| {
        Command::new(ORCH)
            .args(["serve", "--listen", &listen, "--data-dir"])
            .arg(dir)
            .env_remove("ORCH_DATABASE_URL")
            .env_remove("ORCH_BOOTSTRAP_ADMIN_KEY")
            .env_remove("ORCH_BOOTSTRAP_SERVICE_KEY")
            .env("NO_COLOR", "1")
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn orch serve")
    };

    let mut child = start(dir.path());
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut admin_key = None;
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut lines = stderr.lines();
    while admin_key.is_none() && Instant::now() < deadline {
        let Some(Ok(line)) = lines.next() else { break };
        if let Some(key) = line
            .split_whitespace()
            .find(|w| w.starts_with("orch_admin_"))
        {
            admin_key = Some(key.to_owned());
        }
    }
    let admin_key = admin_key.expect("the first start prints an admin key");
    let client = orchestrator_client::Client::new(format!("http://{listen}"))
        .unwrap()
        .with_api_key(&admin_key);
    assert_eq!(
        client.auth().me().await.unwrap().scope,
        orchestrator_client::api::Scope::Admin
    );
    assert!(
        dir.path().join("orch.db").exists(),
        "the embedded database lives in the data directory"
    );

    stop(&mut child).await;

    // The second start on the same data directory prints no key, and the key still works.
    let mut child = start(dir.path());
    let stderr = child.stderr.take().unwrap();
    wait_until_ready(&client).await;
    stop(&mut child).await;
    let printed = std::io::read_to_string(stderr).unwrap();
    assert!(
        !printed.contains("orch_admin_"),
        "a key was printed again: {printed}"
    );
}

async fn wait_until_ready(client: &orchestrator_client::Client) {
    for _ in 0..100 {
        if client.auth().me().await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("orch serve did not come up");
}

async fn stop(child: &mut std::process::Child) {
    let pid = child.id().to_string();
    let status = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(status.success());
    for _ in 0..100 {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "orch serve exited with {status}");
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("orch serve did not stop on SIGTERM");
}

#[tokio::test]
async fn workers_connect_prints_json_lines_and_acks_and_signal_sends() {
    use orchestrator_client::api::{CreateTask, RegisterWorker, WorkerAgentSpec};
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    let admin = server.admin();
    let worker = admin
        .workers()
        .register(&RegisterWorker {
            name: "cli-ws".into(),
            agents: Some(vec![WorkerAgentSpec {
                name: "coder".into(),
                routing_tags: Some(vec!["role:cli".into()]),
                execution_mode: None,
            }]),
            ..Default::default()
        })
        .await
        .unwrap();
    let task = admin
        .tasks()
        .create(&CreateTask {
            title: "for the cli".into(),
            task_type: "code".into(),
            role: Some("cli".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let id = worker.worker_id.to_string();
    let output = orch(
        &config,
        &[
            ("ORCH_URL", &server.url),
            ("ORCH_API_KEY", &worker.worker_api_key),
        ],
        &["workers", "connect", &id, "--exit-after", "1"],
    )
    .await;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["type"], "connection.ready");
    assert_eq!(lines[0]["worker_id"], id.as_str());
    assert_eq!(lines[1]["type"], "task.assigned");
    assert_eq!(lines[1]["task"]["id"], task.id.to_string());
    assert_eq!(lines[1]["agent_id"], worker.agents[0].id.to_string());

    let sent = json(
        &orch(
            &config,
            &[
                ("ORCH_URL", &server.url),
                ("ORCH_API_KEY", &server.admin_key),
            ],
            &["workers", "signal", &id, "--drain", "-o", "json"],
        )
        .await,
    );
    assert_eq!(sent["signal"], "drain");
    assert_eq!(sent["worker_id"], id.as_str());
}

#[tokio::test]
async fn version_prints_the_client_and_the_server_without_a_credential() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    let both = json(
        &orch(
            &config,
            &[],
            &["version", "--url", &server.url, "-o", "json"],
        )
        .await,
    );
    assert_eq!(both["client"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(both["server"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(both["server"]["api_version"], "v1");

    // No server there: the client line, then an error and a failing exit.
    let unreachable = orch(&config, &[], &["version", "--url", "http://127.0.0.1:9"]).await;
    assert!(!unreachable.status.success());
    assert!(String::from_utf8_lossy(&unreachable.stdout).contains(env!("CARGO_PKG_VERSION")));
    assert!(String::from_utf8_lossy(&unreachable.stderr).contains("version"));
}
