//! Live streams: the log stream (SSE) delivers rows ingested after it
//! connected, resumes after a reconnect, sends heartbeats and ends on
//! shutdown; the entity-event stream replays then follows; and with
//! PostgreSQL a stream on one replica sees rows written through another.

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use orchestrator_client::api::{EventFilter, LogCategory, LogFilter, LogRow, NewLogEntry, Scope};
use orchestrator_client::{LogStreamItem, StreamFrom};
use orchestrator_server::ServerConfig;
use orchestrator_tests::{TestServer, key_request};
use std::time::Duration;

/// Generous: streams must not make tests flaky.
const WAIT: Duration = Duration::from_secs(10);

fn entry(operation: &str) -> NewLogEntry {
    NewLogEntry::new(LogCategory::Tool, operation)
}

/// The next log row of `stream` (skipping heartbeats), within [`WAIT`].
async fn next_row(
    stream: &mut BoxStream<'static, orchestrator_client::Result<LogStreamItem>>,
) -> LogRow {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let item = tokio::time::timeout_at(deadline, stream.next())
            .await
            .expect("a row within 10 s")
            .expect("stream open")
            .expect("no stream error");
        if let LogStreamItem::Log(row) = item {
            return *row;
        }
    }
}

type EventStream = BoxStream<'static, orchestrator_client::Result<orchestrator_client::api::Event>>;

async fn next(stream: &mut EventStream) -> orchestrator_client::api::Event {
    tokio::time::timeout(WAIT, stream.next())
        .await
        .expect("an event within 10 s")
        .unwrap()
        .unwrap()
}

/// Reads raw SSE text from `response` until it contains `needle`.
async fn read_until(response: &mut reqwest::Response, needle: &str) -> String {
    let mut text = String::new();
    let deadline = tokio::time::Instant::now() + WAIT;
    while !text.contains(needle) {
        let chunk = tokio::time::timeout_at(deadline, response.chunk())
            .await
            .unwrap_or_else(|_| panic!("`{needle}` within 10 s; got {text:?}"))
            .unwrap()
            .expect("stream still open");
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    text
}

#[tokio::test]
async fn log_stream_delivers_new_rows_and_resumes_after_a_reconnect() {
    let server = TestServer::start().await;
    let admin = server.admin();
    admin
        .logs()
        .ingest(vec![entry("before.connect")])
        .await
        .unwrap();

    // A stream with no resume point starts at the newest row.
    let filter = LogFilter {
        category: Some(LogCategory::Tool),
        ..Default::default()
    };
    let mut stream = admin.logs().stream(&filter, StreamFrom::Now);
    // Streams are lazy: poll briefly so the connection opens, then write.
    let nothing_yet = tokio::time::timeout(Duration::from_millis(500), stream.next()).await;
    assert!(nothing_yet.is_err(), "no row before the write");
    admin
        .logs()
        .ingest(vec![
            entry("live.1"),
            NewLogEntry::new(LogCategory::Llm, "filtered.out"),
            entry("live.2"),
        ])
        .await
        .unwrap();
    let first = next_row(&mut stream).await;
    assert_eq!(first.operation, "live.1");
    assert_eq!(next_row(&mut stream).await.operation, "live.2");
    drop(stream);

    // Rows written while disconnected arrive after resuming from the last id.
    admin
        .logs()
        .ingest(vec![entry("offline.1"), entry("offline.2")])
        .await
        .unwrap();
    let mut resumed = admin
        .logs()
        .stream(&filter, StreamFrom::AfterId(first.id.clone()));
    assert_eq!(next_row(&mut resumed).await.operation, "live.2");
    assert_eq!(next_row(&mut resumed).await.operation, "offline.1");
    assert_eq!(next_row(&mut resumed).await.operation, "offline.2");
    admin
        .logs()
        .ingest(vec![entry("after.resume")])
        .await
        .unwrap();
    assert_eq!(next_row(&mut resumed).await.operation, "after.resume");

    // `since` replays from that time.
    let mut replay = admin.logs().stream(
        &LogFilter {
            since: Some("1h".into()),
            ..filter.clone()
        },
        StreamFrom::Now,
    );
    assert_eq!(next_row(&mut replay).await.operation, "before.connect");

    // Raw frames: content type, `id:` and `event: log` with the full row.
    let mut response = server
        .http()
        .get(server.at("/api/v1/logs/stream"))
        .bearer_auth(&server.admin_key)
        .header("last-event-id", &first.id)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let text = read_until(&mut response, "after.resume").await;
    assert!(text.contains("event: log\n"), "{text}");
    assert!(text.contains("\"payload\":{}"), "full rows: {text}");
    assert!(!text.contains("\"operation\":\"live.1\""), "{text}");
}

#[tokio::test]
async fn idle_streams_send_heartbeats_and_end_on_shutdown() {
    let mut server = TestServer::start_with(|config| {
        config.core.stream_heartbeat = Duration::from_millis(200);
    })
    .await;
    let mut response = server
        .http()
        .get(server.at("/api/v1/logs/stream"))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap();
    let text = read_until(&mut response, "event: heartbeat").await;
    let data = text
        .lines()
        .skip_while(|l| *l != "event: heartbeat")
        .nth(1)
        .unwrap();
    let ts: serde_json::Value = serde_json::from_str(data.strip_prefix("data: ").unwrap()).unwrap();
    assert!(ts["ts"].as_str().unwrap().ends_with('Z'));

    let mut events = server
        .http()
        .get(server.at("/api/v1/events/stream"))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap();
    read_until(&mut events, ": heartbeat").await;

    // Streams are exempt from the rate limit, need agent scope.
    let anonymous = server
        .http()
        .get(server.at("/api/v1/logs/stream"))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);

    // Shutdown does not wait for open streams.
    tokio::time::timeout(WAIT, server.stop())
        .await
        .expect("shutdown with open streams finishes");
    let rest = tokio::time::timeout(WAIT, async {
        while let Ok(Some(_)) = response.chunk().await {}
    })
    .await;
    assert!(rest.is_ok(), "the stream ended with the server");
}

