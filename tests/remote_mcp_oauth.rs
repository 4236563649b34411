//! Remote MCP servers with `authMode: oauth`, against a loopback OAuth 2.1
//! authorization server and the MCP server it guards (the harness's
//! `oauth_server`): discovery, dynamic registration, authorization code
//! with PKCE S256 (the test follows the authorization URL itself; the
//! authorization server approves at once and redirects to orch's callback),
//! verification with the bearer token, claim credentials handing the access
//! token to the assignee, refresh before expiry, revocation on disconnect,
//! one-time state, scopes and 422s. No token is ever read back elsewhere.

use orchestrator_tests::TestServer;
use orchestrator_tests::mcp_servers::{SECRET, oauth_server, streamable_server};
use orchestrator_tests::recording::{RecordingApi, server_log};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn assert_log_has_none_of(tokens: &[String]) {
    let text = server_log().text();
    assert!(text.contains("oauth/callback"), "the log was captured");
    for token in tokens {
        assert!(!text.contains(token.as_str()), "the server logged a token");
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
        Self(RecordingApi::new(server))
    }

    /// The authorization round trip: reconnect, follow the authorization
    /// URL (the authorization server redirects to the callback), call the
    /// callback. Answers the callback's status and body, and its URL.
    async fn connect(&self, id: &str) -> (StatusCode, Value, String) {
        let started = self
            .ok(
                "POST",
                &format!("/remote-mcp-servers/{id}/oauth/reconnect"),
                json!({}),
            )
            .await;
        let authorization_url = started["authorization_url"].as_str().unwrap().to_owned();
        let browser = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let approved = browser.get(&authorization_url).send().await.unwrap();
        assert_eq!(approved.status(), StatusCode::FOUND, "{authorization_url}");
        let callback = approved.headers()["location"].to_str().unwrap().to_owned();
        let (status, body) = self.browse(&callback).await;
        (status, body, callback)
    }

    /// A GET without any credential (the browser).
    async fn browse(&self, url: &str) -> (StatusCode, Value) {
        let response = reqwest::get(url).await.unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        self.record(&text);
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    fn assert_never_read(&self, tokens: &[String]) {
        for body in self.bodies().iter() {
            for token in tokens {
                assert!(
                    !body.contains(token.as_str()),
                    "a response held a token: {body}"
                );
            }
        }
    }
}

fn oauth_body(name: &str, url: &str) -> Value {
    json!({
        "name": name,
        "endpointUrl": url,
        "transportPreference": "streamable_http",
        "callTimeoutSeconds": 10,
        "authMode": "oauth",
        "enabledByDefaultForNewSpecialists": true,
    })
}

#[tokio::test]
async fn oauth_round_trip_claims_refreshes_and_disconnects() {
    server_log();
    let server = TestServer::start().await;
    let api = Api::new(&server);
    let guarded = oauth_server().await;

    // Created before any token: stored unverified and disconnected.
    let (status, created) = api
        .admin(
            "POST",
            "/remote-mcp-servers",
            oauth_body("guarded", &guarded.url),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let record = created["data"].clone();
    assert_eq!(record["verificationStatus"], "unverified");
    assert_eq!(record["oauthStatus"], "disconnected");
    let id = record["id"].as_str().unwrap().to_owned();
    let reverified = api
        .ok(
            "POST",
            &format!("/remote-mcp-servers/{id}/reverify"),
            json!({}),
        )
        .await;
    assert_eq!(reverified["verificationStatus"], "failed");
    assert_eq!(reverified["verificationFailedStep"], "oauth");

    // The round trip: connected, verified with the bearer, capabilities.
    let (status, connected, callback) = api.connect(&id).await;
    assert_eq!(status, StatusCode::OK, "{connected}");
    let connected = &connected["data"];
    assert_eq!(connected["oauthStatus"], "connected", "{connected}");
    assert_eq!(connected["verificationStatus"], "verified", "{connected}");
    assert_eq!(connected["resolvedTransport"], "streamable_http");
    assert!(
        connected["capabilities"]["tools"]
            .to_string()
            .contains("echo")
    );
    {
        let state = guarded.state.lock().unwrap();
        assert_eq!(state.clients.len(), 1, "dynamic registration");
        assert!(
            state.refused.is_empty(),
            "PKCE S256 checked: {:?}",
            state.refused
        );
        let (scope, resource) = &state.authorizations[0];
        assert_eq!(scope, "mcp.tools mcp.read");
        assert_eq!(resource, &guarded.url);
        assert_eq!(state.access_tokens.len(), 1);
    }
    // The state works once; a made-up or missing state is refused.
    let (status, replayed) = api.browse(&callback).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{replayed}");
    assert_eq!(replayed["error"]["code"], "VALIDATION_ERROR");
    for query in ["code=x&state=made-up", "code=x", ""] {
        let (status, answer) = api
            .browse(&server.at(&format!(
                "/api/v1/remote-mcp-servers/oauth/callback?{query}"
            )))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {answer}");
        assert_eq!(answer["error"]["code"], "VALIDATION_ERROR", "{query}");
    }
    let record = api
        .ok("GET", &format!("/remote-mcp-servers/{id}"), json!({}))
        .await;
    assert_eq!(record["oauthStatus"], "connected");

    // Claim credentials hand the access token to the assignee.
    let agent = api
        .ok(
            "POST",
            "/agents/register",
            json!({ "name": "a", "issue_api_key": true }),
        )
        .await;
    let (agent_id, agent_key) = (
        agent["id"].as_str().unwrap().to_owned(),
        agent["api_key"].as_str().unwrap().to_owned(),
    );
    let resolve = || {
        let (api, agent_id, agent_key) = (&api, agent_id.clone(), agent_key.clone());
        async move {
            api.ok("POST", "/tasks", json!({ "title": "t", "type": "code" }))
                .await;
            let (status, task) = api
                .call(
                    "POST",
                    "/tasks/claim",
                    &agent_key,
                    json!({ "agent_id": agent_id }),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{task}");
            let task = &task["data"];
            let handle = task["credentials"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["kind"] == "mcp_server")
                .unwrap()["handle"]
                .as_str()
                .unwrap()
                .to_owned();
            let response = api
                .server
                .http()
                .post(api.server.at(&format!(
                    "/api/v1/tasks/{}/claim-credentials",
                    task["id"].as_str().unwrap()
                )))
                .bearer_auth(&agent_key)
                .json(&json!({ "mcp_claim_handles": [handle] }))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            let resolved: Value = response.json().await.unwrap();
            resolved["data"]["mcp_claim_values"][&handle]["oauth_access_token"].clone()
        }
    };
    let live = guarded.state.lock().unwrap().access_tokens[0].clone();
    assert_eq!(resolve().await, json!(live));
    assert_eq!(guarded.state.lock().unwrap().refreshes, 0);

    // Tokens that expire within the minute are refreshed when used.
    guarded.state.lock().unwrap().expires_in = 5;
    let (status, again, _) = api.connect(&id).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    let reverified = api
        .ok(
            "POST",
            &format!("/remote-mcp-servers/{id}/reverify"),
            json!({}),
        )
        .await;
    assert_eq!(reverified["verificationStatus"], "verified", "{reverified}");
    assert_eq!(reverified["oauthStatus"], "connected");
    assert!(guarded.state.lock().unwrap().refreshes >= 1);
    let token = resolve().await;
    {
        let state = guarded.state.lock().unwrap();
        assert!(state.refreshes >= 2, "refreshed for the claim too");
        assert_eq!(token, json!(state.access_tokens.last().unwrap()));
        assert_ne!(token, json!(live));
    }
    // Concurrent uses of a token about to expire: the refresh token
    // rotates, yet every use ends with a working token.
    let reverifies = (0..4).map(|_| {
        let (api, id) = (&api, id.clone());
        async move {
            api.ok(
                "POST",
                &format!("/remote-mcp-servers/{id}/reverify"),
                json!({}),
            )
            .await
        }
    });
    for outcome in futures_util::future::join_all(reverifies).await {
        assert_eq!(outcome["verificationStatus"], "verified", "{outcome}");
        assert_eq!(outcome["oauthStatus"], "connected", "{outcome}");
    }

    // Disconnect revokes (RFC 7009) and deletes the tokens.
    let access_token = resolve().await.as_str().unwrap().to_owned();
    let refresh_token = guarded
        .state
        .lock()
        .unwrap()
        .refresh_tokens
        .last()
        .unwrap()
        .clone();
    let disconnected = api
        .ok(
            "POST",
            &format!("/remote-mcp-servers/{id}/oauth/disconnect"),
            json!({}),
        )
        .await;
    assert_eq!(disconnected["oauthStatus"], "disconnected");
    {
        let state = guarded.state.lock().unwrap();
        assert!(
            state.revoked.contains(&refresh_token),
            "{:?}",
            state.revoked
        );
        assert!(!state.refresh_tokens.contains(&refresh_token));
        assert!(state.revoked.contains(&access_token), "{:?}", state.revoked);
        assert!(!state.access_tokens.contains(&access_token));
    }
    assert_eq!(resolve().await, Value::Null);
    let reverified = api
        .ok(
            "POST",
            &format!("/remote-mcp-servers/{id}/reverify"),
            json!({}),
        )
        .await;
    assert_eq!(reverified["verificationFailedStep"], "oauth");

    // A refresh the authorization server refuses: expired.
    let (status, _, _) = api.connect(&id).await;
    assert_eq!(status, StatusCode::OK);
    guarded.state.lock().unwrap().refresh_tokens.clear();
    let reverified = api
        .ok(
            "POST",
            &format!("/remote-mcp-servers/{id}/reverify"),
            json!({}),
        )
        .await;
    assert_eq!(reverified["oauthStatus"], "expired", "{reverified}");
    assert_eq!(reverified["verificationStatus"], "failed");

    // No token in any answer but the claim-credentials ones (read apart).
    let state = guarded.state.lock().unwrap();
    let mut tokens: Vec<String> = state.revoked.clone();
    tokens.extend(state.access_tokens.iter().cloned());
    tokens.extend(state.refresh_tokens.iter().cloned());
    drop(state);
    api.assert_never_read(&tokens);
    assert_log_has_none_of(&tokens);
}

#[tokio::test]
async fn oauth_rules_scopes_and_422s() {
    server_log();
    let server = TestServer::start().await;
    let api = Api::new(&server);
    let guarded = oauth_server().await;
    let record = api
        .ok(
            "POST",
            "/remote-mcp-servers",
            oauth_body("guarded", &guarded.url),
        )
        .await;
    let id = record["id"].as_str().unwrap().to_owned();

    // A wrong authMode value: 422 with the field.
    let mut wrong = oauth_body("wrong", &guarded.url);
    wrong["authMode"] = json!("oauth2");
    let (status, answer) = api.admin("POST", "/remote-mcp-servers", wrong).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    assert_eq!(answer["error"]["code"], "SCHEMA_VALIDATION_FAILED");

    // Reconnect and disconnect need an oauth server (400) that exists (404).
    let mut plain = oauth_body("plain", &guarded.url);
    plain["authMode"] = json!("none");
    let (status, answer) = api.admin("POST", "/remote-mcp-servers", plain).await;
    // The guarded MCP server refuses requests without a token.
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["error"]["code"], "VERIFICATION_FAILED");
    let unknown = uuid::Uuid::new_v4();
    for action in ["reconnect", "disconnect"] {
        let (status, _) = api
            .admin(
                "POST",
                &format!("/remote-mcp-servers/{unknown}/oauth/{action}"),
                json!({}),
            )
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{action}");
    }

    // Admin scope only; the callback is public (its state authenticates).
    let agent = api
        .ok(
            "POST",
            "/agents/register",
            json!({ "name": "a", "issue_api_key": true }),
        )
        .await;
    let agent_key = agent["api_key"].as_str().unwrap();
    for action in ["reconnect", "disconnect"] {
        let (status, _) = api
            .call(
                "POST",
                &format!("/remote-mcp-servers/{id}/oauth/{action}"),
                agent_key,
                json!({}),
            )
            .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{action}");
    }
    assert!(guarded.state.lock().unwrap().clients.is_empty());

    // Another tenant's admin: 404 on both routes.
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
    for action in ["reconnect", "disconnect"] {
        let (status, _) = api
            .call(
                "POST",
                &format!("/remote-mcp-servers/{id}/oauth/{action}"),
                theirs,
                json!({}),
            )
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{action}");
    }

    // A replace on the same endpoint verifies with the stored token.
    let (status, _, _) = api.connect(&id).await;
    assert_eq!(status, StatusCode::OK);
    let mut renamed = oauth_body("guarded-2", &guarded.url);
    renamed["description"] = json!("renamed");
    let replaced = api
        .ok("PUT", &format!("/remote-mcp-servers/{id}"), renamed)
        .await;
    assert_eq!(replaced["oauthStatus"], "connected", "{replaced}");
    assert_eq!(replaced["verificationStatus"], "verified", "{replaced}");

    // A replace to another endpoint drops the connection.
    let other = oauth_server().await;
    let replaced = api
        .ok(
            "PUT",
            &format!("/remote-mcp-servers/{id}"),
            oauth_body("guarded", &other.url),
        )
        .await;
    assert_eq!(replaced["oauthStatus"], "disconnected");
    assert_eq!(replaced["verificationStatus"], "unverified");
    // Back to parameterized without parameters: verification fails (400)
    // and nothing changes.
    let mut none = oauth_body("guarded", &other.url);
    none["authMode"] = json!("none");
    let (status, _) = api
        .admin("PUT", &format!("/remote-mcp-servers/{id}"), none)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let record = api
        .ok("GET", &format!("/remote-mcp-servers/{id}"), json!({}))
        .await;
    assert_eq!(record["authMode"], "oauth");
    // Disconnecting a server that is not connected is fine.
    let disconnected = api
        .ok(
            "POST",
            &format!("/remote-mcp-servers/{id}/oauth/disconnect"),
            json!({}),
        )
        .await;
    assert_eq!(disconnected["oauthStatus"], "disconnected");

    // Reconnect and disconnect of a server that is not oauth: 400.
    let mcp = streamable_server().await;
    let keyed = api
        .ok(
            "POST",
            "/remote-mcp-servers",
            json!({
                "name": "keyed",
                "endpointUrl": mcp.url,
                "authMode": "parameterized",
                "parameters": [{ "placement": "header", "key": "x-api-key",
                                 "valueKind": "secret", "value": SECRET }],
            }),
        )
        .await;
    assert_eq!(keyed["oauthStatus"], "not_applicable");
    for action in ["reconnect", "disconnect"] {
        let (status, answer) = api
            .admin(
                "POST",
                &format!(
                    "/remote-mcp-servers/{}/oauth/{action}",
                    keyed["id"].as_str().unwrap()
                ),
                json!({}),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{action}: {answer}");
        assert_eq!(answer["error"]["code"], "VALIDATION_ERROR");
    }
}
