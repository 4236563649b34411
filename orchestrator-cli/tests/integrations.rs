//! `orch a2a` (and the other integration commands) against a real server:
//! the card, submit, get and a watch that ends when the task completes.

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
