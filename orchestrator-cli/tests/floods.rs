//! Connection floods against the real binary (issue 33, defect 4): `orch
//! serve` started with a soft open-file limit of 1,024 and a hard one of
//! 20,000 (`prlimit --nofile=1024:20000`) raises the soft limit to the hard
//! one at start, holds 1,100 idle connections, and still answers `/healthz`
//! within a second. Before, the 1,025th descriptor failed to open and every
//! new client waited in the listen queue until it timed out.

mod common;

use orchestrator_tests::TestServer;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::process::Command;

const IDLE: usize = 1100;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET /healthz` on a new connection; the time it took to answer 200.
async fn healthz(addr: &str) -> Duration {
    let started = Instant::now();
    let answer = tokio::time::timeout(Duration::from_secs(5), async {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nhost: orch\r\nconnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.unwrap();
        String::from_utf8_lossy(&answer).into_owned()
    })
    .await
    .expect("/healthz answers within 5 s");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    started.elapsed()
}

#[tokio::test]
async fn eleven_hundred_idle_connections_under_a_soft_limit_of_1024_leave_healthz_answering() {
    if std::process::Command::new("prlimit")
        .arg("--version")
        .output()
        .is_err()
    {
        panic!("this test needs `prlimit` (util-linux) on PATH");
    }
    // The harness creates (and later drops) the database; the child serves it.
    let mut server = TestServer::start().await;
    let database_url = server.database_url();
    let admin_key = server.admin_key.clone();
    server.stop().await;
    let addr = format!("127.0.0.1:{}", free_port());
    // The idle sockets must outlive the test's checks on a slow machine: a
    // long header-read timeout keeps them open (the default closes them
    // after 10 s, which `tests/reliability/floods.rs` covers).
    let child = Command::new("prlimit")
        .arg("--nofile=1024:20000")
        .arg(common::ORCH)
        .args(["serve", "--listen", &addr, "--database-url", &database_url])
        .args(["--rate-limit-per-minute", "0"])
        .args(["--header-read-timeout-seconds", "300"])
        .env("ORCH_BOOTSTRAP_ADMIN_KEY", &admin_key)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("orch serve starts under prlimit");
    let http = server.http();
    let mut ready = false;
    for _ in 0..300 {
        let answer = http.get(format!("http://{addr}/readyz")).send().await;
        if answer.is_ok_and(|r| r.status() == 200) {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(ready, "orch serve did not become ready");

    // prlimit execs orch: the child's limits are the server's.
    #[cfg(target_os = "linux")]
    {
        let pid = child.id().expect("the child runs");
        let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
        let line = limits
            .lines()
            .find(|l| l.starts_with("Max open files"))
            .expect("a Max open files line");
        let soft: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(soft[3], "20000", "the soft limit was raised: {line}");
    }

    let mut idle = Vec::with_capacity(IDLE);
    for _ in 0..IDLE {
        idle.push(TcpStream::connect(&addr).await.unwrap());
    }
    // The server holds every one of them (its own count)...
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let text = tokio::time::timeout(
            Duration::from_secs(5),
            http.get(format!("http://{addr}/metrics"))
                .bearer_auth(&admin_key)
                .send(),
        )
        .await
        .expect("/metrics answers within 5 s")
        .unwrap()
        .text()
        .await
        .unwrap();
        let open: f64 = text
            .lines()
            .find_map(|l| l.strip_prefix("orch_open_connections ")?.parse().ok())
            .expect("orch_open_connections");
        if open >= IDLE as f64 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the server holds {open} connections"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // ...and a new client is answered at once (the fastest of three, each
    // within 5 s, so one stall of a loaded machine does not decide).
    let mut times = Vec::new();
    for _ in 0..3 {
        times.push(healthz(&addr).await);
    }
    let fastest = times.iter().min().copied().unwrap();
    eprintln!("/healthz with {IDLE} idle connections open: {times:?}");
    assert!(
        fastest < Duration::from_secs(1),
        "/healthz took {times:?} with {IDLE} idle connections open"
    );
    drop(idle);
    drop(child);
}

/// The resident memory of process `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// Opens an event stream on a new connection; the connection once the
/// `200` head has arrived.
async fn open_stream(addr: &str, key: &str) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(
            format!(
                "GET /api/v1/events/stream HTTP/1.1\r\nhost: orch\r\nauthorization: Bearer {key}\r\n\r\n"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !String::from_utf8_lossy(&head).contains("\r\n\r\n") {
        let n = stream.read(&mut buf).await.unwrap();
        assert!(n > 0, "closed: {}", String::from_utf8_lossy(&head));
        head.extend_from_slice(&buf[..n]);
    }
    let head = String::from_utf8_lossy(&head);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    stream
}

/// The memory one open event stream costs the real binary, for
/// docs/operations.md: RSS before, with `ORCH_MEASURE_STREAMS` (1,000)
/// streams open, and after they closed. Run it alone:
/// `cargo nextest run -p orchestrator-cli --test floods --run-ignored only --no-capture`.
#[tokio::test]
#[ignore = "a measurement, not a check: run it alone"]
async fn memory_per_open_stream() {
    let streams: usize = std::env::var("ORCH_MEASURE_STREAMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let mut server = TestServer::start().await;
    let database_url = server.database_url();
    let admin_key = server.admin_key.clone();
    server.stop().await;
    let addr = format!("127.0.0.1:{}", free_port());
    let child = Command::new(common::ORCH)
        .args(["serve", "--listen", &addr, "--database-url", &database_url])
        .args(["--rate-limit-per-minute", "0"])
        .env("ORCH_BOOTSTRAP_ADMIN_KEY", &admin_key)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let http = server.http();
    for _ in 0..300 {
        let answer = http.get(format!("http://{addr}/readyz")).send().await;
        if answer.is_ok_and(|r| r.status() == 200) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Warm up: one stream opened and closed, so the first one's one-off
    // allocations are not counted.
    drop(open_stream(&addr, &admin_key).await);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = rss_kib(pid);
    let mut open = Vec::with_capacity(streams);
    for _ in 0..streams {
        open.push(open_stream(&addr, &admin_key).await);
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let during = rss_kib(pid);
    drop(open);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let after = rss_kib(pid);
    eprintln!(
        "{} streams: RSS {before} KiB before, {during} KiB open ({:.1} KiB a stream), {after} KiB 5 s after they closed",
        streams,
        (during.saturating_sub(before)) as f64 / streams as f64
    );
    drop(child);
}
