//! ACP: sessions only for agents registered with protocol acp (400 with a
//! clear message otherwise), `initializing` on creation, reuse in mode
//! `session` (also under concurrent creates), heartbeat and close, reads
//! with tenant isolation and agent ownership; and `/acp/claim`: claim +
//! start + session in one transaction, 204 when nothing, file references.

use orchestrator_client::Client;
use orchestrator_client::api::workspaces::{CreateWorkspace, FileUpload};
use orchestrator_client::api::{
    AcpClaim, AcpClaimSession, AcpHeartbeat, AcpLiveStatus, AcpMode, AcpSessionFilter,
    AcpSessionStatus, AcpTransport, CreateAcpSession, CreateTask, CreateTenant, RegisterAgent,
};
use orchestrator_tests::TestServer;
use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

/// Registers an agent with its own key: (id, client on its key).
async fn agent(server: &TestServer, name: &str, protocol: &str) -> (Uuid, Client) {
    let request: RegisterAgent = serde_json::from_value(json!({
        "name": name,
        "protocol": protocol,
        "issue_api_key": true,
        "acp": { "transports": ["stdio", "http"], "session_modes": ["run", "session"] },
    }))
    .unwrap();
    let agent = server.admin().agents().register(&request).await.unwrap();
    (agent.id, server.client(agent.api_key.as_deref().unwrap()))
}

fn session(agent_id: Uuid, mode: AcpMode) -> CreateAcpSession {
    CreateAcpSession {
        agent_id,
        transport: AcpTransport::Http,
        mode,
        workspace_path: Some("/srv/work".into()),
        metadata: Some(json!({ "runtime": "demo" })),
        ..Default::default()
    }
}

