//! `orch db copy`: a SQLite database that a real `orch serve` filled
//! (workflows, tasks in every state, logs, files, API keys, sessions, a
//! remote MCP server with a sealed secret) is copied into a PostgreSQL
//! database this test creates and drops; `orch serve` on PostgreSQL then
//! answers the same reads, and work goes on: a claim, events after the
//! copied ids, a login with a copied key, a refresh of a copied session,
//! the sealed secret opened again. A second copy into the same database is
//! refused.
//!
//! Needs a PostgreSQL server: `ORCH_TEST_DATABASE_URL=postgres://...`.
//! Without it (the SQLite run of the suite) there is nowhere to copy to, and
//! the test says so and passes.

mod common;

use common::pg::PgDatabase;
use common::served::{Served, agent, as_agent, claimed_task, orch, serve, stderr, stdout_json};
use orchestrator_tests::mcp_servers::{SECRET, streamable_server};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The reads compared before and after the move.
async fn reads(server: &Served, ids: &[String]) -> Vec<(String, Value)> {
    let mut paths: Vec<String> = [
        "/tasks?per_page=100",
        "/workflows",
        "/workspaces",
        "/playbooks",
        "/agents",
        "/api-keys",
        "/remote-mcp-servers",
        "/logs?per_page=100",
        "/events?limit=500",
    ]
    .iter()
    .map(|p| p.to_string())
    .collect();
    paths.extend(ids.iter().cloned());
    let mut read = Vec::new();
    for path in paths {
        let (status, mut body) = server.call("GET", &path, json!({})).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        // What differs by the call, not by the data.
        if let Some(meta) = body.get_mut("meta").and_then(Value::as_object_mut) {
            meta.remove("request_id");
            meta.remove("timestamp");
        }
        read.push((path, body));
    }
    read
}

