//! `orch a2a` (and the other integration commands) against a real server:
//! the card, submit (with flow-limit keys), get and a watch that ends when
//! the task completes.

use orchestrator_client::api::{ClaimTask, CompleteTask};
use orchestrator_tests::TestServer;
use std::process::Output;

mod common;

use common::{json, orch_with};

async fn orch(server: &TestServer, args: &[&str]) -> Output {
    let env = [
        ("ORCH_URL", server.url.as_str()),
        ("ORCH_API_KEY", server.admin_key.as_str()),
    ];
    orch_with(args, &env).await
}

fn text(output: &Output) -> String {
    assert!(
        output.status.success(),
        "orch failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test]
async fn a2a_card_submit_get_and_watch_through_the_binary() {
    let server = TestServer::start().await;
    let card = json(&orch(&server, &["a2a", "card", "--json"]).await);
    assert_eq!(card["protocol"], "a2a");
    assert_eq!(
        card["endpoints"]["submit_task"],
        format!("{}/api/v1/a2a/tasks", server.url)
    );

    let submitted = json(
        &orch(
            &server,
            &[
                "a2a",
                "submit",
                "--title",
                "From the CLI",
                "--external-id",
                "cli-1",
                "--priority",
                "whenever",
                "--metadata",
                r#"{"origin":"cli"}"#,
                "--json",
            ],
        )
        .await,
    );
    assert_eq!(submitted["status"], "submitted");
    assert_eq!(
        submitted["metadata"]["protocol_ingress"]["external_task_id"],
        "cli-1"
    );
    assert_eq!(submitted["metadata"]["protocol_ingress"]["origin"], "cli");
    let id = submitted["id"].as_str().unwrap().to_owned();

    let table = text(&orch(&server, &["a2a", "get", &id]).await);
    assert!(
        table.contains("submitted") && table.contains("cli-1"),
        "{table}"
    );

    // Run the task to completion, then watch: the replay ends by itself.
    let admin = server.admin();
    let agent = admin
        .agents()
        .register(&serde_json::from_value(serde_json::json!({ "name": "cli-runner" })).unwrap())
        .await
        .unwrap();
    let claimed = admin
        .tasks()
        .claim(&ClaimTask {
            agent_id: agent.id,
            ..Default::default()
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claimed.id.to_string(), id);
    admin
        .tasks()
        .complete(
            claimed.id,
            &CompleteTask {
                agent_id: Some(agent.id),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let watched = text(&orch(&server, &["a2a", "watch", &id]).await);
    let statuses: Vec<&str> = watched
        .lines()
        .map(|l| l.split_whitespace().last().unwrap())
        .collect();
    assert_eq!(
        statuses,
        ["submitted", "working", "working", "completed"],
        "{watched}"
    );

    // A task of no one: 404 and a non-zero exit.
    let missing = orch(&server, &["a2a", "get", &uuid::Uuid::new_v4().to_string()]).await;
    assert!(!missing.status.success());
}

/// `orch a2a submit --concurrency-key / --rate-limit-key`: the submitted
/// task carries both keys (and counts under them), and a rate key with no
/// limit set is refused (400 naming the field) with nothing created.
#[tokio::test]
async fn a2a_submit_carries_flow_limit_keys() {
    let server = TestServer::start().await;
    let admin = server.admin();
    admin.limits().set_rate("llm", 5, 60).await.unwrap();
    let submitted = json(
        &orch(
            &server,
            &[
                "a2a",
                "submit",
                "--title",
                "keyed from the CLI",
                "--concurrency-key",
                "repo",
                "--rate-limit-key",
                "llm",
                "--json",
            ],
        )
        .await,
    );
    let id: uuid::Uuid = submitted["id"].as_str().unwrap().parse().unwrap();
    let task = admin.tasks().get(id).await.unwrap();
    assert_eq!(task.concurrency_key.as_deref(), Some("repo"));
    assert_eq!(task.rate_limit_key.as_deref(), Some("llm"));
    let key = admin.limits().get_concurrency("repo").await.unwrap();
    assert_eq!((key.held, key.pending), (0, 1));
    assert_eq!(admin.limits().get_rate("llm").await.unwrap().pending, 1);

    let refused = orch(
        &server,
        &[
            "a2a",
            "submit",
            "--title",
            "no such rate limit",
            "--rate-limit-key",
            "unset",
        ],
    )
    .await;
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("rate_limit_key"), "{stderr}");
    let tasks = admin
        .tasks()
        .list(&Default::default(), Default::default())
        .await
        .unwrap();
    assert_eq!(tasks.total, 1, "the refused submit created nothing");
}

#[tokio::test]
async fn acp_sessions_and_claim_through_the_binary() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let agent = admin
        .agents()
        .register(
            &serde_json::from_value(serde_json::json!({ "name": "cli-acp", "protocol": "acp" }))
                .unwrap(),
        )
        .await
        .unwrap();
    let agent_id = agent.id.to_string();

    // Nothing to claim: exit 0, no output.
    let none = orch(&server, &["acp", "claim", "--agent", &agent_id]).await;
    assert_eq!(text(&none), "");

    let opened = json(
        &orch(
            &server,
            &[
                "acp",
                "sessions",
                "create",
                "--agent",
                &agent_id,
                "--mode",
                "session",
                "--transport",
                "websocket",
                "--json",
            ],
        )
        .await,
    );
    assert_eq!(opened["status"], "initializing");
    assert_eq!(opened["transport"], "websocket");
    let id = opened["id"].as_str().unwrap().to_owned();
    let reused = json(
        &orch(
            &server,
            &[
                "acp", "sessions", "create", "--agent", &agent_id, "--mode", "session", "--json",
            ],
        )
        .await,
    );
    assert_eq!(reused["id"], opened["id"]);
    assert_eq!(reused["reused"], true);
    let idle = json(
        &orch(
            &server,
            &["acp", "sessions", "heartbeat", &id, "--idle", "--json"],
        )
        .await,
    );
    assert_eq!(idle["status"], "idle");
    let listing = text(&orch(&server, &["acp", "sessions", "list"]).await);
    assert!(
        listing.contains(&id) && listing.contains("idle"),
        "{listing}"
    );
    let closed = json(&orch(&server, &["acp", "sessions", "close", &id, "--json"]).await);
    assert_eq!(closed["status"], "closed");

    admin
        .tasks()
        .create(&orchestrator_client::api::CreateTask {
            title: "CLI ACP task".into(),
            task_type: "code".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let claimed = json(
        &orch(
            &server,
            &[
                "acp",
                "claim",
                "--agent",
                &agent_id,
                "--workspace-path",
                "/tmp/w",
                "--json",
            ],
        )
        .await,
    );
    assert_eq!(claimed["task"]["title"], "CLI ACP task");
    assert_eq!(claimed["task"]["cwd"], "/tmp/w");
    assert_eq!(claimed["session"]["status"], "initializing");

    // A bad enum value is refused by the command line itself.
    let bad = orch(
        &server,
        &[
            "acp", "sessions", "create", "--agent", &agent_id, "--mode", "x",
        ],
    )
    .await;
    assert!(!bad.status.success());
}

#[tokio::test]
async fn settings_llm_set_and_get_never_print_the_secret() {
    let server = TestServer::start().await;
    let secret = "sk-cli-secret-31337";
    let first = orch(&server, &["settings", "llm", "set", "--model", "m"]).await;
    assert!(!first.status.success(), "the first set needs a provider");

    let set = json(
        &orch(
            &server,
            &[
                "settings",
                "llm",
                "set",
                "--provider",
                "openai",
                "--llm-api-key",
                secret,
                "--header",
                "X-Org=hidden-header-value",
                "--json",
            ],
        )
        .await,
    );
    assert_eq!(set["api_key"], "********");
    assert_eq!(set["extra_headers"]["X-Org"], "********");
    // Changing one field keeps the stored secrets.
    let changed = json(
        &orch(
            &server,
            &["settings", "llm", "set", "--model", "gpt-z", "--json"],
        )
        .await,
    );
    assert_eq!(changed["model"], "gpt-z");
    assert_eq!(changed["api_key"], "********");
    assert_eq!(changed["extra_headers"]["X-Org"], "********");
    let shown = text(&orch(&server, &["settings", "llm", "get"]).await);
    assert!(
        shown.contains("gpt-z") && shown.contains("********"),
        "{shown}"
    );
    assert!(!shown.contains(secret) && !shown.contains("hidden-header-value"));
    let cleared = json(
        &orch(
            &server,
            &["settings", "llm", "set", "--clear-llm-api-key", "--json"],
        )
        .await,
    );
    assert_eq!(cleared["api_key"], serde_json::Value::Null);
}

/// `orch mcp add|list|get|update|reverify|delete` against a real MCP server
/// on loopback; the secret parameter never printed.
#[tokio::test]
async fn mcp_servers_through_the_binary_never_print_the_secret() {
    use orchestrator_tests::mcp_servers::{SECRET, streamable_server};
    let server = TestServer::start().await;
    let mcp = streamable_server().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("docs.yaml");
    let describe = |name: &str, secret: &str| {
        format!(
            "name: {name}\nendpointUrl: {}\ntransportPreference: auto\ncallTimeoutSeconds: 10\n\
             authMode: parameterized\nparameters:\n  - placement: header\n    key: X-Api-Key\n\
             \x20   valueKind: secret\n    value: \"{secret}\"\n",
            mcp.url
        )
    };
    std::fs::write(&file, describe("docs", SECRET)).unwrap();
    let path = file.to_str().unwrap();
    let mut printed = String::new();
    let added = orch(&server, &["mcp", "add", "-f", path, "--json"]).await;
    printed.push_str(&text(&added));
    let added = json(&added);
    assert_eq!(added["verificationStatus"], "verified");
    assert_eq!(added["resolvedTransport"], "streamable_http");
    let id = added["id"].as_str().unwrap().to_owned();

    let listed = text(&orch(&server, &["mcp", "list"]).await);
    assert!(
        listed.contains("docs") && listed.contains("verified"),
        "{listed}"
    );
    printed.push_str(&listed);
    let shown = text(&orch(&server, &["mcp", "get", &id]).await);
    assert!(
        shown.contains("echo") && shown.contains("********"),
        "{shown}"
    );
    printed.push_str(&shown);

    // Update keeping the secret with the mask; reverify; delete.
    std::fs::write(&file, describe("docs-2", "********")).unwrap();
    let updated = orch(&server, &["mcp", "update", &id, "-f", path, "--json"]).await;
    printed.push_str(&text(&updated));
    assert_eq!(json(&updated)["name"], "docs-2");
    let again = orch(&server, &["mcp", "reverify", &id, "--json"]).await;
    printed.push_str(&text(&again));
    assert_eq!(json(&again)["verificationStatus"], "verified");

    // A wrong secret: the command fails with the failed step.
    std::fs::write(&file, describe("bad", "wrong")).unwrap();
    let failed = orch(&server, &["mcp", "add", "-f", path]).await;
    assert!(!failed.status.success());
    let error = String::from_utf8_lossy(&failed.stderr).into_owned();
    assert!(error.contains("initialize"), "{error}");

    let deleted = orch(&server, &["mcp", "delete", &id, "--json"]).await;
    printed.push_str(&text(&deleted));
    let empty = json(&orch(&server, &["mcp", "list", "--json"]).await);
    assert_eq!(empty["total"], 0, "{empty}");
    assert!(!printed.contains(SECRET), "the CLI printed the secret");
}

/// `orch mcp connect|disconnect` against the loopback OAuth authorization
/// server and the MCP server it guards.
#[tokio::test]
async fn mcp_connect_and_disconnect_through_the_binary() {
    use orchestrator_tests::mcp_servers::oauth_server;
    let server = TestServer::start().await;
    let guarded = oauth_server().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("guarded.yaml");
    std::fs::write(
        &file,
        format!(
            "name: guarded\nendpointUrl: {}\ntransportPreference: streamable_http\n\
             callTimeoutSeconds: 10\nauthMode: oauth\n",
            guarded.url
        ),
    )
    .unwrap();
    let added = json(
        &orch(
            &server,
            &["mcp", "add", "-f", file.to_str().unwrap(), "--json"],
        )
        .await,
    );
    assert_eq!(added["oauthStatus"], "disconnected", "{added}");
    let id = added["id"].as_str().unwrap().to_owned();

    // `connect` prints the authorization URL; the "browser" follows it
    // (the test authorization server approves and redirects to orch).
    let printed = text(&orch(&server, &["mcp", "connect", &id]).await);
    let url = printed
        .split_whitespace()
        .find(|w| w.starts_with("http"))
        .unwrap_or_else(|| panic!("no URL in {printed}"))
        .to_owned();
    assert!(url.contains("code_challenge_method=S256"), "{url}");
    let callback = server.http().get(&url).send().await.unwrap();
    assert_eq!(callback.status().as_u16(), 200);
    let shown = json(&orch(&server, &["mcp", "get", &id, "--json"]).await);
    assert_eq!(shown["oauthStatus"], "connected", "{shown}");
    assert_eq!(shown["verificationStatus"], "verified", "{shown}");

    let disconnected = text(&orch(&server, &["mcp", "disconnect", &id]).await);
    assert!(disconnected.contains("disconnected"), "{disconnected}");
    let state = guarded.state.lock().unwrap();
    assert!(state.access_tokens.is_empty(), "revoked");
    assert!(!state.revoked.is_empty());
    for token in &state.revoked {
        assert!(!printed.contains(token.as_str()) && !disconnected.contains(token.as_str()));
    }
}
