//! A full disk (issue 33, defect 6): writes answer 503 with a message that
//! names the disk (not a 500, and not "the database is not reachable"),
//! `/readyz` fails while writes fail for lack of space, and both recover
//! once space is freed.
//!
//! The database lives on a small tmpfs mounted for the test, so only
//! SQLite is exercised: the PostgreSQL server is shared by every test and
//! its disk cannot be filled for one of them. Mounting needs root, which CI
//! has; elsewhere the test says it was skipped.

use orchestrator_server::ServerConfig;
use orchestrator_tests::{TestServer, backend};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Size of the tmpfs the database lives on.
const DISK_MIB: u64 = 48;

/// A tmpfs mounted on a temporary directory, unmounted when dropped (also
/// when the test fails half-way).
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount() -> Option<Self> {
        let dir = tempfile::tempdir().expect("temporary directory");
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={DISK_MIB}m,mode=0700")])
            .arg("tmpfs")
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        mounted.then_some(Self { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// Fills the disk with a file of zeros until the kernel refuses (ENOSPC),
/// then gives back `leave` bytes so the server can still start writing.
fn fill(disk: &Path, leave: u64) -> PathBuf {
    use std::io::Write;
    let filler = disk.join("filler");
    let mut file = std::fs::File::create(&filler).expect("filler file");
    let block = vec![0u8; 256 * 1024];
    while file.write_all(&block).is_ok() {}
    drop(file);
    let len = std::fs::metadata(&filler).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&filler)
        .unwrap()
        .set_len(len.saturating_sub(leave))
        .unwrap();
    filler
}

async fn ingest(server: &TestServer, text: &str) -> (StatusCode, Value) {
    let response = server
        .http()
        .post(server.at("/api/v1/logs/ingest"))
        .bearer_auth(&server.admin_key)
        .json(&json!({ "entries": [{
            "category": "tool", "operation": "disk.fill", "payload": { "text": text }
        }] }))
        .send()
        .await
        .expect("POST /logs/ingest");
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn ready(server: &TestServer) -> StatusCode {
    server
        .http()
        .get(server.at("/readyz"))
        .send()
        .await
        .expect("GET /readyz")
        .status()
}

#[tokio::test]
async fn a_full_disk_answers_503_naming_the_disk_and_recovers_when_space_is_freed() {
    if backend() != "sqlite" {
        return;
    }
    let Some(disk) = SmallDisk::mount() else {
        eprintln!("skipped: mounting a tmpfs needs root");
        return;
    };
    let url = ServerConfig::sqlite_url(disk.path());
    let server = TestServer::start_with(|config| config.core.database_url = url).await;
    assert_eq!(ready(&server).await, StatusCode::OK);

    // Leave 1 MiB, then write 128 KiB rows until a write is refused.
    let filler = fill(disk.path(), 1024 * 1024);
    let text = "x".repeat(128 * 1024);
    let mut refused = None;
    for _ in 0..200 {
        let (status, body) = ingest(&server, &text).await;
        if status != StatusCode::CREATED {
            refused = Some((status, body));
            break;
        }
    }
    let (status, body) = refused.expect("a write was refused once the disk filled");
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("disk is full"), "{body}");
    // `/readyz` fails after a refused write until a write commits. On a disk
    // with a few pages left a commit can still fit between the refusal and
    // the probe: a background job's small one (CI saw `/readyz` 200 there),
    // or even a whole row once the writer has cut the WAL file back to
    // `journal_size_limit` after a checkpoint (CI saw a 201). Either proves
    // space, so the probe may pass: then the disk is filled again until a
    // write is refused, and the probe asked again.
    let mut unready = false;
    for _ in 0..50 {
        if ready(&server).await == StatusCode::SERVICE_UNAVAILABLE {
            unready = true;
            break;
        }
        let (status, body) = ingest(&server, &text).await;
        match status {
            StatusCode::CREATED => {}
            StatusCode::SERVICE_UNAVAILABLE => {
                let message = body["error"]["message"].as_str().unwrap_or_default();
                assert!(message.contains("disk is full"), "{body}");
            }
            other => panic!("a write on a full disk answered {other}: {body}"),
        }
    }
    assert!(unready, "/readyz never failed while writes were refused");
    // Reads still work while writes fail.
    let reads = server
        .http()
        .get(server.at("/api/v1/workflows"))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(reads, StatusCode::OK);

    // Free the space. With nothing written, /readyz comes back once the
    // last refusal is 10 s old: its own 503s while it waits are not new
    // refusals (counted as such, probes every 250 ms kept it unready).
    std::fs::remove_file(&filler).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while ready(&server).await != StatusCode::OK {
        assert!(
            Instant::now() < deadline,
            "/readyz stayed unready after space was freed"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // Writes succeed again.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, body) = ingest(&server, "after").await;
        if status == StatusCode::CREATED && ready(&server).await == StatusCode::OK {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no recovery after space was freed: {status} {body}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