/// The highest event id the server has.
async fn last_event(server: &Served) -> i64 {
    let mut after = 0i64;
    loop {
        let path = format!("/events?after={after}&limit=500");
        let (status, page) = server.call("GET", &path, json!({})).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let next: i64 = page["meta"]["next_after"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        if !page["meta"]["has_more"].as_bool().unwrap() {
            return next;
        }
        after = next;
    }
}

#[tokio::test]
async fn a_sqlite_database_moves_to_postgres_and_work_goes_on() {
    let Some(base) = std::env::var(orchestrator_tests::TEST_DATABASE_ENV)
        .ok()
        .filter(|u| u.starts_with("postgres"))
    else {
        eprintln!("skipped: orch db copy needs ORCH_TEST_DATABASE_URL=postgres://...");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data_arg = data.display().to_string();
    let key = orchestrator_tests::random_key("admin");
    let server = serve(["--data-dir", &data_arg], &key, true).await;
    let mcp = streamable_server().await;

    // A workflow, with its playbook and workspace; a file in the workspace.
    let playbook = server
        .ok(
            "POST",
            "/playbooks",
            json!({ "name": "move", "outcome": "done",
            "definition": { "roles": [{ "name": "dev" }], "stages": [{ "name": "build" }] } }),
        )
        .await;
    let workspace = server
        .ok("POST", "/workspaces", json!({ "name": "moving" }))
        .await;
    let workspace_id = workspace["id"].as_str().unwrap().to_owned();
    let workflow = server
        .ok(
            "POST",
            "/workflows",
            json!({ "playbook_id": playbook["id"],
            "workspace_id": workspace_id, "name": "the move" }),
        )
        .await;
    let file = server
        .ok(
            "POST",
            &format!("/workspaces/{workspace_id}/files"),
            json!({ "file_name": "notes.md", "content_base64": "aGVsbG8gcG9zdGdyZXM=" }),
        )
        .await;

    // Tasks in every state, each with an agent of its own.
    let mut task_ids = Vec::new();
    let claimed = agent(&server, "claimed").await;
    task_ids.push(claimed_task(&server, &claimed, "claimed").await);
    let working = agent(&server, "working").await;
    let id = claimed_task(&server, &working, "in progress").await;
    as_agent(
        &server,
        &working,
        &format!("/tasks/{id}/start"),
        json!({ "agent_id": working.0 }),
    )
    .await;
    task_ids.push(id);
    let assessed = agent(&server, "assessed").await;
    let id = claimed_task(&server, &assessed, "assessed").await;
    let body = json!({ "agent_id": assessed.0, "output": { "v": 1 },
        "verification": { "passed": false } });
    as_agent(&server, &assessed, &format!("/tasks/{id}/complete"), body).await;
    task_ids.push(id);
    let stuck = agent(&server, "stuck").await;
    let id = claimed_task(&server, &stuck, "escalated").await;
    server
        .ok(
            "POST",
            &format!("/tasks/{id}/escalate"),
            json!({ "reason": "stuck" }),
        )
        .await;
    task_ids.push(id);
    let done = agent(&server, "done").await;
    let id = claimed_task(&server, &done, "completed").await;
    as_agent(
        &server,
        &done,
        &format!("/tasks/{id}/complete"),
        json!({ "agent_id": done.0, "output": { "answer": 42, "ratio": 0.25 } }),
    )
    .await;
    task_ids.push(id);
    let failing = agent(&server, "failing").await;
    let id = claimed_task(&server, &failing, "failed").await;
    let body = json!({ "agent_id": failing.0,
        "error": { "category": "tool", "message": "boom", "recoverable": false } });
    as_agent(&server, &failing, &format!("/tasks/{id}/fail"), body).await;
    task_ids.push(id);
    let id = server
        .ok(
            "POST",
            "/tasks",
            json!({ "title": "cancelled", "type": "code" }),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    server
        .ok(
            "POST",
            &format!("/tasks/{id}/cancel"),
            json!({ "reason": "not needed" }),
        )
        .await;
    task_ids.push(id);
    let pending = server
        .ok(
            "POST",
            "/tasks",
            json!({ "title": "pending", "type": "code", "priority": "high" }),
        )
        .await;
    task_ids.push(pending["id"].as_str().unwrap().to_owned());
    let states: Vec<String> = {
        let mut states = Vec::new();
        for id in &task_ids {
            let task = server.ok("GET", &format!("/tasks/{id}"), json!({})).await;
            states.push(task["state"].as_str().unwrap().to_owned());
        }
        states
    };
    assert_eq!(
        states,
        [
            "claimed",
            "in_progress",
            "output_pending_assessment",
            "escalated",
            "completed",
            "failed",
            "cancelled",
            "pending"
        ]
    );

    // Logs, a second admin key, a session, a remote MCP server with a secret.
    let entries = json!({ "entries": [
        { "category": "tool", "operation": "copy.one",
          "payload": { "n": 1, "nested": { "b": [1, 2] } } },
        { "category": "llm", "operation": "copy.two", "level": "warn", "duration_ms": 12 },
    ] });
    server.ok("POST", "/logs/ingest", entries).await;
    let second = server
        .ok(
            "POST",
            "/api-keys",
            json!({ "name": "moved", "scope": "admin" }),
        )
        .await;
    let second_key = second["api_key"].as_str().unwrap().to_owned();
    let anonymous = orchestrator_client::Client::new(&server.base).unwrap();
    let session = anonymous.auth().token(&second_key, true).await.unwrap();
    let refresh_token = session.refresh_token.clone().expect("a refresh token");
    let remote = server
        .ok(
            "POST",
            "/remote-mcp-servers",
            json!({
                "name": "docs", "description": "moved with its secret", "endpointUrl": mcp.url,
                "transportPreference": "streamable_http", "callTimeoutSeconds": 10,
                "authMode": "parameterized", "enabledByDefaultForNewSpecialists": true,
                "parameters": [{ "placement": "header", "key": "X-Api-Key",
                    "valueKind": "secret", "value": SECRET }],
            }),
        )
        .await;
    assert_eq!(remote["verificationStatus"], "verified");

    let mut gets: Vec<String> = task_ids.iter().map(|id| format!("/tasks/{id}")).collect();
    gets.push(format!("/workflows/{}", workflow["id"].as_str().unwrap()));
    gets.push(format!("/workspaces/{workspace_id}/files"));
    gets.push(format!(
        "/workspaces/{workspace_id}/files/{}/content",
        file["id"].as_str().unwrap()
    ));
    gets.push(format!(
        "/remote-mcp-servers/{}",
        remote["id"].as_str().unwrap()
    ));
    let before = reads(&server, &gets).await;
    let last_before = last_event(&server).await;
    assert!(last_before > 10, "{last_before} events");
    server.stop().await;

    // The copy.
    let target = PgDatabase::create(&base).await;
    let from = format!("sqlite://{}", data.join("orch.db").display());
    let copied = orch(&[
        "db",
        "copy",
        "--from",
        &from,
        "--to",
        &target.url,
        "-o",
        "json",
    ])
    .await;
    let report = stdout_json(&copied);
    let rows = |table: &str| {
        report["tables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["table"] == table)
            .unwrap_or_else(|| panic!("{table} copied: {report}"))["rows"]
            .as_u64()
            .unwrap()
    };
    // The eight above and the workflow's own.
    assert_eq!(
        rows("tasks"),
        before[0].1["data"].as_array().unwrap().len() as u64
    );
    assert!(rows("tasks") >= 8);
    assert!(rows("events") >= last_before as u64 / 2);
    assert!(rows("remote_mcp_servers") == 1 && rows("auth_sessions") >= 1 && rows("blobs") >= 1);
    assert_eq!(report["sequences"]["events.id"], last_before);

    // A second copy into it is refused, exit 5, and changes nothing.
    let again = orch(&["db", "copy", "--from", &from, "--to", &target.url]).await;
    assert_eq!(again.status.code(), Some(5), "{}", stderr(&again));
    assert!(stderr(&again).contains("not empty"), "{}", stderr(&again));

    // Served on PostgreSQL, without the bootstrap key: the same reads.
    let moved = serve(["--database-url", &target.url], &key, false).await;
    let after = reads(&moved, &gets).await;
    for ((path, was), (_, is)) in before.iter().zip(&after) {
        assert_eq!(was, is, "GET {path} differs after the move");
    }

    // Work goes on: a claim, with an event after the copied ones.
    let (status, claim) = moved
        .call_as(
            &done.1,
            "POST",
            "/tasks/claim",
            json!({ "agent_id": done.0 }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{claim}");
    assert_eq!(claim["data"]["id"], pending["id"]);
    let last_after = last_event(&moved).await;
    assert!(
        last_after > last_before,
        "new events {last_after} after {last_before}"
    );
    // The copied key logs in; the copied session refreshes.
    let (status, body) = moved
        .call("POST", "/auth/token", json!({ "api_key": second_key }))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let anonymous = orchestrator_client::Client::new(&moved.base).unwrap();
    anonymous
        .auth()
        .refresh(&refresh_token)
        .await
        .expect("the copied session refreshes");
    // An access token issued on SQLite is still good: same signing key.
    let me = orchestrator_client::Client::new(&moved.base)
        .unwrap()
        .with_api_key(&session.token)
        .auth()
        .me()
        .await
        .expect("the copied access token");
    assert_eq!(me.scope.to_string(), "admin");
    // The sealed secret opens under the copied master key: reverify passes.
    let reverified = moved
        .ok(
            "POST",
            &format!(
                "/remote-mcp-servers/{}/reverify",
                remote["id"].as_str().unwrap()
            ),
            json!({}),
        )
        .await;
    assert_eq!(reverified["verificationStatus"], "verified", "{reverified}");

    moved.stop().await;
    target.drop_it().await;
}
