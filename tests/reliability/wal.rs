//! SQLite's WAL stays bounded under sustained writes, and is cut back after
//! a burst (the checkpointer's RESTART and `journal_size_limit`).

use orchestrator_tests::{TestServer, backend};
use reqwest::StatusCode;
use serde_json::json;
use std::time::{Duration, Instant};

/// The bound the test holds the WAL file to while writes go on: the 64 MiB
/// RESTART threshold plus what two seconds of writes add here.
const WAL_BOUND: u64 = 160 * 1024 * 1024;
/// `journal_size_limit`: the size the WAL file is cut back to.
const WAL_LIMIT: u64 = 64 * 1024 * 1024;

#[tokio::test]
async fn sustained_writes_keep_the_wal_bounded_and_a_burst_is_cut_back() {
    if backend() != "sqlite" {
        return;
    }
    let server = TestServer::start().await;
    let wal = server.data_dir().join("orch.db-wal");
    let wal_size = || std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    // 256 KiB of payload per entry, 4 entries a request, 4 writers at once:
    // about 100 MiB in all.
    let text = "x".repeat(256 * 1024);
    let body = json!({ "entries": (0..4).map(|i| json!({
        "category": "tool", "operation": format!("bulk.{i}"), "payload": { "text": text }
    })).collect::<Vec<_>>() });
    let mut peak = 0;
    let writers: Vec<_> = (0..4)
        .map(|_| {
            let (http, at, key, body) = (
                server.http(),
                server.at("/api/v1/logs/ingest"),
                server.admin_key.clone(),
                body.clone(),
            );
            tokio::spawn(async move {
                for _ in 0..25 {
                    let status = http
                        .post(&at)
                        .bearer_auth(&key)
                        .json(&body)
                        .send()
                        .await
                        .unwrap()
                        .status();
                    assert_eq!(status, StatusCode::CREATED);
                }
            })
        })
        .collect();
    while writers.iter().any(|w| !w.is_finished()) {
        peak = peak.max(wal_size());
        assert!(peak < WAL_BOUND, "the WAL grew to {peak} bytes");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for w in writers {
        w.await.unwrap();
    }
    let stopped = Instant::now();
    while wal_size() > WAL_LIMIT {
        assert!(
            stopped.elapsed() < Duration::from_secs(5),
            "the WAL stayed at {} bytes after the burst (peak {peak})",
            wal_size()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!("WAL peak {peak} bytes, {} after the burst", wal_size());
}
