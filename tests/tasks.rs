//! Task lifecycle: every operation from its allowed states
//! and a refused one each, ownership and scopes, idempotent create and
//! complete, limits, handoffs, git, context, claim-credentials and stream.

use orchestrator_tests::TestServer;
use reqwest::StatusCode;
use serde_json::{Value, json};

struct Api<'a> {
    server: &'a TestServer,
    http: reqwest::Client,
}

impl Api<'_> {
    async fn call(&self, method: &str, path: &str, key: &str, body: Value) -> (StatusCode, Value) {
        let url = self.server.at(&format!("/api/v1{path}"));
        let request = match method {
            "GET" => self.http.get(url),
            _ => self.http.post(url).json(&body),
        };
        let response = request.bearer_auth(key).send().await.unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    async fn ok(&self, method: &str, path: &str, key: &str, body: Value) -> Value {
        let (status, value) = self.call(method, path, key, body).await;
        assert!(status.is_success(), "{method} {path}: {status} {value}");
        value["data"].clone()
    }

    async fn new_task(&self, key: &str, extra: Value) -> String {
        let mut body = json!({ "title": "t", "type": "code" });
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        self.ok("POST", "/tasks", key, body).await["id"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// Registers an agent with its own key: (id, key).
    async fn agent(&self, admin: &str, name: &str) -> (String, String) {
        let agent = self
            .ok(
                "POST",
                "/agents/register",
                admin,
                json!({ "name": name, "issue_api_key": true }),
            )
            .await;
        (
            agent["id"].as_str().unwrap().to_owned(),
            agent["api_key"].as_str().unwrap().to_owned(),
        )
    }

    async fn claim(&self, agent: &(String, String)) -> String {
        let task = self
            .ok(
                "POST",
                "/tasks/claim",
                &agent.1,
                json!({ "agent_id": agent.0 }),
            )
            .await;
        task["id"].as_str().unwrap().to_owned()
    }

    async fn state(&self, key: &str, id: &str) -> String {
        self.ok("GET", &format!("/tasks/{id}"), key, json!({}))
            .await["state"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// Asserts a refused transition: 409 with current and requested state.
    async fn refused(&self, key: &str, id: &str, op: &str, body: Value, current: &str) {
        let (status, value) = self
            .call("POST", &format!("/tasks/{id}/{op}"), key, body)
            .await;
        assert_eq!(status, StatusCode::CONFLICT, "{op} from {current}: {value}");
        assert_eq!(value["error"]["code"], "INVALID_STATE_TRANSITION");
        assert_eq!(value["error"]["details"]["current_state"], current);
        assert!(value["error"]["details"]["requested_state"].is_string());
    }
}

#[tokio::test]
async fn every_operation_from_its_allowed_states_and_refused_elsewhere() {
    let server = TestServer::start().await;
    let api = Api {
        server: &server,
        http: server.http(),
    };
    let admin = server.admin_key.as_str();
    let a = api.agent(admin, "a").await;
    let b = api.agent(admin, "b").await;

    // create → pending, idempotent by request_id; limits are 400; bad enums 422.
    let body = json!({ "title": "one", "type": "code", "request_id": "c-1", "max_retries": 2, "auto_retry": true });
    let first = api.ok("POST", "/tasks", admin, body.clone()).await;
    let again = api.ok("POST", "/tasks", admin, body).await;
    assert_eq!(first["id"], again["id"]);
    assert_eq!(first["state"], "pending");
    assert_eq!(first["timeout_minutes"], 180);
    for (field, value) in [
        ("timeout_minutes", json!(0)),
        ("timeout_minutes", json!(241)),
        ("max_retries", json!(11)),
    ] {
        let (status, error) = api
            .call(
                "POST",
                "/tasks",
                admin,
                json!({ "title": "x", "type": "code", field: value }),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{field}={value}");
        assert!(error["error"]["details"]["issues"]["fieldErrors"][field].is_array());
    }
    let (status, _) = api
        .call(
            "POST",
            "/tasks",
            admin,
            json!({ "title": "x", "type": "code", "task_kind": "nope" }),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let id = first["id"].as_str().unwrap().to_owned();

    // pending: start, complete, fail, escalate are refused.
    for (op, body) in [
        ("start", json!({})),
        ("complete", json!({})),
        ("fail", json!({})),
        ("escalate", json!({ "reason": "r" })),
    ] {
        api.refused(admin, &id, op, body, "pending").await;
    }
    // claim → claimed; only the assignee may start or complete (403 for another agent).
    assert_eq!(api.claim(&a).await, id);
    let (status, _) = api
        .call("POST", &format!("/tasks/{id}/start"), &b.1, json!({}))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = api
        .call("POST", &format!("/tasks/{id}/complete"), &b.1, json!({}))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // Operator operations need admin scope.
    let (status, _) = api
        .call("POST", &format!("/tasks/{id}/cancel"), &a.1, json!({}))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    api.refused(admin, &id, "skip", json!({}), "claimed").await;
    // start → in_progress; a repeat is a no-op.
    assert_eq!(
        api.ok("POST", &format!("/tasks/{id}/start"), &a.1, json!({}))
            .await["state"],
        "in_progress"
    );
    assert_eq!(
        api.ok("POST", &format!("/tasks/{id}/start"), &a.1, json!({}))
            .await["state"],
        "in_progress"
    );
    // A handoff while in progress; the read carries the latest one.
    api.ok(
        "POST",
        &format!("/tasks/{id}/handoffs"),
        &a.1,
        json!({ "summary": "half way", "remaining_items": ["rest"] }),
    )
    .await;
    api.ok(
        "POST",
        &format!("/tasks/{id}/handoffs"),
        &a.1,
        json!({ "summary": "nearly" }),
    )
    .await;
    let read = api
        .ok("GET", &format!("/tasks/{id}"), admin, json!({}))
        .await;
    assert_eq!(read["latest_handoff"]["summary"], "nearly");
    assert_eq!(read["latest_handoff"]["sequence"], 2);
    assert_eq!(
        api.ok("GET", &format!("/tasks/{id}/handoffs"), admin, json!({}))
            .await
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // Streaming while held: the task's stored events, then live ones (the
    // stream stays open across the fail below).
    let mut stream = server
        .http()
        .get(server.at(&format!("/api/v1/tasks/{id}/stream")))
        .bearer_auth(admin)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    let mut seen = String::new();
    read_until(&mut stream, &mut seen, |s| s.contains("in_progress")).await;
    let replayed = seen.matches("event: task.state_changed").count();
    assert!(replayed >= 2, "claim and start replayed: {seen}");
    // claim-credentials: no handle is 400; an unknown handle 404; a malformed one 400.
    let (status, _) = api
        .call(
            "POST",
            &format!("/tasks/{id}/claim-credentials"),
            &a.1,
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = api
        .call(
            "POST",
            &format!("/tasks/{id}/claim-credentials"),
            &a.1,
            json!({ "mcp_claim_handles": ["claim:v1:nope"] }),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = api
        .call(
            "POST",
            &format!("/tasks/{id}/claim-credentials"),
            &a.1,
            json!({ "llm_api_key_claim_handle": "junk" }),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    // fail with auto_retry and retries left → pending, retry_count 1.
    let failed = api
        .ok(
            "POST",
            &format!("/tasks/{id}/fail"),
            &a.1,
            json!({ "error": { "category": "tool", "message": "boom", "recoverable": true } }),
        )
        .await;
    assert_eq!(
        (failed["state"].as_str(), failed["retry_count"].as_i64()),
        (Some("pending"), Some(1))
    );
    read_until(&mut stream, &mut seen, |s| {
        s.matches("event: task.state_changed").count() > replayed
    })
    .await;
    drop(stream);
    assert_eq!(failed["error"]["message"], "boom");
    assert!(failed["assigned_agent_id"].is_null());
    // claim again, escalate (reason required) → escalated; resolve → pending.
    assert_eq!(api.claim(&b).await, id);
    let (status, _) = api
        .call("POST", &format!("/tasks/{id}/escalate"), admin, json!({}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        api.ok(
            "POST",
            &format!("/tasks/{id}/escalate"),
            admin,
            json!({ "reason": "stuck" })
        )
        .await["state"],
        "escalated"
    );
    api.refused(
        admin,
        &id,
        "escalate",
        json!({ "reason": "again" }),
        "escalated",
    )
    .await;
    assert_eq!(
        api.ok(
            "POST",
            &format!("/tasks/{id}/resolve-escalation"),
            admin,
            json!({ "instructions": "try X" })
        )
        .await["input"]["instructions"],
        "try X"
    );
    // complete straight from claimed passes through in_progress; verification.passed=false → assessment.
    assert_eq!(api.claim(&a).await, id);
    let done = api
        .ok(
            "POST",
            &format!("/tasks/{id}/complete"),
            &a.1,
            json!({ "output": { "v": 1 }, "verification": { "passed": false } }),
        )
        .await;
    assert_eq!(done["state"], "output_pending_assessment");
    let events: Vec<Value> = api
        .ok(
            "GET",
            "/tasks?state=output_pending_assessment",
            admin,
            json!({}),
        )
        .await
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(events.len(), 1);
    api.refused(
        admin,
        &id,
        "complete",
        json!({}),
        "output_pending_assessment",
    )
    .await;
    // request-changes (feedback required) → pending with feedback appended.
    let (status, _) = api
        .call(
            "POST",
            &format!("/tasks/{id}/request-changes"),
            admin,
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let changed = api
        .ok(
            "POST",
            &format!("/tasks/{id}/request-changes"),
            admin,
            json!({ "feedback": "more tests" }),
        )
        .await;
    assert_eq!(changed["state"], "pending");
    assert_eq!(changed["input"]["feedback"], json!(["more tests"]));
    // claim, complete → completed; approve-output and retry are refused from completed.
    assert_eq!(api.claim(&a).await, id);
    let completed = api
        .ok(
            "POST",
            &format!("/tasks/{id}/complete"),
            &a.1,
            json!({ "request_id": "done", "git_info": { "branches": ["b"] } }),
        )
        .await;
    assert_eq!(completed["state"], "completed");
    let replay = api
        .ok(
            "POST",
            &format!("/tasks/{id}/complete"),
            &a.1,
            json!({ "request_id": "done", "git_info": { "branches": ["b"] } }),
        )
        .await;
    assert_eq!(replay, completed);
    api.refused(admin, &id, "approve-output", json!({}), "completed")
        .await;
    api.refused(admin, &id, "retry", json!({}), "completed")
        .await;
    api.refused(admin, &id, "cancel", json!({}), "completed")
        .await;
    api.refused(
        admin,
        &id,
        "reassign",
        json!({ "reason": "r" }),
        "completed",
    )
    .await;
    let git = api
        .ok("GET", &format!("/tasks/{id}/git"), admin, json!({}))
        .await;
    assert_eq!(git["branches"], json!(["b"]));
    // request-changes from completed → pending again.
    assert_eq!(
        api.ok(
            "POST",
            &format!("/tasks/{id}/request-changes"),
            admin,
            json!({ "feedback": "redo" })
        )
        .await["state"],
        "pending"
    );
    let stream = api
        .call("GET", &format!("/tasks/{id}/stream"), admin, json!({}))
        .await;
    assert_eq!(
        stream,
        (
            StatusCode::CONFLICT,
            json!({ "error": "task_not_streaming" })
        )
    );
    assert_eq!(
        api.ok("POST", &format!("/tasks/{id}/cancel"), admin, json!({}))
            .await["state"],
        "cancelled"
    );

    // A second task: fail without retries → failed; retry → pending; skip → completed.
    let t2 = api.new_task(admin, json!({})).await;
    assert_eq!(api.claim(&b).await, t2);
    assert_eq!(
        api.ok(
            "POST",
            &format!("/tasks/{t2}/fail"),
            admin,
            json!({ "error": { "message": "x" } })
        )
        .await["state"],
        "failed"
    );
    api.refused(admin, &t2, "start", json!({}), "failed").await;
    api.refused(
        admin,
        &t2,
        "resolve-escalation",
        json!({ "instructions": "i" }),
        "failed",
    )
    .await;
    let retried = api
        .ok("POST", &format!("/tasks/{t2}/retry"), admin, json!({}))
        .await;
    assert_eq!(
        (retried["state"].as_str(), retried["retry_count"].as_i64()),
        (Some("pending"), Some(1))
    );
    assert!(retried["error"].is_null());
    let skipped = api
        .ok(
            "POST",
            &format!("/tasks/{t2}/skip"),
            admin,
            json!({ "reason": "not needed" }),
        )
        .await;
    assert_eq!(skipped["state"], "completed");
    assert_eq!(
        skipped["output"],
        json!({ "skipped": true, "reason": "not needed" })
    );

    // A third: reassign from claimed → pending for a preferred agent; cancel → cancelled; retry → pending.
    let t3 = api.new_task(admin, json!({})).await;
    assert_eq!(api.claim(&a).await, t3);
    let reassigned = api
        .ok(
            "POST",
            &format!("/tasks/{t3}/reassign"),
            admin,
            json!({ "reason": "to b", "preferred_agent_id": b.0 }),
        )
        .await;
    assert_eq!(reassigned["state"], "pending");
    assert_eq!(reassigned["preferred_agent_id"], json!(b.0));
    let (status, _) = api
        .call("POST", "/tasks/claim", &a.1, json!({ "agent_id": a.0 }))
        .await;
    assert_eq!(
        status,
        StatusCode::NO_CONTENT,
        "only the preferred agent may claim it"
    );
    assert_eq!(
        api.ok("POST", &format!("/tasks/{t3}/cancel"), admin, json!({}))
            .await["state"],
        "cancelled"
    );
    api.refused(admin, &t3, "cancel", json!({}), "cancelled")
        .await;
    api.refused(admin, &t3, "skip", json!({}), "cancelled")
        .await;
    assert_eq!(
        api.ok("POST", &format!("/tasks/{t3}/retry"), admin, json!({}))
            .await["state"],
        "pending"
    );
    assert_eq!(api.state(admin, &t3).await, "pending");

    // A fourth: assessment → approve-output; escalated → skip; failed → reassign.
    let t4 = api.new_task(admin, json!({})).await;
    assert_eq!(api.claim(&a).await, t4);
    assert_eq!(
        api.ok(
            "POST",
            &format!("/tasks/{t4}/complete"),
            &a.1,
            json!({ "verification": { "passed": false } })
        )
        .await["state"],
        "output_pending_assessment"
    );
    api.refused(
        admin,
        &t4,
        "escalate",
        json!({ "reason": "r" }),
        "output_pending_assessment",
    )
    .await;
    assert_eq!(
        api.ok(
            "POST",
            &format!("/tasks/{t4}/approve-output"),
            admin,
            json!({})
        )
        .await["state"],
        "completed"
    );
    let t5 = api.new_task(admin, json!({})).await;
    api.refused(admin, &t5, "approve-output", json!({}), "pending")
        .await;
    assert_eq!(api.claim(&a).await, t5);
    assert_eq!(
        api.ok(
            "POST",
            &format!("/tasks/{t5}/escalate"),
            admin,
            json!({ "reason": "help" })
        )
        .await["state"],
        "escalated"
    );
    assert_eq!(
        api.ok(
            "POST",
            &format!("/tasks/{t5}/skip"),
            admin,
            json!({ "reason": "moot" })
        )
        .await["state"],
        "completed"
    );
    let t6 = api.new_task(admin, json!({})).await;
    assert_eq!(api.claim(&a).await, t6);
    api.ok("POST", &format!("/tasks/{t6}/start"), &a.1, json!({}))
        .await;
    assert_eq!(
        api.ok("POST", &format!("/tasks/{t6}/fail"), &a.1, json!({}))
            .await["state"],
        "failed"
    );
    assert_eq!(
        api.ok(
            "POST",
            &format!("/tasks/{t6}/reassign"),
            admin,
            json!({ "reason": "again" })
        )
        .await["state"],
        "pending"
    );
    api.refused(
        admin,
        &t6,
        "resolve-escalation",
        json!({ "instructions": "i" }),
        "pending",
    )
    .await;

    // An agent key cannot claim for another agent; an unknown task is 404.
    let (status, _) = api
        .call("POST", "/tasks/claim", &a.1, json!({ "agent_id": b.0 }))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = api.call("GET", "/tasks/not-a-uuid", admin, json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Every change wrote task.state_changed with from/to and the acting agent.
    let context = api
        .ok("GET", &format!("/tasks/{id}/context"), admin, json!({}))
        .await;
    assert_eq!(context["task"]["id"], json!(id));
    assert!(context["documents"].is_array() && context["attachments"].is_array());
}

/// Reads SSE bytes into `seen` until `done` holds, failing after 10 s.
async fn read_until(
    stream: &mut reqwest::Response,
    seen: &mut String,
    done: impl Fn(&str) -> bool,
) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while !done(seen) {
        let chunk = tokio::time::timeout_at(deadline, stream.chunk())
            .await
            .unwrap_or_else(|_| panic!("stream stalled; so far: {seen}"))
            .unwrap()
            .expect("the stream stays open");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
}
