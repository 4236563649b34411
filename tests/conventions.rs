//! The conventions every route follows: envelopes, field errors, 404/405/413,
//! pagination, `request_id` idempotency, tenant isolation, the rate limiter,
//! health checks and bootstrap keys.

use orchestrator_client::api::{CreateApiKey, CreateTenant, ErrorCode, PageRequest, Scope};
use orchestrator_server::ServerConfig;
use orchestrator_tests::{TestServer, key_request};
use reqwest::StatusCode;
use reqwest::header::AUTHORIZATION;
use serde_json::{Value, json};

fn agent_key(name: &str) -> CreateApiKey {
    key_request(Scope::Agent, name)
}

async fn post(server: &TestServer, path: &str, key: &str, body: &str) -> (StatusCode, Value) {
    let response = server
        .http()
        .post(server.at(path))
        .header(AUTHORIZATION, format!("Bearer {key}"))
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn invalid_bodies_get_422_with_field_errors_and_change_nothing() {
    let server = TestServer::start().await;
    let before = server
        .admin()
        .api_keys()
        .list(PageRequest::default())
        .await
        .unwrap()
        .total;

    let (status, body) = post(
        &server,
        "/api/v1/api-keys",
        &server.admin_key,
        r#"{"scope": "root", "name": 7, "bogus": true}"#,
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(body["error"]["code"], "SCHEMA_VALIDATION_FAILED");
    let fields = body["error"]["details"]["issues"]["fieldErrors"]
        .as_object()
        .unwrap();
    let mut names: Vec<&str> = fields.keys().map(String::as_str).collect();
    names.sort();
    assert_eq!(names, vec!["bogus", "name", "scope"], "{body}");
    assert!(
        fields["scope"][0]
            .as_str()
            .unwrap()
            .contains("unknown variant")
    );
    assert!(body["error"]["details"]["issues"]["formErrors"].is_array());
    assert!(body["meta"]["request_id"].is_string() && body["meta"]["timestamp"].is_string());

    let (status, body) = post(
        &server,
        "/api/v1/api-keys",
        &server.admin_key,
        "{\"scope\": ",
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        body["error"]["details"]["issues"]["formErrors"][0]
            .as_str()
            .unwrap()
            .starts_with("malformed JSON")
    );

    let (status, body) = post(&server, "/api/v1/api-keys", &server.admin_key, "{}").await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        body["error"]["details"]["issues"]["fieldErrors"]["scope"],
        json!(["Required"])
    );

    // The SDK surfaces the same details.
    let sdk_error = server.anonymous().auth().token("", true).await.unwrap_err();
    assert_eq!(sdk_error.status(), Some(401));
    let (status, body) = post(
        &server,
        "/api/v1/auth/token",
        "x",
        r#"{"api_key": 5, "persistent_session": "yes"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let fields = body["error"]["details"]["issues"]["fieldErrors"]
        .as_object()
        .unwrap();
    assert!(
        fields.contains_key("api_key") && fields.contains_key("persistent_session"),
        "{body}"
    );

    // A well-formed request that breaks a rule is 400 VALIDATION_ERROR.
    let (status, body) = post(
        &server,
        "/api/v1/api-keys",
        &server.admin_key,
        r#"{"scope": "agent", "expires_at": "2001-01-01T00:00:00Z"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"]["code"], "VALIDATION_ERROR");
    assert!(body["error"]["details"]["issues"]["fieldErrors"]["expires_at"].is_array());

    let after = server
        .admin()
        .api_keys()
        .list(PageRequest::default())
        .await
        .unwrap()
        .total;
    assert_eq!(before, after, "failed requests must not write");
}

#[tokio::test]
async fn unknown_routes_bad_ids_wrong_methods_and_big_bodies() {
    let server = TestServer::start().await;
    let http = server.http();
    let auth = format!("Bearer {}", server.admin_key);

    let unknown = http
        .get(server.at("/api/v1/nothing-here"))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    let body: Value = unknown.json().await.unwrap();
    assert_eq!(body["error"]["code"], "NOT_FOUND");

    let bad_id = http
        .delete(server.at("/api/v1/api-keys/not-a-uuid"))
        .header(AUTHORIZATION, &auth)
        .send()
        .await
        .unwrap();
    assert_eq!(bad_id.status(), StatusCode::NOT_FOUND);
    let body: Value = bad_id.json().await.unwrap();
    assert_eq!(body["error"]["code"], "NOT_FOUND");
    let missing = server
        .admin()
        .api_keys()
        .revoke(uuid::Uuid::new_v4())
        .await
        .unwrap_err();
    assert_eq!(missing.status(), Some(404));

    let wrong_method = http
        .put(server.at("/api/v1/api-keys"))
        .header(AUTHORIZATION, &auth)
        .send()
        .await
        .unwrap();
    assert_eq!(wrong_method.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(wrong_method.headers()["allow"], "GET, POST");
    let body: Value = wrong_method.json().await.unwrap();
    assert_eq!(body["error"]["code"], "METHOD_NOT_ALLOWED");

    let huge = format!(
        r#"{{"scope": "agent", "name": "{}"}}"#,
        "x".repeat(1024 * 1024 + 10)
    );
    let too_big = http
        .post(server.at("/api/v1/api-keys"))
        .header(AUTHORIZATION, &auth)
        .header("content-type", "application/json")
        .body(huge)
        .send()
        .await
        .unwrap();
    assert_eq!(too_big.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body: Value = too_big.json().await.unwrap();
    assert_eq!(body["error"]["code"], "PAYLOAD_TOO_LARGE");

    // The request id is echoed in the header and the envelope.
    let traced = http
        .get(server.at("/api/v1/auth/me"))
        .header(AUTHORIZATION, &auth)
        .header("x-request-id", "trace-123")
        .send()
        .await
        .unwrap();
    assert_eq!(traced.headers()["x-request-id"], "trace-123");
    let body: Value = traced.json().await.unwrap();
    assert_eq!(body["meta"]["request_id"], "trace-123");
    let timestamp = body["meta"]["timestamp"].as_str().unwrap();
    assert!(
        timestamp.ends_with('Z') && timestamp.len() == 24,
        "{timestamp}"
    );
}

#[tokio::test]
async fn pagination_has_four_integer_values_and_validates_input() {
    let server = TestServer::start().await;
    let admin = server.admin();
    for i in 0..23 {
        admin
            .api_keys()
            .create(&agent_key(&format!("k{i}")))
            .await
            .unwrap();
    }
    // 23 created + the bootstrap admin and service keys.
    let page = admin
        .api_keys()
        .list(PageRequest::new(3, 10))
        .await
        .unwrap();
    assert_eq!(
        (page.total, page.page, page.per_page, page.pages()),
        (25, 3, 10, 3)
    );
    assert_eq!(page.items.len(), 5);

    let http = server.http();
    let auth = format!("Bearer {}", server.admin_key);
    let raw: Value = http
        .get(server.at("/api/v1/api-keys?per_page=500"))
        .header(AUTHORIZATION, &auth)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(raw["meta"]["per_page"], 100, "per_page is clamped to 100");
    for key in ["total", "page", "per_page", "pages"] {
        assert!(
            raw["meta"][key].is_u64(),
            "meta.{key} must be an integer: {}",
            raw["meta"]
        );
    }
    let defaults: Value = http
        .get(server.at("/api/v1/api-keys"))
        .header(AUTHORIZATION, &auth)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        (
            defaults["meta"]["page"].as_u64(),
            defaults["meta"]["per_page"].as_u64()
        ),
        (Some(1), Some(20))
    );
    assert_eq!(defaults["data"].as_array().unwrap().len(), 20);

    // Every key seen exactly once across pages, newest first.
    let mut seen = std::collections::HashSet::new();
    for number in 1..=3 {
        for key in admin
            .api_keys()
            .list(PageRequest::new(number, 10))
            .await
            .unwrap()
            .items
        {
            assert!(seen.insert(key.id), "key repeated across pages");
        }
    }
    assert_eq!(seen.len(), 25);

    for bad in ["per_page=0", "page=0", "page=-2", "per_page=abc"] {
        let response = http
            .get(server.at(&format!("/api/v1/api-keys?{bad}")))
            .header(AUTHORIZATION, &auth)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{bad}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], "VALIDATION_ERROR");
    }
}

#[tokio::test]
async fn request_id_replays_the_stored_result_and_conflicts_on_a_different_body() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let mut request = agent_key("replayed");
    request.request_id = Some("create-agent-key-1".into());

    let first = admin.api_keys().create(&request).await.unwrap();
    let second = admin.api_keys().create(&request).await.unwrap();
    assert_eq!(
        first.key.id, second.key.id,
        "a replay returns the stored result"
    );
    assert_eq!(
        first.api_key, second.api_key,
        "including the key, so a lost response can be recovered"
    );
    let listed = admin
        .api_keys()
        .list(PageRequest::new(1, 100))
        .await
        .unwrap();
    assert_eq!(
        listed.items.iter().filter(|k| k.name == "replayed").count(),
        1,
        "the write happened once"
    );

    let mut different = request.clone();
    different.name = Some("something else".into());
    let conflict = admin.api_keys().create(&different).await.unwrap_err();
    assert_eq!(conflict.status(), Some(409));
    assert_eq!(conflict.code(), Some(ErrorCode::Conflict));

    // Keys are scoped per tenant: another tenant may use the same request_id.
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
    let theirs = server
        .client(&other.admin_key.api_key)
        .api_keys()
        .create(&request)
        .await
        .unwrap();
    assert_ne!(theirs.key.id, first.key.id);

    // Tenant creation is idempotent too.
    let tenant = CreateTenant {
        name: "Acme".into(),
        slug: Some("acme".into()),
        request_id: Some("tenant-acme".into()),
    };
    let a = server.service().tenants().create(&tenant).await.unwrap();
    let b = server.service().tenants().create(&tenant).await.unwrap();
    assert_eq!(a.tenant.id, b.tenant.id);
    let dup = CreateTenant {
        request_id: None,
        ..tenant
    };
    assert_eq!(
        server
            .service()
            .tenants()
            .create(&dup)
            .await
            .unwrap_err()
            .status(),
        Some(409),
        "duplicate slug"
    );
}

#[tokio::test]
async fn tenants_are_isolated() {
    let server = TestServer::start().await;
    let created = server
        .service()
        .tenants()
        .create(&CreateTenant {
            name: "Second Tenant".into(),
            slug: None,
            request_id: None,
        })
        .await
        .unwrap();
    assert_eq!(created.tenant.slug, "second-tenant");
    assert_eq!(created.admin_key.key.scope, Scope::Admin);
    assert_eq!(created.admin_key.key.tenant_id, created.tenant.id);

    let second = server.client(&created.admin_key.api_key);
    let me = second.auth().me().await.unwrap();
    assert_eq!(me.tenant_id, created.tenant.id);

    let first_keys = server
        .admin()
        .api_keys()
        .list(PageRequest::default())
        .await
        .unwrap();
    let second_keys = second
        .api_keys()
        .list(PageRequest::default())
        .await
        .unwrap();
    assert_eq!(
        second_keys.total, 1,
        "the second tenant sees only its own key"
    );
    assert!(
        second_keys
            .items
            .iter()
            .all(|k| k.tenant_id == created.tenant.id)
    );
    assert!(
        first_keys
            .items
            .iter()
            .all(|k| k.tenant_id != created.tenant.id)
    );

    // Another tenant's key is not found, and stays valid.
    let victim = first_keys.items[0].id;
    assert_eq!(
        second.api_keys().revoke(victim).await.unwrap_err().status(),
        Some(404)
    );
    assert!(server.admin().auth().me().await.is_ok());

    let tenants = server
        .service()
        .tenants()
        .list(PageRequest::default())
        .await
        .unwrap();
    assert_eq!(tenants.total, 2);
}

#[tokio::test]
async fn the_rate_limiter_answers_429_with_retry_after() {
    let server = TestServer::start_with(|config| config.rate_limit_per_minute = 3).await;
    let http = server.http();
    let auth = format!("Bearer {}", server.admin_key);
    for _ in 0..3 {
        assert_eq!(
            http.get(server.at("/api/v1/auth/me"))
                .header(AUTHORIZATION, &auth)
                .send()
                .await
                .unwrap()
                .status(),
            StatusCode::OK
        );
    }
    let limited = http
        .get(server.at("/api/v1/auth/me"))
        .header(AUTHORIZATION, &auth)
        .send()
        .await
        .unwrap();
    assert_eq!(limited.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = limited.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    let body: Value = limited.json().await.unwrap();
    assert_eq!(body["error"]["code"], "RATE_LIMITED");
    // Budgets are per key: the service key still has its own.
    assert!(server.service().auth().me().await.is_ok());
    // Health checks are exempt.
    assert!(server.anonymous().health().live().await.is_ok());
}

#[tokio::test]
async fn health_and_readiness() {
    let server = TestServer::start().await;
    assert_eq!(
        server.anonymous().health().live().await.unwrap().status,
        "ok"
    );
    let ready = server.anonymous().health().ready().await.unwrap();
    assert_eq!(ready.status, "ready");
    assert_eq!(ready.database, orchestrator_tests::backend());
}

#[tokio::test]
async fn first_start_generates_bootstrap_keys_once() {
    let mut first = TestServer::start_with(|config| {
        config.core.bootstrap_admin_key = None;
        config.core.bootstrap_service_key = None;
    })
    .await;
    let generated: Vec<(Scope, String)> = first
        .handle()
        .generated_keys()
        .iter()
        .map(|k| (k.scope, k.api_key.clone()))
        .collect();
    assert_eq!(
        generated.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
        vec![Scope::Admin, Scope::Service]
    );
    let admin_key = generated[0].1.clone();
    assert!(admin_key.starts_with("orch_admin_") && admin_key.len() == "orch_admin_".len() + 32);
    assert_eq!(
        first.client(&admin_key).auth().me().await.unwrap().scope,
        Scope::Admin
    );
    assert_eq!(
        first
            .client(&generated[1].1)
            .auth()
            .me()
            .await
            .unwrap()
            .scope,
        Scope::Service
    );

    // A second start on the same database generates nothing and the key still works.
    let database_url = first.database_url();
    first.stop().await;
    let mut config = ServerConfig::new("127.0.0.1:0".parse().unwrap(), database_url);
    config.core.max_connections = 5;
    let again = orchestrator_server::start(config).await.unwrap();
    assert!(
        again.generated_keys().is_empty(),
        "keys are printed once, on the first start only"
    );
    let client = orchestrator_client::Client::new(format!("http://{}", again.local_addr()))
        .unwrap()
        .with_api_key(&admin_key);
    assert_eq!(client.auth().me().await.unwrap().scope, Scope::Admin);
    again.shutdown().await;
}

#[tokio::test]
async fn shutdown_lets_in_flight_requests_finish() {
    let mut server = TestServer::start().await;
    let client = server.admin();
    // Keep several requests in flight while shutdown starts.
    let requests: Vec<_> = (0..8)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move {
                client
                    .api_keys()
                    .create(&agent_key(&format!("inflight{i}")))
                    .await
            })
        })
        .collect();
    tokio::task::yield_now().await;
    server.stop().await;
    for request in requests {
        match request.await.unwrap() {
            Ok(created) => assert!(created.api_key.starts_with("orch_agent_")),
            // A request that had not reached the server before it stopped listening.
            Err(orchestrator_client::Error::Transport(_)) => {}
            Err(other) => panic!("in-flight request failed: {other}"),
        }
    }
    assert!(
        server.anonymous().health().live().await.is_err(),
        "the server has stopped"
    );
}

