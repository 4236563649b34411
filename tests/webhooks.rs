//! Outbound webhooks (issue 32): signed deliveries from the outbox, the
//! filters, retries on the schedule, 410, rotation, the private-address
//! policy, secrets at rest, and durability across restarts and replicas.
//! Each receiver verifies signatures with its own implementation of the
//! Standard Webhooks check (`orchestrator_tests::webhook_receiver::verifies`).

use chrono::Utc;
use orchestrator_client::Client;
use orchestrator_client::api::{
    CreateTask, CreateWebhook, DeliveryFilter, DeliveryStatus, EventFilter, UpdateWebhook,
    WebhookDelivery, WebhookWithSecret,
};
use orchestrator_core::clock::{Clock, ManualClock};
use orchestrator_server::ServerConfig;
use orchestrator_tests::TestServer;
use orchestrator_tests::webhook_receiver::{Call, Receiver, verifies};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

async fn webhook(
    client: &Client,
    url: &str,
    types: &[&str],
    workspace: Option<Uuid>,
) -> WebhookWithSecret {
    client
        .webhooks()
        .create(&CreateWebhook {
            url: url.into(),
            event_types: types.iter().map(|t| t.to_string()).collect(),
            workspace_id: workspace,
            description: Some("test receiver".into()),
            enabled: None,
        })
        .await
        .expect("create a webhook")
}

async fn task(client: &Client, title: &str, workspace: Option<Uuid>) -> Uuid {
    client
        .tasks()
        .create(&CreateTask {
            title: title.into(),
            task_type: "docs".into(),
            workspace_id: workspace,
            ..Default::default()
        })
        .await
        .expect("create a task")
        .id
}

async fn log(
    client: &Client,
    webhook: Uuid,
    status: Option<DeliveryStatus>,
) -> (Vec<WebhookDelivery>, u64) {
    let page = client
        .webhooks()
        .deliveries(
            webhook,
            &DeliveryFilter {
                status,
                per_page: Some(100),
                ..Default::default()
            },
        )
        .await
        .expect("the delivery log");
    (page.items, page.total)
}

/// Polls `check` (up to 20 s) until it holds.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..400 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

/// Deliveries carry the event, signed; type and workspace filters deliver
/// only what matches; events before a webhook existed are not sent.
#[tokio::test]
async fn deliveries_are_signed_and_only_matching_events_are_sent() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let (_, workspace) = server.launch_fixtures("hooks", "hooks").await;
    task(&admin, "before any webhook", Some(workspace)).await;
    let receiver = Receiver::start(&[], 200).await;
    let exact = webhook(&admin, &receiver.url, &["task.created"], None).await;
    let scoped = webhook(&admin, &receiver.url, &["task.*"], Some(workspace)).await;
    let other = webhook(&admin, &receiver.url, &["workflow.*"], None).await;
    let outside = task(&admin, "outside the workspace", None).await;
    let inside = task(&admin, "inside the workspace", Some(workspace)).await;
    // exact: both task.created; scoped: the one in the workspace.
    let calls = receiver.wait_for(3).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let calls = if receiver.calls().len() > calls.len() {
        receiver.calls()
    } else {
        calls
    };
    assert_eq!(calls.len(), 3, "{calls:?}");
    let mut by_secret: HashMap<&str, Vec<serde_json::Value>> = HashMap::new();
    for call in &calls {
        let secret = [&exact, &scoped, &other]
            .into_iter()
            .find(|w| verifies(call, &w.secret))
            .map(|w| w.secret.as_str())
            .expect("every post verifies with one webhook's secret");
        assert!(call.timestamp.parse::<i64>().unwrap() > 1_600_000_000);
        by_secret.entry(secret).or_default().push(call.json());
    }
    let exact_bodies = &by_secret[exact.secret.as_str()];
    assert_eq!(exact_bodies.len(), 2);
    for body in exact_bodies {
        assert_eq!(body["type"], "task.created");
        assert!(body["id"].is_i64() && body["created_at"].is_string() && body["data"].is_object());
    }
    let scoped_bodies = &by_secret[scoped.secret.as_str()];
    assert_eq!(scoped_bodies.len(), 1);
    assert!(scoped_bodies[0].to_string().contains(&inside.to_string()));
    assert!(!scoped_bodies[0].to_string().contains(&outside.to_string()));
    assert!(!by_secret.contains_key(other.secret.as_str()));
    // The log: one delivered attempt each.
    let (entries, total) = log(&admin, exact.webhook.id, None).await;
    assert_eq!(total, 2);
    assert!(entries.iter().all(|e| e.status == DeliveryStatus::Delivered
        && e.attempt == 1
        && e.response_status == Some(200)
        && e.event_type == "task.created"));
    let ids: Vec<String> = entries.iter().map(|e| e.id.to_string()).collect();
    assert!(calls.iter().filter(|c| ids.contains(&c.id)).count() == 2);
    // Counted in /metrics.
    let delivered = server
        .metric("orch_webhook_delivery_attempts_total{outcome=\"delivered\"}")
        .await;
    assert_eq!(delivered, Some(3.0));
    assert_eq!(
        server
            .metric("orch_webhook_delivery_duration_seconds_count")
            .await,
        Some(3.0)
    );
}

