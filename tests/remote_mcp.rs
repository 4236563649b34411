//! Remote MCP servers, verified against real MCP servers this test starts
//! on loopback: one built with rmcp's server side (streamable HTTP) and one
//! hand-written for the older HTTP+SSE transport, both checking a secret
//! header. Failures (unreachable, timeout, wrong protocol, bad secret)
//! store nothing; 422s; admin scope; tenants apart; the secret never read
//! back nor logged.

use orchestrator_tests::TestServer;
use orchestrator_tests::mcp_servers::{
    SECRET, closed_port, legacy_server, plain_http_server, silent_server, streamable_server,
};
use orchestrator_tests::recording::{RecordingApi, server_log};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::sync::atomic::Ordering;

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
        Self(RecordingApi::new(server))
    }

    async fn count(&self) -> u64 {
        let (status, value) = self.admin("GET", "/remote-mcp-servers", json!({})).await;
        assert_eq!(status, StatusCode::OK, "{value}");
        value["meta"]["total"].as_u64().unwrap()
    }

    /// Asserts no body read so far holds the secret.
    fn assert_no_secret_read(&self) {
        for body in self.bodies().iter() {
            assert!(!body.contains(SECRET), "a response held the secret: {body}");
        }
    }
}

fn body(name: &str, url: &str, transport: &str) -> Value {
    json!({
        "name": name,
        "description": "test server",
        "endpointUrl": url,
        "transportPreference": transport,
        "callTimeoutSeconds": 10,
        "authMode": "parameterized",
        "enabledByDefaultForNewSpecialists": true,
        "parameters": [
            { "placement": "header", "key": "X-Api-Key", "valueKind": "secret", "value": SECRET },
            { "placement": "query", "key": "team", "valueKind": "plain", "value": "blue" },
        ],
    })
}

fn names(record: &Value, kind: &str) -> Vec<String> {
    record["capabilities"][kind]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect()
}

fn assert_log_has_no_secret() {
    let text = server_log().text();
    assert!(
        text.contains("/api/v1/remote-mcp-servers"),
        "the log was captured"
    );
    assert!(!text.contains(SECRET), "the server logged the secret");
}