#[tokio::test]
async fn the_retention_sweep_forgets_old_request_ids_and_dead_sessions() {
    let server = TestServer::start().await;
    let mut request = agent_key("swept");
    request.request_id = Some("sweep-me".into());
    let first = server.admin().api_keys().create(&request).await.unwrap();

    // Within retention nothing goes; with a zero retention the record goes.
    let core = server.handle().control_plane();
    let kept = core
        .purge_expired(orchestrator_core::maintenance::IDEMPOTENCY_RETENTION)
        .await
        .unwrap();
    assert_eq!(kept.idempotency_records, 0);
    assert_eq!(
        server
            .admin()
            .api_keys()
            .create(&request)
            .await
            .unwrap()
            .key
            .id,
        first.key.id
    );
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let purged = core.purge_expired(std::time::Duration::ZERO).await.unwrap();
    assert_eq!(purged.idempotency_records, 1);

    // Once forgotten, the same request_id is a new write.
    let again = server.admin().api_keys().create(&request).await.unwrap();
    assert_ne!(again.key.id, first.key.id);
}

#[tokio::test]
async fn replicas_on_one_database_share_keys_tokens_and_revocations() {
    let first = TestServer::start().await;
    let mut config = ServerConfig::new("127.0.0.1:0".parse().unwrap(), first.database_url());
    config.core.max_connections = 5;
    config.rate_limit_per_minute = 0;
    let second = orchestrator_server::start(config).await.unwrap();
    assert!(
        second.generated_keys().is_empty(),
        "a second replica generates no bootstrap keys"
    );
    let on_second = |credential: &str| {
        orchestrator_client::Client::new(format!("http://{}", second.local_addr()))
            .unwrap()
            .with_api_key(credential)
    };

    // A token signed by one replica is accepted by the other.
    let session = first.admin_session().await;
    assert_eq!(
        on_second(&session.token).auth().me().await.unwrap().scope,
        Scope::Admin
    );

    // A key issued on one works on the other; revoked on one, it stops on the
    // other within the credential cache's lifetime (2 s).
    let created = first
        .admin()
        .api_keys()
        .create(&agent_key("shared"))
        .await
        .unwrap();
    let agent = on_second(&created.api_key);
    assert!(agent.auth().me().await.is_ok());
    first
        .admin()
        .api_keys()
        .revoke(created.key.id)
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match agent.auth().me().await {
            Err(e) if e.status() == Some(401) => break,
            Ok(_) if std::time::Instant::now() < deadline => {
                tokio::time::sleep(std::time::Duration::from_millis(200)).await
            }
            other => panic!("revocation did not reach the other replica: {other:?}"),
        }
    }
    second.shutdown().await;
}