/// A receiver answering 500 gets the same `webhook-id` again after the
/// backoff (the clock moved by hand), and the log shows every attempt.
#[tokio::test]
async fn a_500_is_retried_with_the_same_id_and_every_attempt_is_logged() {
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let server = TestServer::start_with({
        let clock = clock.clone();
        move |c| c.core.clock = clock
    })
    .await;
    let admin = server.admin();
    let receiver = Receiver::start(&[500, 503], 200).await;
    let hook = webhook(&admin, &receiver.url, &["task.created"], None).await;
    task(&admin, "retried", None).await;
    receiver.wait_for(1).await;
    // The first attempt stays `pending` until its outcome is recorded, so
    // wait for the second entry itself, not for some pending one.
    eventually("the second attempt scheduled", || async {
        log(&admin, hook.webhook.id, None).await.1 == 2
    })
    .await;
    let (entries, _) = log(&admin, hook.webhook.id, None).await;
    assert_eq!(entries.len(), 2);
    assert_eq!(
        (entries[0].attempt, entries[0].status),
        (2, DeliveryStatus::Pending)
    );
    assert_eq!(
        (entries[1].attempt, entries[1].status),
        (1, DeliveryStatus::Failed)
    );
    assert_eq!(entries[1].response_status, Some(500));
    let due = entries[0].next_attempt_at.unwrap().as_datetime();
    let wait = due - clock.now();
    assert!(
        wait >= chrono::Duration::seconds(4) && wait <= chrono::Duration::seconds(6),
        "{wait}"
    );
    // Not before its time.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.calls().len(), 1);
    clock.advance(chrono::Duration::seconds(6));
    receiver.wait_for(2).await;
    eventually("the third attempt scheduled", || async {
        log(&admin, hook.webhook.id, None).await.1 == 3
    })
    .await;
    let (entries, _) = log(&admin, hook.webhook.id, None).await;
    let wait = entries[0].next_attempt_at.unwrap().as_datetime() - clock.now();
    assert!(
        wait >= chrono::Duration::seconds(29) && wait <= chrono::Duration::seconds(31),
        "{wait}"
    );
    clock.advance(chrono::Duration::seconds(31));
    let calls = receiver.wait_for(3).await;
    eventually("the delivery delivered", || async {
        log(&admin, hook.webhook.id, Some(DeliveryStatus::Delivered))
            .await
            .1
            == 1
    })
    .await;
    assert!(
        calls
            .iter()
            .all(|c| c.id == calls[0].id && verifies(c, &hook.secret))
    );
    assert_eq!(
        calls.iter().map(|c| c.answered).collect::<Vec<_>>(),
        [500, 503, 200]
    );
    let (entries, _) = log(&admin, hook.webhook.id, None).await;
    assert_eq!(
        entries
            .iter()
            .map(|e| (e.attempt, e.status, e.response_status))
            .collect::<Vec<_>>(),
        [
            (3, DeliveryStatus::Delivered, Some(200)),
            (2, DeliveryStatus::Failed, Some(503)),
            (1, DeliveryStatus::Failed, Some(500)),
        ]
    );
    assert!(entries.iter().all(|e| e.id.to_string() == calls[0].id));
    // Redeliver: a fourth attempt with the same id.
    let again = admin
        .webhooks()
        .redeliver(hook.webhook.id, entries[0].id)
        .await
        .unwrap();
    assert_eq!((again.attempt, again.status), (4, DeliveryStatus::Pending));
    let twice = admin
        .webhooks()
        .redeliver(hook.webhook.id, entries[0].id)
        .await;
    assert_eq!(twice.unwrap_err().status(), Some(409));
    let calls = receiver.wait_for(4).await;
    assert_eq!(calls[3].id, calls[0].id);
}

