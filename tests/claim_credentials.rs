//! Claim credentials: `/settings/llm` (admin, secrets write-only and masked,
//! a masked value keeps the stored one), the handles a claimed task lists,
//! and their resolution by the current assignee only (400 / 403 / 404 /
//! 409), with an `auth` log row and no secret in any read nor in the
//! server's log output.

use orchestrator_tests::TestServer;
use orchestrator_tests::recording::{RecordingApi, server_log};
use reqwest::StatusCode;
use serde_json::{Value, json};

const API_KEY: &str = "sk-live-4242-secret-value";
const HEADER_SECRET: &str = "org-secret-header-777";

/// Asserts the captured log holds request lines and no secret.
fn assert_log_has_no_secret() {
    let text = server_log().text();
    assert!(
        text.contains("/api/v1/settings/llm"),
        "the log was captured"
    );
    for secret in [API_KEY, HEADER_SECRET] {
        assert!(!text.contains(secret), "the server logged a secret");
    }
}

/// The recording client, with this file's helpers.
struct Api<'a>(RecordingApi<'a>);

impl<'a> std::ops::Deref for Api<'a> {
    type Target = RecordingApi<'a>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<'a> Api<'a> {
    fn new(server: &'a TestServer) -> Self {
        Self(RecordingApi::reads_only(server))
    }

    async fn ok(&self, method: &str, path: &str, key: &str, body: Value) -> Value {
        let (status, value) = self.call(method, path, key, body).await;
        assert!(status.is_success(), "{method} {path}: {status} {value}");
        value["data"].clone()
    }

    /// The status of resolving one API-key handle of task `id` with `key`.
    async fn resolve_key(&self, id: &str, key: &str, handle: &str) -> (StatusCode, Value) {
        self.call(
            "POST",
            &format!("/tasks/{id}/claim-credentials"),
            key,
            json!({ "llm_api_key_claim_handle": handle }),
        )
        .await
    }

    async fn agent(&self, name: &str) -> (String, String) {
        let agent = self
            .ok(
                "POST",
                "/agents/register",
                &self.server.admin_key,
                json!({ "name": name, "issue_api_key": true }),
            )
            .await;
        (
            agent["id"].as_str().unwrap().to_owned(),
            agent["api_key"].as_str().unwrap().to_owned(),
        )
    }

