//! The database going away under a running server: an administrator's
//! shutdown of its sessions, and an outage of the whole server (a TCP proxy
//! in front of PostgreSQL that the test cuts). Requests answer 503, never
//! 500; during an outage at once, and `/readyz` says so within 2 s; work
//! resumes when the database is back. PostgreSQL only: SQLite is a file
//! in the process.

use orchestrator_tests::{TestServer, backend};
use reqwest::StatusCode;
use serde_json::json;
use sqlx::Connection;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

/// A TCP proxy on 127.0.0.1 in front of `target` that can be cut: its
/// listening socket and every open connection are closed (new connections
/// are refused, as by a stopped server), until restored on the same port.
struct Proxy {
    addr: SocketAddr,
    target: String,
    /// The accept loop and the open connections.
    tasks: Arc<Mutex<Vec<AbortHandle>>>,
}

impl Proxy {
    async fn start(target: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let proxy = Self {
            addr: listener.local_addr().unwrap(),
            target,
            tasks: Arc::default(),
        };
        proxy.serve(listener);
        proxy
    }

    fn serve(&self, listener: TcpListener) {
        let (target, tasks) = (self.target.clone(), self.tasks.clone());
        let accept = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let target = target.clone();
                let task = tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                tasks.lock().unwrap().push(task.abort_handle());
            }
        });
        self.tasks.lock().unwrap().push(accept.abort_handle());
    }

    fn cut(&self) {
        for task in self.tasks.lock().unwrap().drain(..) {
            task.abort();
        }
    }

    async fn restore(&self) {
        let listener = loop {
            match TcpListener::bind(self.addr).await {
                Ok(listener) => break listener,
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        };
        self.serve(listener);
    }
}

/// `url` with its `host:port` replaced by `addr`.
fn through(url: &str, addr: SocketAddr) -> String {
    let at = url.find('@').expect("user in the URL") + 1;
    let end = at + url[at..].find('/').expect("a database name");
    format!("{}{addr}{}", &url[..at], &url[end..])
}

/// The `host:port` of a PostgreSQL URL.
fn host_port(url: &str) -> String {
    let at = url.find('@').unwrap() + 1;
    let end = at + url[at..].find('/').unwrap();
    url[at..end].to_owned()
}

async fn create_task(server: &TestServer, title: &str) -> (StatusCode, Duration) {
    let started = Instant::now();
    let response = server
        .http()
        .post(server.at("/api/v1/tasks"))
        .bearer_auth(&server.admin_key)
        .json(&json!({ "title": title, "type": "code" }))
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .unwrap();
    (response.status(), started.elapsed())
}

async fn readyz(server: &TestServer) -> StatusCode {
    server
        .http()
        .get(server.at("/readyz"))
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .unwrap()
        .status()
}

#[tokio::test]
async fn an_outage_answers_503_at_once_and_work_resumes() {
    if backend() != "postgres" {
        return;
    }
    let base = std::env::var(orchestrator_tests::TEST_DATABASE_ENV).unwrap();
    let proxy = Proxy::start(host_port(&base)).await;
    let addr = proxy.addr;
    let server = TestServer::start_with(|config| {
        config.core.database_url = through(&config.core.database_url, addr);
    })
    .await;
    assert_eq!(create_task(&server, "before").await.0, StatusCode::CREATED);
    assert_eq!(readyz(&server).await, StatusCode::OK);

    proxy.cut();
    let cut_at = Instant::now();
    // /readyz reports the database down within 2 s.
    loop {
        if readyz(&server).await == StatusCode::SERVICE_UNAVAILABLE {
            break;
        }
        assert!(
            cut_at.elapsed() < Duration::from_secs(2),
            "/readyz still 200"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let ready_after = cut_at.elapsed();
    assert!(
        ready_after < Duration::from_millis(2500),
        "/readyz took {ready_after:?} to report the outage"
    );
    // Requests answer 503 (never 500); after the first ones, at once.
    let mut slowest_late = Duration::ZERO;
    let mut slowest = Duration::ZERO;
    while cut_at.elapsed() < Duration::from_secs(5) {
        // Several at once, as under load.
        let burst: Vec<_> = (0..8)
            .map(|_| {
                let server = &server;
                async move { create_task(server, "during").await }
            })
            .collect();
        let mut took = Duration::ZERO;
        for (status, t) in futures_util::future::join_all(burst).await {
            assert_eq!(
                status,
                StatusCode::SERVICE_UNAVAILABLE,
                "a write in the outage"
            );
            took = took.max(t);
        }
        slowest = slowest.max(took);
        let read = server
            .http()
            .get(server.at("/api/v1/tasks"))
            .bearer_auth(&server.admin_key)
            .send()
            .await
            .unwrap();
        assert_eq!(read.status(), StatusCode::SERVICE_UNAVAILABLE);
        let body: serde_json::Value = read.json().await.unwrap();
        assert_eq!(body["error"]["code"], "SERVICE_UNAVAILABLE");
        if cut_at.elapsed() > Duration::from_secs(3) {
            let (status, took) = create_task(&server, "alone").await;
            assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
            slowest_late = slowest_late.max(took);
        }
    }
    assert!(
        slowest < Duration::from_millis(2500),
        "a request waited {slowest:?} in the outage"
    );
    assert!(
        slowest_late < Duration::from_millis(500),
        "requests waited {slowest_late:?} while the database was known down"
    );

    proxy.restore().await;
    let restored = Instant::now();
    loop {
        let (status, _) = create_task(&server, "after").await;
        if status == StatusCode::CREATED {
            break;
        }
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(
            restored.elapsed() < Duration::from_secs(10),
            "no recovery after the outage"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(readyz(&server).await, StatusCode::OK);
    eprintln!(
        "readyz down after {ready_after:?}, recovered in {:?}",
        restored.elapsed()
    );
}

/// `pg_terminate_backend` on every session of the server's database (what a
/// `restart` or `stop -m fast` does to them: `57P01`) while writes run:
/// each answers 201 or 503, never 500, and writing goes on afterwards.
#[tokio::test]
async fn terminated_sessions_answer_503_never_500() {
    if backend() != "postgres" {
        return;
    }
    let server = TestServer::start().await;
    let url = server.database_url();
    let database = url
        .rsplit('/')
        .next()
        .unwrap()
        .split('?')
        .next()
        .unwrap()
        .to_owned();
    let mut admin = sqlx::PgConnection::connect(&url).await.unwrap();
    for round in 0..5 {
        let writes: Vec<_> = (0..16)
            .map(|i| {
                let http = server.http();
                let at = server.at("/api/v1/tasks");
                let key = server.admin_key.clone();
                tokio::spawn(async move {
                    http.post(at)
                        .bearer_auth(key)
                        .json(&json!({ "title": format!("t{round}-{i}"), "type": "code" }))
                        .send()
                        .await
                        .unwrap()
                        .status()
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(5 * round)).await;
        sqlx::query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = $1 AND pid <> pg_backend_pid()",
        )
        .bind(&database)
        .execute(&mut admin)
        .await
        .unwrap();
        for write in writes {
            let status = write.await.unwrap();
            assert!(
                status == StatusCode::CREATED || status == StatusCode::SERVICE_UNAVAILABLE,
                "round {round}: {status}"
            );
        }
        // Idle sessions were terminated too: the next write meets a dead
        // writer connection, and still succeeds (run again on a new one).
        let (status, _) = create_task(&server, "next").await;
        assert_eq!(
            status,
            StatusCode::CREATED,
            "round {round}: the write after"
        );
    }
}