/// A `410` disables the webhook, with a `webhook.disabled` event.
#[tokio::test]
async fn a_410_disables_the_webhook() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let receiver = Receiver::start(&[410], 200).await;
    let hook = webhook(&admin, &receiver.url, &["task.*"], None).await;
    let attempt = admin.webhooks().test(hook.webhook.id).await.unwrap();
    assert_eq!(attempt.status, DeliveryStatus::Failed);
    assert_eq!(attempt.response_status, Some(410));
    assert_eq!(attempt.event_type, "webhook.test");
    let call = &receiver.calls()[0];
    assert!(verifies(call, &hook.secret));
    assert_eq!(call.json()["type"], "webhook.test");
    assert!(!admin.webhooks().get(hook.webhook.id).await.unwrap().enabled);
    let events = admin
        .events()
        .list(&EventFilter {
            event_type: Some("webhook.disabled".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(events.items.len(), 1);
    assert_eq!(events.items[0].entity_id, hook.webhook.id);
    // Disabled: nothing more is sent, and no retry was scheduled.
    task(&admin, "after 410", None).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(receiver.calls().len(), 1);
    assert_eq!(log(&admin, hook.webhook.id, None).await.1, 1);
    // Enabled again, it delivers.
    admin
        .webhooks()
        .update(
            hook.webhook.id,
            &UpdateWebhook {
                enabled: Some(true),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    task(&admin, "enabled again", None).await;
    receiver.wait_for(2).await;
}

/// After a rotation every delivery is signed with both secrets (24 h), and
/// the secret is never read back.
#[tokio::test]
async fn a_rotation_signs_with_both_secrets_and_the_secret_is_never_read_back() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let receiver = Receiver::start(&[], 200).await;
    let hook = webhook(&admin, &receiver.url, &["task.created"], None).await;
    assert!(hook.secret.starts_with("whsec_"));
    let rotated = admin
        .webhooks()
        .rotate_secret(hook.webhook.id)
        .await
        .unwrap();
    assert_ne!(rotated.secret, hook.secret);
    assert!(rotated.webhook.previous_secret_expires_at.is_some());
    let attempt = admin.webhooks().test(hook.webhook.id).await.unwrap();
    assert_eq!(attempt.status, DeliveryStatus::Delivered);
    let call = &receiver.calls()[0];
    assert_eq!(call.signature.split(' ').count(), 2);
    assert!(
        verifies(call, &hook.secret),
        "the old secret still verifies"
    );
    assert!(verifies(call, &rotated.secret), "the new secret verifies");
    // Never in a read.
    let http = server.http();
    for path in [
        "/api/v1/webhooks".to_string(),
        format!("/api/v1/webhooks/{}", hook.webhook.id),
        format!("/api/v1/webhooks/{}/deliveries", hook.webhook.id),
        "/api/v1/events?limit=500".to_string(),
    ] {
        let text = http
            .get(server.at(&path))
            .bearer_auth(&server.admin_key)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        for secret in [&hook.secret, &rotated.secret] {
            let key = secret.trim_start_matches("whsec_");
            assert!(!text.contains(key), "{path} shows a secret");
        }
        assert!(!text.contains("\"secret\""), "{path}: {text}");
    }
    // Nor in the database in clear.
    let stored = stored_secrets(&server).await;
    assert_eq!(stored.len(), 2);
    for sealed in stored {
        for secret in [&hook.secret, &rotated.secret] {
            assert!(!sealed.contains(secret.trim_start_matches("whsec_")));
        }
    }
}

/// The sealed secrets as stored (current and previous).
async fn stored_secrets(server: &TestServer) -> Vec<String> {
    use sqlx::Connection;
    let url = server.database_url();
    let sql = "SELECT secret, previous_secret FROM webhooks";
    let rows: Vec<(String, Option<String>)> = if url.starts_with("postgres") {
        let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
        sqlx::query_as(sql).fetch_all(&mut conn).await.unwrap()
    } else {
        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
        sqlx::query_as(sql).fetch_all(&mut conn).await.unwrap()
    };
    rows.into_iter()
        .flat_map(|(a, b)| std::iter::once(a).chain(b))
        .collect()
}

/// Without `--allow-private-network` a loopback URL is refused at create;
/// a webhook stored while it was allowed is refused at send.
#[tokio::test]
async fn private_addresses_are_refused_without_the_flag() {
    let mut allowed = TestServer::start().await;
    let receiver = Receiver::start(&[], 200).await;
    let hook = webhook(&allowed.admin(), &receiver.url, &["task.created"], None).await;
    let url = allowed.database_url();
    let key = allowed.admin_key.clone();
    allowed.stop().await;
    let mut config = ServerConfig::new("127.0.0.1:0".parse().unwrap(), url);
    config.core.max_connections = 5;
    config.rate_limit_per_minute = 0;
    config.core.allow_private_network = false;
    let strict = orchestrator_server::start(config).await.unwrap();
    let admin = Client::new(format!("http://{}", strict.local_addr()))
        .unwrap()
        .with_api_key(&key);
    for url in [
        "http://127.0.0.1:9/hook",
        "http://10.1.2.3/hook",
        "http://[::1]/x",
        "http://169.254.169.254/",
    ] {
        let error = admin
            .webhooks()
            .create(&CreateWebhook {
                url: url.into(),
                event_types: vec!["task.*".into()],
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(error.status(), Some(400), "{url}");
        assert_eq!(
            error.code(),
            Some(orchestrator_client::api::ErrorCode::ValidationError)
        );
    }
    assert_eq!(
        admin
            .webhooks()
            .list(Default::default())
            .await
            .unwrap()
            .total,
        1
    );
    let attempt = admin.webhooks().test(hook.webhook.id).await.unwrap();
    assert_eq!(attempt.status, DeliveryStatus::Failed);
    assert!(attempt.last_error.unwrap().contains("private"));
    assert!(receiver.calls().is_empty());
    strict.shutdown().await;
}

/// Bad bodies: 422 for the wrong shape, 400 for a rule, 404 for another
/// tenant's (or no) webhook.
#[tokio::test]
async fn bad_webhook_bodies_are_refused() {
    let server = TestServer::start().await;
    let http = server.http();
    let post = |body: serde_json::Value| {
        http.post(server.at("/api/v1/webhooks"))
            .bearer_auth(&server.admin_key)
            .json(&body)
            .send()
    };
    let answer = post(serde_json::json!({"url": "http://127.0.0.1/x", "event_types": "task.*"}))
        .await
        .unwrap();
    assert_eq!(answer.status(), 422);
    let answer = post(
        serde_json::json!({"url": "http://127.0.0.1/x", "event_types": ["task.*"], "extra": 1}),
    )
    .await
    .unwrap();
    assert_eq!(answer.status(), 422);
    for body in [
        serde_json::json!({"url": "http://127.0.0.1/x", "event_types": []}),
        serde_json::json!({"url": "ftp://127.0.0.1/x", "event_types": ["task.*"]}),
        serde_json::json!({"url": "http://127.0.0.1/x", "event_types": ["task*"]}),
        serde_json::json!({"url": "http://127.0.0.1/x", "event_types": ["task.*"], "workspace_id": Uuid::new_v4()}),
    ] {
        assert_eq!(post(body.clone()).await.unwrap().status(), 400, "{body}");
    }
    let error = server
        .admin()
        .webhooks()
        .get(Uuid::new_v4())
        .await
        .unwrap_err();
    assert_eq!(error.status(), Some(404));
    assert_eq!(
        server
            .admin()
            .webhooks()
            .list(Default::default())
            .await
            .unwrap()
            .total,
        0
    );
}

/// A server stopped with deliveries due: the next start delivers each
/// once; on PostgreSQL two replicas sharing the database never make the
/// same attempt twice.
#[tokio::test]
async fn due_deliveries_survive_a_restart_and_replicas_send_each_once() {
    const EVENTS: usize = 200;
    // The first server's clock stands still: no retry falls due on it.
    let t0 = Utc::now();
    let mut first =
        TestServer::start_with(move |c| c.core.clock = Arc::new(ManualClock::new(t0))).await;
    let admin = first.admin();
    let receiver = Receiver::start(&[], 503).await;
    let hook = webhook(&admin, &receiver.url, &["task.created"], None).await;
    for i in 0..EVENTS {
        task(&admin, &format!("durable {i}"), None).await;
    }
    receiver.wait_for(EVENTS).await;
    // Each first attempt is `pending` until its outcome is recorded: wait
    // for the failed first attempts and the pending second ones.
    eventually("every second attempt scheduled", || async {
        log(&admin, hook.webhook.id, None).await.1 == 2 * EVENTS as u64
    })
    .await;
    let url = first.database_url();
    let key = first.admin_key.clone();
    first.stop().await;
    receiver.answer_all(200);
    let before = receiver.calls().len();
    // Restarted (two replicas on PostgreSQL), with clocks past the backoff.
    let replicas = if orchestrator_tests::backend() == "postgres" {
        2
    } else {
        1
    };
    let mut handles = Vec::new();
    for _ in 0..replicas {
        let mut config = ServerConfig::new("127.0.0.1:0".parse().unwrap(), url.clone());
        config.core.max_connections = 5;
        config.rate_limit_per_minute = 0;
        config.core.allow_private_network = true;
        config.core.clock = Arc::new(ManualClock::new(t0 + chrono::Duration::seconds(10)));
        handles.push(orchestrator_server::start(config).await.unwrap());
    }
    let admin = Client::new(format!("http://{}", handles[0].local_addr()))
        .unwrap()
        .with_api_key(&key);
    receiver.wait_for(before + EVENTS).await;
    eventually("every delivery delivered", || async {
        log(&admin, hook.webhook.id, Some(DeliveryStatus::Delivered))
            .await
            .1
            == EVENTS as u64
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let second: Vec<_> = receiver.calls().into_iter().skip(before).collect();
    assert_eq!(second.len(), EVENTS, "no attempt was made twice");
    let mut ids: Vec<&str> = second.iter().map(|c| c.id.as_str()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), EVENTS);
    assert!(second.iter().all(|c| verifies(c, &hook.secret)));
    assert_eq!(
        log(&admin, hook.webhook.id, Some(DeliveryStatus::Pending))
            .await
            .1,
        0
    );
    for handle in handles {
        handle.shutdown().await;
    }
}

#[test]
fn the_verifier_matches_the_specification_example() {
    // The example of the Standard Webhooks specification's test vectors.
    let call = Call {
        id: "msg_p5jXN8AQM9LWM0D4loKWxJek".into(),
        timestamp: "1614265330".into(),
        signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=".into(),
        body: br#"{"test": 2432232314}"#.to_vec(),
        answered: 200,
    };
    assert!(verifies(&call, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"));
    assert!(!verifies(&call, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSx"));
}