async fn raw_post(server: &TestServer, key: &str, path: &str, body: Value) -> (StatusCode, Value) {
    let response = server
        .http()
        .post(server.at(&format!("/api/v1{path}")))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn sessions_open_reuse_heartbeat_and_close() {
    let server = TestServer::start().await;
    let (acp_id, acp) = agent(&server, "acp-runner", "acp").await;
    let (rest_id, _) = agent(&server, "rest-runner", "rest").await;

    // Only ACP agents.
    let refused = acp_err(
        server
            .admin()
            .acp()
            .create_session(&session(rest_id, AcpMode::Run))
            .await,
    );
    assert_eq!(refused.status(), Some(400));
    assert!(refused.to_string().contains("protocol acp"), "{refused}");

    let run = acp
        .acp()
        .create_session(&session(acp_id, AcpMode::Run))
        .await
        .unwrap();
    assert_eq!(run.status, AcpSessionStatus::Initializing);
    assert_eq!(run.transport, AcpTransport::Http);
    assert!(!run.reused);
    assert_eq!(run.metadata["protocol"], "acp");
    assert_eq!(run.metadata["runtime"], "demo");
    assert_eq!(
        run.metadata["capabilities"]["transports"],
        json!(["stdio", "http"])
    );
    // Run mode never reuses.
    let run2 = acp
        .acp()
        .create_session(&session(acp_id, AcpMode::Run))
        .await
        .unwrap();
    assert_ne!(run.id, run2.id);

    // Session mode reuses the open session of the agent and workflow.
    let first = acp
        .acp()
        .create_session(&session(acp_id, AcpMode::Session))
        .await
        .unwrap();
    assert!(!first.reused);
    let again = acp
        .acp()
        .create_session(&session(acp_id, AcpMode::Session))
        .await
        .unwrap();
    assert!(again.reused);
    assert_eq!(again.id, first.id);

    // Heartbeats move it; close ends it and the next create opens a new one.
    let idle = acp
        .acp()
        .heartbeat(
            first.id,
            &AcpHeartbeat {
                status: Some(AcpLiveStatus::Idle),
            },
        )
        .await
        .unwrap();
    assert_eq!(idle.status, AcpSessionStatus::Idle);
    let active = acp
        .acp()
        .heartbeat(first.id, &AcpHeartbeat::default())
        .await
        .unwrap();
    assert_eq!(active.status, AcpSessionStatus::Active);
    assert!(active.last_heartbeat_at >= first.last_heartbeat_at);
    let closed = acp.acp().close(first.id).await.unwrap();
    assert_eq!(closed.status, AcpSessionStatus::Closed);
    assert_eq!(
        acp.acp().close(first.id).await.unwrap().status,
        AcpSessionStatus::Closed
    );
    assert_eq!(
        acp.acp()
            .heartbeat(first.id, &AcpHeartbeat::default())
            .await
            .unwrap_err()
            .status(),
        Some(409)
    );
    let fresh = acp
        .acp()
        .create_session(&session(acp_id, AcpMode::Session))
        .await
        .unwrap();
    assert!(!fresh.reused);
    assert_ne!(fresh.id, first.id);

    // Reads.
    assert_eq!(acp.acp().get_session(run.id).await.unwrap().id, run.id);
    let listed = acp
        .acp()
        .list_sessions(&AcpSessionFilter::default(), Default::default())
        .await
        .unwrap();
    assert_eq!(listed.total, 4);
    let open = server
        .admin()
        .acp()
        .list_sessions(
            &AcpSessionFilter {
                status: Some(AcpSessionStatus::Closed),
                ..Default::default()
            },
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(open.total, 1);
    assert_eq!(open.items[0].id, first.id);
}

fn acp_err<T: std::fmt::Debug>(
    result: orchestrator_client::Result<T>,
) -> orchestrator_client::Error {
    result.unwrap_err()
}

#[tokio::test]
async fn session_requests_are_checked_and_scoped() {
    let server = TestServer::start().await;
    let (acp_id, acp) = agent(&server, "acp-a", "acp").await;
    let (_, other_agent) = agent(&server, "acp-b", "acp").await;
    let key = server.admin_key.clone();
    for body in [
        json!({ "agent_id": acp_id, "transport": "carrier-pigeon" }),
        json!({ "agent_id": acp_id, "mode": "forever" }),
        json!({ "agent_id": "not-a-uuid" }),
        json!({ "transport": "http" }),
        json!({ "agent_id": acp_id, "bogus": true }),
    ] {
        let (status, value) = raw_post(&server, &key, "/acp/sessions", body.clone()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {value}");
        assert_eq!(value["error"]["code"], "SCHEMA_VALIDATION_FAILED");
    }
    for body in [
        json!({ "agent_id": acp_id, "metadata": [1] }),
        json!({ "agent_id": acp_id, "workspace_path": " " }),
        json!({ "agent_id": acp_id, "workflow_id": Uuid::new_v4() }),
    ] {
        let (status, value) = raw_post(&server, &key, "/acp/sessions", body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {value}");
    }
    let (status, _) = raw_post(
        &server,
        &key,
        "/acp/sessions",
        json!({ "agent_id": Uuid::new_v4() }),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // Nothing above opened a session.
    let none = server
        .admin()
        .acp()
        .list_sessions(&AcpSessionFilter::default(), Default::default())
        .await
        .unwrap();
    assert_eq!(none.total, 0);

    // An agent's key opens sessions for itself only, and touches only its own.
    let mine = acp
        .acp()
        .create_session(&session(acp_id, AcpMode::Run))
        .await
        .unwrap();
    assert_eq!(
        other_agent
            .acp()
            .create_session(&session(acp_id, AcpMode::Run))
            .await
            .unwrap_err()
            .status(),
        Some(403)
    );
    assert_eq!(
        other_agent.acp().close(mine.id).await.unwrap_err().status(),
        Some(403)
    );
    assert_eq!(
        other_agent
            .acp()
            .list_sessions(&AcpSessionFilter::default(), Default::default())
            .await
            .unwrap()
            .total,
        0
    );
    // No credential: 401. Another tenant: 404.
    let response = server
        .http()
        .get(server.at("/api/v1/acp/sessions"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let other = server
        .service()
        .tenants()
        .create(&CreateTenant {
            name: "Other".into(),
            slug: None,
            request_id: None,
        })
        .await
        .unwrap();
    let theirs = server.client(&other.admin_key.api_key);
    assert_eq!(
        theirs
            .acp()
            .get_session(mine.id)
            .await
            .unwrap_err()
            .status(),
        Some(404)
    );
    assert_eq!(
        theirs.acp().close(mine.id).await.unwrap_err().status(),
        Some(404)
    );
    assert_eq!(
        theirs
            .acp()
            .create_session(&session(acp_id, AcpMode::Run))
            .await
            .unwrap_err()
            .status(),
        Some(404)
    );
}

#[tokio::test]
async fn concurrent_session_mode_creates_agree_on_one_session() {
    let server = TestServer::start().await;
    let (acp_id, acp) = agent(&server, "acp-race", "acp").await;
    let mut handles = Vec::new();
    for _ in 0..8 {
        let client = acp.clone();
        handles.push(tokio::spawn(async move {
            client
                .acp()
                .create_session(&session(acp_id, AcpMode::Session))
                .await
                .unwrap()
        }));
    }
    let mut ids = Vec::new();
    let mut created = 0;
    for handle in handles {
        let s = handle.await.unwrap();
        ids.push(s.id);
        created += usize::from(!s.reused);
    }
    ids.dedup();
    assert_eq!(ids.len(), 1, "one reusable session: {ids:?}");
    assert_eq!(created, 1);
}

#[tokio::test]
async fn claim_starts_the_task_and_opens_a_session_with_file_references() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let (acp_id, acp) = agent(&server, "acp-claimer", "acp").await;
    let (rest_id, _) = agent(&server, "rest-claimer", "rest").await;
    let claim = |agent_id| AcpClaim {
        agent_id,
        session: Some(AcpClaimSession {
            transport: AcpTransport::Stdio,
            mode: AcpMode::Run,
            workspace_path: Some("/work/repo".into()),
        }),
        ..Default::default()
    };
    // Nothing to claim: 204 (None), and no session.
    assert!(acp.acp().claim(&claim(acp_id)).await.unwrap().is_none());
    assert_eq!(
        admin
            .acp()
            .claim(&claim(rest_id))
            .await
            .unwrap_err()
            .status(),
        Some(400)
    );

    let ws = admin
        .workspaces()
        .create(&CreateWorkspace {
            name: "Repo".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let file = admin
        .workspaces()
        .upload_file(
            ws.id,
            &FileUpload {
                file_name: "brief.md".into(),
                content_base64: "IyBCcmllZgo=".into(),
                content_type: None,
                description: None,
                key: None,
                request_id: None,
            },
        )
        .await
        .unwrap();
    let task = admin
        .tasks()
        .create(&CreateTask {
            title: "Write the summary".into(),
            task_type: "docs".into(),
            description: Some("Summarise brief.md in three lines".into()),
            workspace_id: Some(ws.id),
            input: Some(json!({ "lines": 3 })),
            ..Default::default()
        })
        .await
        .unwrap();
    // A task needing a tag the ACP claim does not carry stays pending.
    let tagged = admin
        .tasks()
        .create(&CreateTask {
            title: "Review".into(),
            task_type: "code".into(),
            role: Some("reviewer".into()),
            ..Default::default()
        })
        .await
        .unwrap();

    let claimed = acp.acp().claim(&claim(acp_id)).await.unwrap().unwrap();
    assert_eq!(claimed.task.id, task.id);
    assert_eq!(claimed.task.title, "Write the summary");
    assert_eq!(claimed.task.prompt, "Summarise brief.md in three lines");
    assert_eq!(claimed.task.cwd.as_deref(), Some("/work/repo"));
    assert_eq!(claimed.task.input, json!({ "lines": 3 }));
    assert_eq!(claimed.task.file_references.len(), 1);
    let reference = &claimed.task.file_references[0];
    assert_eq!(reference.id, Some(file.id));
    assert_eq!(reference.file_name, "brief.md");
    assert_eq!(reference.size_bytes, 8);
    assert_eq!(
        reference.download_url.as_deref(),
        Some(file.download_url.as_str())
    );
    assert_eq!(claimed.session.status, AcpSessionStatus::Initializing);

    // Claim and start happened together; the session names the task.
    let stored = admin.tasks().get(task.id).await.unwrap();
    assert_eq!(stored.state.as_str(), "in_progress");
    assert_eq!(stored.assigned_agent_id, Some(acp_id));
    let s = admin.acp().get_session(claimed.session.id).await.unwrap();
    assert_eq!(s.task_id, Some(task.id));
    assert_eq!(s.agent_id, acp_id);
    assert_eq!(s.transport, AcpTransport::Stdio);
    assert_eq!(
        admin.tasks().get(tagged.id).await.unwrap().state.as_str(),
        "pending"
    );

    // Bad bodies: 422, nothing claimed.
    for body in [
        json!({ "agent_id": acp_id, "session": { "transport": "smoke" } }),
        json!({ "agent_id": acp_id, "routing_tags": "acp" }),
    ] {
        let (status, value) =
            raw_post(&server, &server.admin_key, "/acp/claim", body.clone()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {value}");
    }
}