#[tokio::test]
async fn verifies_over_streamable_http_and_never_reads_the_secret_back() {
    server_log();
    let server = TestServer::start().await;
    let api = Api::new(&server);
    let mcp = streamable_server().await;

    let (status, created) = api
        .admin(
            "POST",
            "/remote-mcp-servers",
            body("docs", &mcp.url, "streamable_http"),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let record = created["data"].clone();
    let id = record["id"].as_str().unwrap().to_owned();
    assert_eq!(record["verificationStatus"], "verified");
    assert_eq!(record["resolvedTransport"], "streamable_http");
    assert_eq!(record["oauthStatus"], "not_applicable");
    assert!(record["verifiedAt"].is_string());
    assert_eq!(names(&record, "tools"), ["echo"]);
    assert_eq!(
        record["capabilities"]["tools"][0]["description"],
        "Echoes its input"
    );
    assert_eq!(names(&record, "resources"), ["readme"]);
    assert_eq!(names(&record, "prompts"), ["review"]);
    assert_eq!(record["parameters"][0]["value"], "********");
    assert_eq!(record["parameters"][1]["value"], "blue");
    assert!(
        mcp.queries
            .lock()
            .unwrap()
            .iter()
            .any(|q| q.contains("team=blue")),
        "the query parameter reached the server"
    );

    // Reads: one record, masked.
    let got = api
        .ok("GET", &format!("/remote-mcp-servers/{id}"), json!({}))
        .await;
    assert_eq!(got, record);
    let (_, list) = api.admin("GET", "/remote-mcp-servers", json!({})).await;
    assert_eq!(list["meta"]["total"], 1);

    // A replace sending the mask keeps the secret: it verifies again.
    let mut replace = body("docs-renamed", &mcp.url, "auto");
    replace["parameters"][0]["value"] = json!("********");
    let replaced = api
        .ok("PUT", &format!("/remote-mcp-servers/{id}"), replace)
        .await;
    assert_eq!(replaced["name"], "docs-renamed");
    assert_eq!(replaced["resolvedTransport"], "streamable_http");
    assert_eq!(replaced["createdAt"], record["createdAt"]);

    // A replace with a wrong secret fails and changes nothing.
    let mut wrong = body("docs-wrong", &mcp.url, "streamable_http");
    wrong["parameters"][0]["value"] = json!("not-the-secret");
    let (status, failed) = api
        .admin("PUT", &format!("/remote-mcp-servers/{id}"), wrong)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{failed}");
    assert_eq!(failed["error"]["code"], "VERIFICATION_FAILED");
    assert_eq!(failed["error"]["details"]["failed_step"], "initialize");
    let still = api
        .ok("GET", &format!("/remote-mcp-servers/{id}"), json!({}))
        .await;
    assert_eq!(still["name"], "docs-renamed");

    // Reverify: verified; then the server turns us away: failed, kept.
    let again = api
        .ok(
            "POST",
            &format!("/remote-mcp-servers/{id}/reverify"),
            json!({}),
        )
        .await;
    assert_eq!(again["verificationStatus"], "verified");
    mcp.refuse.store(true, Ordering::SeqCst);
    let failed = api
        .ok(
            "POST",
            &format!("/remote-mcp-servers/{id}/reverify"),
            json!({}),
        )
        .await;
    assert_eq!(failed["verificationStatus"], "failed");
    assert_eq!(failed["verificationFailedStep"], "initialize");
    assert!(failed["verificationError"].is_string());
    assert_eq!(names(&failed, "tools"), ["echo"], "the last snapshot stays");
    let stored = api
        .ok("GET", &format!("/remote-mcp-servers/{id}"), json!({}))
        .await;
    assert_eq!(stored["verificationStatus"], "failed");

    // Events, then delete.
    let (_, events) = api
        .admin(
            "GET",
            "/events?entity_type=remote_mcp_server&per_page=50",
            json!({}),
        )
        .await;
    let kinds: Vec<&str> = events["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["type"].as_str())
        .collect();
    for kind in [
        "remote_mcp_server.created",
        "remote_mcp_server.updated",
        "remote_mcp_server.verified",
    ] {
        assert!(kinds.contains(&kind), "{kind} in {events}");
    }
    let deleted = api
        .ok("DELETE", &format!("/remote-mcp-servers/{id}"), json!({}))
        .await;
    assert_eq!(deleted["id"], id.as_str());
    let (status, _) = api
        .admin("GET", &format!("/remote-mcp-servers/{id}"), json!({}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(api.count().await, 0);

    api.assert_no_secret_read();
    assert_log_has_no_secret();
}

#[tokio::test]
async fn verifies_over_http_sse_and_auto_falls_back() {
    server_log();
    let server = TestServer::start().await;
    let api = Api::new(&server);
    let legacy = legacy_server().await;
    let modern = streamable_server().await;

    let record = api
        .ok(
            "POST",
            "/remote-mcp-servers",
            body("legacy", &legacy, "http_sse_compat"),
        )
        .await;
    assert_eq!(record["verificationStatus"], "verified");
    assert_eq!(record["resolvedTransport"], "http_sse_compat");
    assert_eq!(names(&record, "tools"), ["legacy_search"]);
    assert_eq!(names(&record, "prompts"), ["summarize"]);
    assert_eq!(names(&record, "resources"), Vec::<String>::new());

    let auto = api
        .ok(
            "POST",
            "/remote-mcp-servers",
            body("legacy-auto", &legacy, "auto"),
        )
        .await;
    assert_eq!(auto["transportPreference"], "auto");
    assert_eq!(auto["resolvedTransport"], "http_sse_compat");

    let auto = api
        .ok(
            "POST",
            "/remote-mcp-servers",
            body("modern-auto", &modern.url, "auto"),
        )
        .await;
    assert_eq!(auto["resolvedTransport"], "streamable_http");

    // Streamable HTTP only, against the legacy server: refused.
    let (status, failed) = api
        .admin(
            "POST",
            "/remote-mcp-servers",
            body("strict", &legacy, "streamable_http"),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{failed}");
    assert_eq!(failed["error"]["details"]["failed_step"], "initialize");

    // The legacy transport with a bad secret stops at the stream.
    let mut bad = body("legacy-bad", &legacy, "http_sse_compat");
    bad["parameters"][0]["value"] = json!("wrong");
    let (status, failed) = api.admin("POST", "/remote-mcp-servers", bad).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{failed}");
    assert_eq!(failed["error"]["details"]["failed_step"], "connect");
    assert_eq!(api.count().await, 3);
    api.assert_no_secret_read();
    assert_log_has_no_secret();
}

#[tokio::test]
async fn failed_verifications_store_nothing() {
    server_log();
    let server = TestServer::start().await;
    let api = Api::new(&server);
    let mcp = streamable_server().await;
    let plain = plain_http_server().await;
    let silent = silent_server().await;
    let closed = closed_port().await;

    let mut timeout = body("silent", &silent, "streamable_http");
    timeout["callTimeoutSeconds"] = json!(1);
    let mut bad_secret = body("bad", &mcp.url, "auto");
    bad_secret["parameters"][0]["value"] = json!("guess");
    let mut missing_secret = body("missing", &mcp.url, "streamable_http");
    missing_secret["parameters"] = json!([]);
    for (case, request, step) in [
        ("unreachable", body("closed", &closed, "auto"), "connect"),
        ("timeout", timeout, "initialize"),
        (
            "wrong protocol",
            body("plain", &plain, "auto"),
            "initialize",
        ),
        ("bad secret", bad_secret, "initialize"),
        ("no secret", missing_secret, "initialize"),
    ] {
        let (status, answer) = api.admin("POST", "/remote-mcp-servers", request).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{case}: {answer}");
        assert_eq!(answer["error"]["code"], "VERIFICATION_FAILED", "{case}");
        assert_eq!(
            answer["error"]["details"]["failed_step"], step,
            "{case}: {answer}"
        );
        assert!(answer["error"]["details"]["reason"].is_string(), "{case}");
    }
    assert_eq!(api.count().await, 0);
    let (_, events) = api
        .admin("GET", "/events?entity_type=remote_mcp_server", json!({}))
        .await;
    assert_eq!(events["data"], json!([]), "no event either");
    api.assert_no_secret_read();
    assert_log_has_no_secret();
}

#[tokio::test]
async fn bodies_are_strict_and_rules_hold() {
    server_log();
    let server = TestServer::start().await;
    let api = Api::new(&server);
    let mcp = streamable_server().await;
    let good = body("strict", &mcp.url, "auto");
    let with = |field: &str, value: Value| {
        let mut b = good.clone();
        b[field] = value;
        b
    };
    let mut unknown_in_parameter = good.clone();
    unknown_in_parameter["parameters"][0]["extra"] = json!(1);
    let mut bad_placement = good.clone();
    bad_placement["parameters"][0]["placement"] = json!("cookie");
    let mut bad_kind = good.clone();
    bad_kind["parameters"][0]["valueKind"] = json!("hidden");
    for (case, request, field) in [
        ("unknown field", with("color", json!("red")), "color"),
        (
            "bad enum",
            with("transportPreference", json!("websocket")),
            "transportPreference",
        ),
        (
            "bad auth mode",
            with("authMode", json!("magic")),
            "authMode",
        ),
        (
            "wrong type",
            with("callTimeoutSeconds", json!("ten")),
            "callTimeoutSeconds",
        ),
        (
            "too short",
            with("callTimeoutSeconds", json!(0)),
            "callTimeoutSeconds",
        ),
        (
            "too long",
            with("callTimeoutSeconds", json!(301)),
            "callTimeoutSeconds",
        ),
        (
            "not a url",
            with("endpointUrl", json!("not a url")),
            "endpointUrl",
        ),
        (
            "not http",
            with("endpointUrl", json!("ftp://example.com/x")),
            "endpointUrl",
        ),
        (
            "boolean",
            with("enabledByDefaultForNewSpecialists", json!("yes")),
            "enabledByDefaultForNewSpecialists",
        ),
        ("unknown in parameter", unknown_in_parameter, "parameters"),
        ("placement", bad_placement, "parameters"),
        ("value kind", bad_kind, "parameters"),
    ] {
        let (status, answer) = api.admin("POST", "/remote-mcp-servers", request).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{case}: {answer}");
        assert_eq!(
            answer["error"]["code"], "SCHEMA_VALIDATION_FAILED",
            "{case}"
        );
        assert!(
            answer["error"]["details"]["issues"]["fieldErrors"]
                .as_object()
                .unwrap()
                .keys()
                .any(|k| k.starts_with(field)),
            "{case}: {answer}"
        );
    }
    // Rules between valid fields: 400.
    let mut twice = good.clone();
    twice["parameters"][1] = json!({ "placement": "header", "key": "x-api-key", "value": "x" });
    let mut reserved = good.clone();
    reserved["parameters"][1] =
        json!({ "placement": "header", "key": "Mcp-Session-Id", "value": "x" });
    let mut mask_on_create = good.clone();
    mask_on_create["parameters"][0]["value"] = json!("********");
    for (case, request) in [
        ("twice", twice),
        ("reserved", reserved),
        ("mask on create", mask_on_create),
        (
            "credentials in url",
            with("endpointUrl", json!("http://u:p@127.0.0.1:1/mcp")),
        ),
        ("empty name", with("name", json!(" "))),
    ] {
        let (status, answer) = api.admin("POST", "/remote-mcp-servers", request).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{case}: {answer}");
        assert_eq!(
            answer["error"]["code"], "VALIDATION_ERROR",
            "{case}: {answer}"
        );
    }
    assert_eq!(api.count().await, 0);
    // A duplicate name: 409.
    api.ok("POST", "/remote-mcp-servers", good.clone()).await;
    let (status, _) = api.admin("POST", "/remote-mcp-servers", good).await;
    assert_eq!(status, StatusCode::CONFLICT);
    // Unknown and malformed ids: 404.
    for path in [
        format!("/remote-mcp-servers/{}", uuid::Uuid::new_v4()),
        "/remote-mcp-servers/not-a-uuid".into(),
        format!("/remote-mcp-servers/{}/reverify", uuid::Uuid::new_v4()),
    ] {
        let method = if path.ends_with("reverify") {
            "POST"
        } else {
            "GET"
        };
        let (status, _) = api.admin(method, &path, json!({})).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
    }
    api.assert_no_secret_read();
}

#[tokio::test]
async fn admin_only_and_tenants_apart() {
    server_log();
    let server = TestServer::start().await;
    let api = Api::new(&server);
    let mcp = streamable_server().await;
    let record = api
        .ok(
            "POST",
            "/remote-mcp-servers",
            body("mine", &mcp.url, "auto"),
        )
        .await;
    let id = record["id"].as_str().unwrap();
    let agent = api
        .ok(
            "POST",
            "/agents/register",
            json!({ "name": "a", "issue_api_key": true }),
        )
        .await;
    let agent_key = agent["api_key"].as_str().unwrap();
    for (method, path) in [
        ("GET", "/remote-mcp-servers".to_owned()),
        ("POST", "/remote-mcp-servers".to_owned()),
        ("GET", format!("/remote-mcp-servers/{id}")),
        ("PUT", format!("/remote-mcp-servers/{id}")),
        ("DELETE", format!("/remote-mcp-servers/{id}")),
        ("POST", format!("/remote-mcp-servers/{id}/reverify")),
    ] {
        let (status, _) = api
            .call(method, &path, agent_key, body("x", &mcp.url, "auto"))
            .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{method} {path}");
    }
    let (status, other) = api
        .call(
            "POST",
            "/tenants",
            &server.service_key,
            json!({ "name": "Other" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{other}");
    let theirs = other["data"]["admin_key"]["api_key"].as_str().unwrap();
    let (_, list) = api
        .call("GET", "/remote-mcp-servers", theirs, json!({}))
        .await;
    assert_eq!(list["meta"]["total"], 0);
    for (method, path) in [
        ("GET", format!("/remote-mcp-servers/{id}")),
        ("PUT", format!("/remote-mcp-servers/{id}")),
        ("DELETE", format!("/remote-mcp-servers/{id}")),
        ("POST", format!("/remote-mcp-servers/{id}/reverify")),
    ] {
        let (status, _) = api
            .call(method, &path, theirs, body("x", &mcp.url, "auto"))
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}");
    }
    // Their own server of the same name is fine.
    let (status, _) = api
        .call(
            "POST",
            "/remote-mcp-servers",
            theirs,
            body("mine", &mcp.url, "auto"),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(api.count().await, 1);
    api.assert_no_secret_read();
}

#[tokio::test]
async fn private_endpoints_are_refused_unless_allowed() {
    let server = TestServer::start_with(|config| config.core.allow_private_network = false).await;
    let api = Api::new(&server);
    let mcp = streamable_server().await;
    let (status, answer) = api
        .admin(
            "POST",
            "/remote-mcp-servers",
            body("local", &mcp.url, "auto"),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["error"]["code"], "VALIDATION_ERROR");
    assert!(answer["error"]["details"]["issues"]["fieldErrors"]["endpointUrl"].is_array());
    assert!(mcp.queries.lock().unwrap().is_empty(), "never contacted");
    assert_eq!(api.count().await, 0);
}

/// A claimed task lists one `mcp_server` handle per server enabled for
/// its agent (enabled by default before the agent registered); the
/// assignee resolves it into the parameters in clear, nobody else can.
#[tokio::test]
async fn claimed_tasks_carry_mcp_handles_for_the_agent() {
    server_log();
    let server = TestServer::start().await;
    let api = Api::new(&server);
    let mcp = streamable_server().await;
    let register = |name: &'static str| {
        let api = &api;
        async move {
            let agent = api
                .ok(
                    "POST",
                    "/agents/register",
                    json!({ "name": name, "issue_api_key": true }),
                )
                .await;
            (
                agent["id"].as_str().unwrap().to_owned(),
                agent["api_key"].as_str().unwrap().to_owned(),
            )
        }
    };
    let early = register("early").await;
    let enabled = api
        .ok(
            "POST",
            "/remote-mcp-servers",
            body("enabled", &mcp.url, "auto"),
        )
        .await;
    let mut off = body("off", &mcp.url, "auto");
    off["enabledByDefaultForNewSpecialists"] = json!(false);
    api.ok("POST", "/remote-mcp-servers", off).await;
    let late = register("late").await;

    let claim = |agent: &(String, String)| {
        let (api, agent) = (&api, agent.clone());
        async move {
            api.ok("POST", "/tasks", json!({ "title": "t", "type": "code" }))
                .await;
            let (status, task) = api
                .call(
                    "POST",
                    "/tasks/claim",
                    &agent.1,
                    json!({ "agent_id": agent.0 }),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{task}");
            task["data"].clone()
        }
    };
    let task = claim(&late).await;
    let handles: Vec<&Value> = task["credentials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "mcp_server")
        .collect();
    assert_eq!(handles.len(), 1, "{task}");
    assert_eq!(handles[0]["server_id"], enabled["id"]);
    let handle = handles[0]["handle"].as_str().unwrap().to_owned();
    assert!(handle.starts_with("claim:v1:"));
    let task_id = task["id"].as_str().unwrap().to_owned();
    let path = format!("/tasks/{task_id}/claim-credentials");

    // The assignee gets the values (the only place the secret goes).
    let response = server
        .http()
        .post(server.at(&format!("/api/v1{path}")))
        .bearer_auth(&late.1)
        .json(&json!({ "mcp_claim_handles": [handle] }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let resolved: Value = response.json().await.unwrap();
    let values = &resolved["data"]["mcp_claim_values"][&handle];
    assert_eq!(values["server_id"], enabled["id"]);
    assert_eq!(values["endpoint_url"], enabled["endpointUrl"]);
    let parameters = values["parameters"].as_array().unwrap();
    assert!(
        parameters
            .iter()
            .any(|p| p["key"] == "X-Api-Key" && p["value"] == SECRET)
    );

    // The agent registered before the server was enabled gets none; its
    // key cannot resolve the other task's handle; a handle of another
    // task is foreign.
    let other = claim(&early).await;
    assert!(
        !other["credentials"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["kind"] == "mcp_server"),
        "{other}"
    );
    let (status, _) = api
        .call(
            "POST",
            &path,
            &early.1,
            json!({ "mcp_claim_handles": [handle] }),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let other_path = format!("/tasks/{}/claim-credentials", other["id"].as_str().unwrap());
    let (status, _) = api
        .call(
            "POST",
            &other_path,
            &early.1,
            json!({ "mcp_claim_handles": [handle] }),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // The server deleted: the handle is stale.
    let id = enabled["id"].as_str().unwrap();
    api.ok("DELETE", &format!("/remote-mcp-servers/{id}"), json!({}))
        .await;
    let (status, _) = api
        .call(
            "POST",
            &path,
            &late.1,
            json!({ "mcp_claim_handles": [handle] }),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // The resolution left an auth log row naming the kind only.
    let (_, logs) = api
        .admin(
            "GET",
            "/logs?category=auth&operation=task.claim_credentials",
            json!({}),
        )
        .await;
    assert!(logs.to_string().contains("mcp_server"), "{logs}");
    api.assert_no_secret_read();
    assert_log_has_no_secret();
}
