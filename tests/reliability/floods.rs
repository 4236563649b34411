//! Connection floods (issue 33, defect 4): a connection that sends no
//! request, or only part of a request head, is closed at the header-read
//! timeout; a keep-alive connection is closed at the idle timeout (a
//! different, longer one); at the connection cap idle connections make room
//! for new ones, and when every connection is busy a new one is refused with
//! a `503` in the error envelope. (The descriptor limit and 1,100 idle
//! sockets against the real binary: `orchestrator-cli/tests/floods.rs`.)

use orchestrator_tests::TestServer;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const HEALTHZ: &[u8] = b"GET /healthz HTTP/1.1\r\nhost: orch\r\n\r\n";

async fn connect(server: &TestServer) -> TcpStream {
    TcpStream::connect(server.handle().local_addr())
        .await
        .unwrap()
}

/// Reads one whole response (head and `Content-Length` body) as text.
async fn read_response(stream: &mut TcpStream) -> String {
    let mut bytes = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if bytes.len() >= end + 4 + length {
                return text;
            }
        }
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .expect("a response within 10 s")
            .unwrap();
        assert!(n > 0, "the connection closed mid-response: {bytes:?}");
        bytes.extend_from_slice(&buf[..n]);
    }
}

/// Waits up to `within` for the server to close `stream` (end of file or a
/// reset); `false` when it is still open then.
async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 256];
    match tokio::time::timeout(within, stream.read(&mut buf)).await {
        Err(_) => false,
        Ok(Ok(0) | Err(_)) => true,
        Ok(Ok(n)) => panic!("unexpected bytes: {:?}", &buf[..n]),
    }
}

#[tokio::test]
async fn silent_slow_and_idle_connections_are_closed_at_their_timeouts() {
    let server = TestServer::start_with(|config| {
        config.header_read_timeout = Duration::from_secs(1);
        config.idle_timeout = Duration::from_secs(8);
    })
    .await;
    // Sends nothing at all.
    let mut silent = connect(&server).await;
    // Sends half a request head, then nothing.
    let mut slow = connect(&server).await;
    slow.write_all(b"GET /healthz HTTP/1.1\r\nhost: or")
        .await
        .unwrap();
    // Sends a request, gets its answer, then stays idle.
    let mut idle = connect(&server).await;
    idle.write_all(HEALTHZ).await.unwrap();
    let answer = read_response(&mut idle).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let answered = Instant::now();

    let started = Instant::now();
    assert!(
        closed_within(&mut silent, Duration::from_secs(10)).await,
        "a connection that sends nothing is closed at the header-read timeout"
    );
    assert!(
        closed_within(&mut slow, Duration::from_secs(10)).await,
        "a request head that never completes is closed at the header-read timeout"
    );
    eprintln!(
        "silent and slow connections closed after {:?}",
        started.elapsed()
    );
    // The idle timeout is not the header-read one: after 3 s (three header
    // timeouts) the idle keep-alive connection is still open and serves a
    // second request...
    let left = Duration::from_secs(3).saturating_sub(answered.elapsed());
    assert!(
        !closed_within(&mut idle, left).await,
        "an idle keep-alive connection stays open for its idle timeout"
    );
    idle.write_all(HEALTHZ).await.unwrap();
    let answer = read_response(&mut idle).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // ...and is closed once it stays idle for 8 s.
    let answered = Instant::now();
    assert!(
        closed_within(&mut idle, Duration::from_secs(30)).await,
        "an idle keep-alive connection is closed at the idle timeout"
    );
    let idled = answered.elapsed();
    assert!(idled >= Duration::from_secs(7), "closed after {idled:?}");
}

#[tokio::test]
async fn at_the_cap_idle_connections_make_room_and_busy_ones_refuse_with_503() {
    const CAP: usize = 20;
    let server = TestServer::start_with(|config| config.max_open_connections = CAP).await;
    // Twice the cap of sockets that never send a byte.
    let mut flood = Vec::new();
    for _ in 0..2 * CAP {
        flood.push(connect(&server).await);
    }
    // A real client still gets in, at once.
    let started = Instant::now();
    let health = server
        .http()
        .get(server.at("/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "healthz took {:?} at the cap",
        started.elapsed()
    );
    drop(flood);

    // Every place taken by a busy connection (an open event stream): the
    // next connection is refused with 503 in the error envelope.
    let mut streams = Vec::new();
    for _ in 0..CAP {
        let response = server
            .http()
            .get(server.at("/api/v1/events/stream"))
            .bearer_auth(&server.admin_key)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        streams.push(response);
    }
    // (The answer comes at once: nothing is written, so that nothing unread
    // makes the close a reset.)
    let mut refused = connect(&server).await;
    let answer = read_response(&mut refused).await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("\"SERVICE_UNAVAILABLE\""), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("retry-after: 1"),
        "{answer}"
    );
    // A stream that ends gives its place back.
    drop(streams.pop());
    let mut answered = false;
    for _ in 0..100 {
        let health = server.http().get(server.at("/healthz")).send().await;
        if health.is_ok_and(|r| r.status() == 200) {
            answered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(answered, "a connection gets in once a stream ends");
}

#[tokio::test]
async fn event_streams_past_the_cap_get_503_and_a_closed_one_gives_its_place_back() {
    let server = TestServer::start_with(|config| {
        config.max_streams = 3;
        // A closed stream is noticed at its next heartbeat at the latest.
        config.core.stream_heartbeat = Duration::from_millis(500);
    })
    .await;
    let open = |path: &'static str| {
        server
            .http()
            .get(server.at(path))
            .bearer_auth(&server.admin_key)
            .send()
    };
    let mut streams = Vec::new();
    for path in [
        "/api/v1/events/stream",
        "/api/v1/logs/stream",
        "/api/v1/events/stream",
    ] {
        let response = open(path).await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
        streams.push(response);
    }
    // Every kind of stream counts against the one cap.
    for path in ["/api/v1/events/stream", "/api/v1/logs/stream"] {
        let refused = open(path).await.unwrap();
        assert_eq!(refused.status(), 503, "{path}");
        assert_eq!(
            refused.headers().get("retry-after").map(|v| v.as_bytes()),
            Some(&b"5"[..])
        );
        let body: serde_json::Value = refused.json().await.unwrap();
        assert_eq!(body["error"]["code"], "SERVICE_UNAVAILABLE", "{body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("maximum of 3 open event streams"),
            "{body}"
        );
    }
    // Other requests are served as ever.
    let tasks = server
        .http()
        .get(server.at("/api/v1/tasks"))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap();
    assert_eq!(tasks.status(), 200);
    // A stream that ends gives its place back.
    drop(streams.pop());
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let again = open("/api/v1/events/stream").await.unwrap();
        if again.status() == 200 {
            break;
        }
        assert_eq!(again.status(), 503);
        assert!(
            Instant::now() < deadline,
            "no place back after a stream ended"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