    async fn task(&self) -> String {
        self.ok(
            "POST",
            "/tasks",
            &self.server.admin_key,
            json!({ "title": "t", "type": "code" }),
        )
        .await["id"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    async fn claim(&self, agent: &(String, String)) -> Value {
        self.ok(
            "POST",
            "/tasks/claim",
            &agent.1,
            json!({ "agent_id": agent.0 }),
        )
        .await
    }
}

fn handle_of(task: &Value, kind: &str) -> String {
    task["credentials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == kind)
        .unwrap_or_else(|| panic!("a {kind} handle in {task}"))["handle"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn llm_settings_are_write_only_and_masked() {
    server_log();
    let server = TestServer::start().await;
    let api = Api::new(&server);
    let admin = &server.admin_key;
    let empty = api.ok("GET", "/settings/llm", admin, json!({})).await;
    assert_eq!(empty["provider"], Value::Null);
    assert_eq!(empty["api_key"], Value::Null);

    let put = json!({
        "provider": "openai", "model": "gpt-x", "base_url": "https://llm.example/v1",
        "api_key": API_KEY, "extra_headers": { "X-Org": HEADER_SECRET },
    });
    let saved = api.ok("PUT", "/settings/llm", admin, put).await;
    assert_eq!(saved["api_key"], "********");
    assert_eq!(saved["extra_headers"], json!({ "X-Org": "********" }));
    assert_eq!(saved["model"], "gpt-x");

    // Echoing the masks keeps the secrets; a claim later resolves them.
    let kept = api
        .ok(
            "PUT",
            "/settings/llm",
            admin,
            json!({ "provider": "openai", "model": "gpt-y", "api_key": "********",
                    "extra_headers": { "X-Org": "********" } }),
        )
        .await;
    assert_eq!(kept["api_key"], "********");
    assert_eq!(kept["base_url"], Value::Null);

    // 422: schema; 400: rules; neither changes anything.
    for body in [
        json!({ "model": "m" }),
        json!({ "provider": 5 }),
        json!({ "provider": "p", "api_key": ["x"] }),
        json!({ "provider": "p", "surprise": true }),
        json!({ "provider": "p", "extra_headers": { "X": 1 } }),
    ] {
        let (status, value) = api.call("PUT", "/settings/llm", admin, body.clone()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {value}");
        assert_eq!(value["error"]["code"], "SCHEMA_VALIDATION_FAILED");
    }
    for body in [
        json!({ "provider": " " }),
        json!({ "provider": "p", "base_url": "ftp://x" }),
        json!({ "provider": "p", "extra_headers": { "bad header": "v" } }),
        json!({ "provider": "p", "extra_headers": { "X-New": "********" } }),
        json!({ "provider": "p", "api_key": "line\nbreak" }),
    ] {
        let (status, value) = api.call("PUT", "/settings/llm", admin, body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {value}");
    }
    let after = api.ok("GET", "/settings/llm", admin, json!({})).await;
    assert_eq!(after["model"], "gpt-y");
    assert_eq!(after["api_key"], "********");

    // Admin only; tenants apart.
    let agent = api.agent("reader").await;
    let (status, _) = api.call("GET", "/settings/llm", &agent.1, json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let other = api
        .ok(
            "POST",
            "/tenants",
            &server.service_key,
            json!({ "name": "Other" }),
        )
        .await;
    let other_admin = other["admin_key"]["api_key"].as_str().unwrap();
    let theirs = api.ok("GET", "/settings/llm", other_admin, json!({})).await;
    assert_eq!(theirs["provider"], Value::Null);

    // Removing the key: absent in the PUT.
    let removed = api
        .ok(
            "PUT",
            "/settings/llm",
            admin,
            json!({ "provider": "openai" }),
        )
        .await;
    assert_eq!(removed["api_key"], Value::Null);
    assert_eq!(removed["extra_headers"], json!({}));
    for body in api.bodies().iter() {
        assert!(
            !body.contains(API_KEY) && !body.contains(HEADER_SECRET),
            "{body}"
        );
    }
    assert_log_has_no_secret();
}

#[tokio::test]
async fn the_assignee_resolves_handles_and_nobody_else_sees_secrets() {
    server_log();
    let server = TestServer::start().await;
    let api = Api::new(&server);
    let admin = server.admin_key.clone();

    // Without settings a claimed task lists no credentials.
    let a = api.agent("runner").await;
    let b = api.agent("bystander").await;
    let plain = api.task().await;
    let claimed = api.claim(&a).await;
    assert_eq!(claimed["id"], json!(plain));
    assert_eq!(claimed["credentials"], json!([]));
    api.ok("POST", &format!("/tasks/{plain}/complete"), &a.1, json!({}))
        .await;

    api.ok(
        "PUT",
        "/settings/llm",
        &admin,
        json!({ "provider": "anthropic", "api_key": API_KEY,
                "extra_headers": { "X-Org": HEADER_SECRET } }),
    )
    .await;
    let id = api.task().await;
    let claimed = api.claim(&a).await;
    assert_eq!(claimed["id"], json!(id));
    let key_handle = handle_of(&claimed, "llm_api_key");
    let headers_handle = handle_of(&claimed, "llm_extra_headers");
    assert!(key_handle.starts_with("claim:v1:"));
    assert!(!claimed.to_string().contains(API_KEY));
    let path = format!("/tasks/{id}/claim-credentials");

    let resolved = api
        .ok(
            "POST",
            &path,
            &a.1,
            json!({ "llm_api_key_claim_handle": key_handle,
                    "llm_extra_headers_claim_handle": headers_handle }),
        )
        .await;
    assert_eq!(resolved["llm_api_key"], API_KEY);
    assert_eq!(
        resolved["llm_extra_headers"],
        json!({ "X-Org": HEADER_SECRET })
    );
    assert_eq!(resolved["mcp_claim_values"], json!({}));

    // Refusals.
    let cases = [
        (
            &b.1,
            json!({ "llm_api_key_claim_handle": key_handle }),
            StatusCode::FORBIDDEN,
        ),
        (&a.1, json!({}), StatusCode::BAD_REQUEST),
        // A handle given for the other field does not open.
        (
            &a.1,
            json!({ "llm_extra_headers_claim_handle": key_handle }),
            StatusCode::NOT_FOUND,
        ),
        (
            &a.1,
            json!({ "llm_api_key_claim_handle": "claim:v1:v1.AAAA" }),
            StatusCode::NOT_FOUND,
        ),
    ];
    for (key, body, expected) in cases {
        let (status, value) = api.call("POST", &path, key, body.clone()).await;
        assert_eq!(status, expected, "{body}: {value}");
    }
    // A handle of another task does not open for this one.
    let other_task = api.task().await;
    let other = api.claim(&b).await;
    assert_eq!(other["id"], json!(other_task));
    let foreign = handle_of(&other, "llm_api_key");
    let (status, _) = api.resolve_key(&id, &a.1, &foreign).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Each resolution wrote an auth row, without the secret.
    let logs = api
        .ok(
            "GET",
            "/logs?category=auth&operation=task.claim_credentials",
            &admin,
            json!({}),
        )
        .await;
    let rows = logs.as_array().unwrap();
    assert_eq!(rows.len(), 1, "{logs}");
    assert_eq!(rows[0]["task_id"], json!(id));
    assert_eq!(
        rows[0]["payload"]["kinds"],
        json!(["llm_api_key", "llm_extra_headers"])
    );

    // A new claim of the same task makes old handles stale.
    api.ok(
        "POST",
        &format!("/tasks/{id}/reassign"),
        &admin,
        json!({ "reason": "move" }),
    )
    .await;
    let (status, _) = api.resolve_key(&id, &a.1, &key_handle).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "released: no assignee");
    let again = api.claim(&a).await;
    assert_eq!(again["id"], json!(id));
    let (status, _) = api.resolve_key(&id, &a.1, &key_handle).await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "a handle of the earlier claim"
    );
    let fresh = handle_of(&again, "llm_api_key");
    api.ok(
        "POST",
        &path,
        &a.1,
        json!({ "llm_api_key_claim_handle": fresh }),
    )
    .await;

    // Once the task is done its handles are gone: 409.
    api.ok("POST", &format!("/tasks/{id}/complete"), &a.1, json!({}))
        .await;
    let (status, value) = api.resolve_key(&id, &a.1, &fresh).await;
    assert_eq!(status, StatusCode::CONFLICT, "{value}");

    // No read shows a secret: tasks, events, logs, settings.
    for path in [
        format!("/tasks/{id}"),
        "/tasks".to_owned(),
        "/events?limit=500".to_owned(),
        "/logs?per_page=500".to_owned(),
        "/settings/llm".to_owned(),
    ] {
        api.ok("GET", &path, &admin, json!({})).await;
    }
    for body in api.bodies().iter() {
        assert!(
            !body.contains(API_KEY) && !body.contains(HEADER_SECRET),
            "{body}"
        );
    }
    assert_log_has_no_secret();
}
