//! `GET /metrics` (Prometheus text), the optional open metrics address,
//! `GET /api/v1/version` and the version in `/healthz`.

use orchestrator_client::api::{ClaimTask, CreateTask, CreateTenant, RegisterAgent, Scope};
use orchestrator_tests::{TestServer, key_request};
use reqwest::StatusCode;
use std::time::{Duration, Instant};

/// The value of the sample whose line starts with `series` (name and
/// labels exactly as the exposition prints them), if present.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

async fn scrape(server: &TestServer, url: &str, key: Option<&str>) -> (StatusCode, String, String) {
    let mut request = server.http().get(url);
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, content_type, response.text().await.unwrap())
}

fn task(title: &str) -> CreateTask {
    CreateTask {
        title: title.into(),
        task_type: "code".into(),
        ..Default::default()
    }
}

#[tokio::test]
async fn metrics_count_requests_claims_tasks_and_streams_per_tenant() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let url = server.at("/metrics");

    // Credentials: none is 401, an agent key 403 (both with the envelope).
    let (status, _, body) = scrape(&server, &url, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(body.contains("\"error\""), "{body}");
    let agent_key = admin
        .api_keys()
        .create(&key_request(Scope::Agent, "metrics-agent"))
        .await
        .unwrap()
        .api_key;
    let (status, _, _) = scrape(&server, &url, Some(&agent_key)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    // Work in this tenant: three tasks, one claimed, and a claim limited to a
    // workflow with no tasks that finds nothing.
    for n in 0..3 {
        admin.tasks().create(&task(&format!("t{n}"))).await.unwrap();
    }
    let agent = admin
        .agents()
        .register(&RegisterAgent {
            name: "metrics-probe".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let claim = ClaimTask {
        agent_id: agent.id,
        ..Default::default()
    };
    assert!(admin.tasks().claim(&claim).await.unwrap().is_some());
    let idle = admin
        .agents()
        .register(&RegisterAgent {
            name: "metrics-idle".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let elsewhere = ClaimTask {
        agent_id: idle.id,
        workflow_id: Some(uuid::Uuid::new_v4()),
        ..Default::default()
    };
    assert!(admin.tasks().claim(&elsewhere).await.unwrap().is_none());

    // Another tenant's task must not show in this tenant admin's scrape.
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
    server
        .client(&other.admin_key.api_key)
        .tasks()
        .create(&task("theirs"))
        .await
        .unwrap();

    let me = admin.auth().me().await.unwrap();
    let (status, content_type, text) = scrape(&server, &url, Some(&server.admin_key)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    let tenant = me.tenant_id;
    assert_eq!(
        sample(
            &text,
            &format!("orch_tasks{{state=\"pending\",tenant_id=\"{tenant}\"}}")
        ),
        Some(2.0),
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            &format!("orch_tasks{{state=\"claimed\",tenant_id=\"{tenant}\"}}")
        ),
        Some(1.0)
    );
    assert_eq!(
        sample(
            &text,
            &format!("orch_queue_depth{{tenant_id=\"{tenant}\"}}")
        ),
        Some(2.0)
    );
    assert!(
        !text.contains(&other.tenant.id.to_string()),
        "another tenant's gauges leaked into a tenant admin's scrape"
    );
    assert_eq!(
        sample(
            &text,
            "orch_http_requests_total{method=\"POST\",route=\"/api/v1/tasks\",status=\"201\"}"
        ),
        Some(4.0),
        "three tasks here and one in the other tenant"
    );
    assert_eq!(
        sample(
            &text,
            "orch_claims_total{outcome=\"claimed\",route=\"/api/v1/tasks/claim\"}"
        ),
        Some(1.0)
    );
    assert_eq!(
        sample(
            &text,
            "orch_claims_total{outcome=\"empty\",route=\"/api/v1/tasks/claim\"}"
        ),
        Some(1.0)
    );
    assert_eq!(
        sample(
            &text,
            "orch_claim_duration_seconds_count{route=\"/api/v1/tasks/claim\"}"
        ),
        Some(2.0)
    );
    assert!(text.contains("orch_db_pool_connections{pool="), "{text}");
    // The write pools: SQLite's one writer; on PostgreSQL the two task
    // writers (store `DEFAULT_PG_WRITERS`) and log ingest's two writers of
    // its own (`PG_APPEND_WRITERS`).
    let pool = |name: &str, state: &str| {
        sample(
            &text,
            &format!("orch_db_pool_connections{{pool=\"{name}\",state=\"{state}\"}}"),
        )
        .unwrap_or(0.0)
    };
    let postgres = orchestrator_tests::backend() == "postgres";
    let write = pool("write", "idle") + pool("write", "in_use");
    assert_eq!(write, if postgres { 2.0 } else { 1.0 }, "{text}");
    let append = pool("append", "idle") + pool("append", "in_use");
    assert_eq!(append, if postgres { 2.0 } else { 0.0 }, "{text}");
    // Every write above was committed in some batch: an API key, three
    // tasks, two agents, a claim, a tenant and its task (nine requests),
    // and never more commits than requests.
    let batches = sample(&text, "orch_db_write_batches_total").expect("write batches");
    let requests =
        sample(&text, "orch_db_write_batch_requests_total").expect("write batch requests");
    assert!(requests >= 9.0, "{requests} requests: {text}");
    assert!(
        (1.0..=requests).contains(&batches),
        "batches {batches}, requests {requests}"
    );
    assert_eq!(sample(&text, "orch_open_streams"), Some(0.0));

    // A service key sees every tenant.
    let (_, _, all) = scrape(&server, &url, Some(&server.service_key)).await;
    assert_eq!(
        sample(
            &all,
            &format!("orch_queue_depth{{tenant_id=\"{}\"}}", other.tenant.id)
        ),
        Some(1.0),
        "{all}"
    );

    // An open event stream counts while it is open.
    let stream = server
        .http()
        .get(server.at("/api/v1/events/stream"))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    wait_for(&server, &url, "orch_open_streams", 1.0).await;
    drop(stream);
    wait_for(&server, &url, "orch_open_streams", 0.0).await;
}

/// Scrapes until `series` reads `value` (15 s at most).
async fn wait_for(server: &TestServer, url: &str, series: &str, value: f64) {
    let started = Instant::now();
    loop {
        let (_, _, text) = scrape(server, url, Some(&server.admin_key)).await;
        if sample(&text, series) == Some(value) {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{series} never read {value}: {text}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn the_metrics_address_needs_no_key_and_serves_nothing_else() {
    let server = TestServer::start_with(|config| {
        config.metrics_listen = Some("127.0.0.1:0".parse().unwrap());
    })
    .await;
    let addr = server
        .handle()
        .metrics_addr()
        .expect("metrics address bound");
    server
        .admin()
        .tasks()
        .create(&task("counted"))
        .await
        .unwrap();
    let (status, _, text) = scrape(&server, &format!("http://{addr}/metrics"), None).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    // Requests on the API address are counted in the same instruments.
    assert_eq!(
        sample(
            &text,
            "orch_http_requests_total{method=\"POST\",route=\"/api/v1/tasks\",status=\"201\"}"
        ),
        Some(1.0),
        "{text}"
    );
    assert!(text.contains("orch_queue_depth{tenant_id="), "{text}");
    // Only /metrics lives there: the API is not reachable without a key.
    let (status, _, body) = scrape(&server, &format!("http://{addr}/api/v1/tasks"), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    // On the API address /metrics still needs a key.
    let (status, _, _) = scrape(&server, &server.at("/metrics"), None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn version_is_public_and_in_healthz() {
    let server = TestServer::start().await;
    let version = server.anonymous().health().version().await.unwrap();
    assert_eq!(version.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(version.api_version, "v1");
    let health = server.anonymous().health().live().await.unwrap();
    assert_eq!(health.version.as_deref(), Some(version.version.as_str()));
}