#[tokio::test]
async fn event_list_and_stream_replay_then_follow() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let first = admin
        .api_keys()
        .create(&key_request(Scope::Agent, "one"))
        .await
        .unwrap();
    admin
        .api_keys()
        .create(&key_request(Scope::Agent, "two"))
        .await
        .unwrap();

    let page = admin
        .events()
        .list(&EventFilter {
            event_type: Some("api_key.created".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(page.items.len(), 2);
    assert!(!page.has_more);
    assert_eq!(page.items[0].entity_id, first.key.id);
    let after_first = page.items[0].id;
    let limited = admin
        .events()
        .list(&EventFilter {
            limit: Some(1),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(limited.items.len(), 1);
    assert!(limited.has_more);
    let by_entity = admin
        .events()
        .list(&EventFilter {
            entity_type: Some("api_key".into()),
            entity_id: Some(first.key.id),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(by_entity.items.len(), 1);
    let response = server
        .http()
        .get(server.at("/api/v1/events?limit=501"))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);

    // Replay after the first, then live.
    let mut stream = admin.events().stream(&EventFilter {
        after: Some(after_first),
        event_type: Some("api_key.created".into()),
        ..Default::default()
    });
    assert_eq!(next(&mut stream).await.data["name"], "two");
    let third = admin
        .api_keys()
        .create(&key_request(Scope::Agent, "three"))
        .await
        .unwrap();
    let live = next(&mut stream).await;
    assert_eq!(live.entity_id, third.key.id);
}

#[tokio::test]
async fn a_stream_on_one_replica_sees_rows_written_through_another() {
    if orchestrator_tests::backend() != "postgres" {
        eprintln!("skipped: two replicas need PostgreSQL (set ORCH_TEST_DATABASE_URL)");
        return;
    }
    let first = TestServer::start().await;
    let mut config = ServerConfig::new("127.0.0.1:0".parse().unwrap(), first.database_url());
    config.core.max_connections = 5;
    config.rate_limit_per_minute = 0;
    let second = orchestrator_server::start(config).await.unwrap();
    let on_second = orchestrator_client::Client::new(format!("http://{}", second.local_addr()))
        .unwrap()
        .with_api_key(&first.admin_key);

    let mut logs = first
        .admin()
        .logs()
        .stream(&LogFilter::default(), StreamFrom::Now);
    let mut events = first.admin().events().stream(&EventFilter {
        event_type: Some("api_key.created".into()),
        ..Default::default()
    });
    // Streams are lazy: poll briefly so the connections open, then write.
    let _ = tokio::time::timeout(Duration::from_millis(500), logs.next()).await;
    let _ = tokio::time::timeout(Duration::from_millis(500), events.next()).await;
    on_second
        .logs()
        .ingest(vec![entry("written.on.second")])
        .await
        .unwrap();
    let row = next_row(&mut logs).await;
    assert_eq!(row.operation, "written.on.second");
    let created = on_second
        .api_keys()
        .create(&key_request(Scope::Agent, "remote"))
        .await
        .unwrap();
    let event = tokio::time::timeout(WAIT, events.next())
        .await
        .expect("an event within 10 s")
        .unwrap()
        .unwrap();
    assert_eq!(event.entity_id, created.key.id);
    second.shutdown().await;
}

#[tokio::test]
async fn a_client_that_stops_reading_is_told_so_and_disconnected_without_slowing_ingest() {
    let server = TestServer::start_with(|config| {
        config.core.stream_slow_consumer_timeout = Duration::from_millis(500);
    })
    .await;
    let admin = server.admin();
    let mut response = server
        .http()
        .get(server.at("/api/v1/logs/stream"))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap();
    // Write far more than the stream buffers and the sockets hold while the
    // client reads nothing; ingest keeps going at its own pace.
    let payload = serde_json::json!({ "text": "x".repeat(100_000) });
    for _ in 0..4 {
        let entries = (0..100)
            .map(|_| {
                let mut e = entry("bulk");
                e.payload = Some(payload.clone());
                e
            })
            .collect();
        assert_eq!(admin.logs().ingest(entries).await.unwrap().inserted, 100);
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    // Now read everything: the stream ends with the slow_consumer error.
    let mut text = Vec::new();
    let read_all = tokio::time::timeout(WAIT, async {
        while let Some(chunk) = response.chunk().await.unwrap() {
            text.extend_from_slice(&chunk);
        }
    })
    .await;
    assert!(read_all.is_ok(), "the server closed the stream");
    let text = String::from_utf8_lossy(&text);
    assert!(
        text.trim_end()
            .ends_with("event: error\ndata: {\"error\":\"slow_consumer\"}"),
        "ends with the slow_consumer frame: …{}",
        &text[text.len().saturating_sub(300)..]
    );
    assert!(text.matches("event: log").count() < 400, "it was cut off");
}

/// Log ingest has writers of its own on PostgreSQL (store `begin_append`):
/// its batches commit side by side, out of id order, beside the task
/// writes. 16 clients ingest 30 batches of 100 rows each while 40 tasks are
/// created; every request succeeds, and a log stream opened before delivers
/// every ingested row exactly once (its cursor must not step past a row
/// whose batch commits late).
#[tokio::test]
async fn ingest_batches_committing_side_by_side_reach_a_stream_exactly_once() {
    const CLIENTS: usize = 16;
    const BATCHES: usize = 30;
    const ROWS: usize = 100;
    let server = TestServer::start().await;
    let admin = server.admin();
    let filter = LogFilter {
        category: Some(LogCategory::Tool),
        ..Default::default()
    };
    let mut stream = admin.logs().stream(&filter, StreamFrom::Now);
    let nothing_yet = tokio::time::timeout(Duration::from_millis(300), stream.next()).await;
    assert!(nothing_yet.is_err(), "no row before the writes");

    // Read while the rows are written, as a follower does (a client that
    // takes no frame for the slow-consumer timeout is cut off: the test
    // below). Batches of 100 rows keep each batch's transaction open long
    // enough for another to commit past it: with the stream's `txid`
    // horizon removed, this test failed 3 runs in 4 on PostgreSQL.
    let expected = CLIENTS * BATCHES * ROWS;
    let reader = tokio::spawn(async move {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..expected {
            let row = next_row(&mut stream).await;
            assert!(
                seen.insert(row.operation.clone()),
                "{} twice",
                row.operation
            );
        }
        (seen, stream)
    });
    let mut storm = Vec::new();
    for c in 0..CLIENTS {
        let client = admin.clone();
        storm.push(tokio::spawn(async move {
            for b in 0..BATCHES {
                let entries: Vec<NewLogEntry> = (0..ROWS)
                    .map(|r| entry(&format!("c{c}.b{b}.r{r}")))
                    .collect();
                let ingested = client.logs().ingest(entries).await.expect("ingest");
                assert_eq!(ingested.inserted, ROWS as u64);
            }
        }));
    }
    for t in 0..40 {
        let client = admin.clone();
        storm.push(tokio::spawn(async move {
            client
                .tasks()
                .create(&orchestrator_client::api::CreateTask {
                    title: format!("t{t}"),
                    task_type: "code".into(),
                    ..Default::default()
                })
                .await
                .expect("a task write beside the ingest");
        }));
    }
    for handle in storm {
        handle.await.unwrap();
    }

    let (seen, mut stream) = reader.await.unwrap();
    for c in 0..CLIENTS {
        for b in 0..BATCHES {
            for r in 0..ROWS {
                assert!(seen.contains(&format!("c{c}.b{b}.r{r}")), "c{c}.b{b}.r{r}");
            }
        }
    }
    let more = tokio::time::timeout(Duration::from_millis(500), next_row(&mut stream)).await;
    assert!(more.is_err(), "no row after the last: {:?}", more.ok());
}
