//! What the "no secret ever leaves the server" tests read: the server's own
//! log, captured in-process at debug level, and an HTTP client that keeps
//! every response body it read, so a test can grep both for secret values.

use crate::TestServer;
use reqwest::StatusCode;
use serde_json::Value;
use std::sync::{Arc, Mutex, OnceLock};

/// Everything the server logs in this test process, at debug level.
#[derive(Clone, Default)]
pub struct ServerLog(Arc<Mutex<Vec<u8>>>);

impl ServerLog {
    /// The log so far, as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl std::io::Write for ServerLog {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for ServerLog {
    type Writer = ServerLog;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

/// Starts capturing the log (once per test process: it installs the global
/// subscriber) and returns it.
pub fn server_log() -> &'static ServerLog {
    static LOG: OnceLock<ServerLog> = OnceLock::new();
    LOG.get_or_init(|| {
        let captured = ServerLog::default();
        tracing_subscriber::fmt()
            .with_env_filter("debug")
            .with_ansi(false)
            .with_writer(captured.clone())
            .init();
        captured
    })
}

/// HTTP to the control plane's `/api/v1` that remembers the bodies it read.
pub struct RecordingApi<'a> {
    pub server: &'a TestServer,
    pub http: reqwest::Client,
    /// Whether only `GET` answers are kept (a test that resolves secrets on
    /// purpose through a `POST` leaves those answers out).
    reads_only: bool,
    seen: Mutex<Vec<String>>,
}

impl<'a> RecordingApi<'a> {
    /// Keeps every body.
    pub fn new(server: &'a TestServer) -> Self {
        Self {
            server,
            http: server.http(),
            reads_only: false,
            seen: Mutex::default(),
        }
    }

    /// Keeps only the bodies of `GET` requests.
    pub fn reads_only(server: &'a TestServer) -> Self {
        Self {
            reads_only: true,
            ..Self::new(server)
        }
    }

    /// `method path` with `key` as the bearer (a JSON body unless `GET` or
    /// `DELETE`); the status and the body (as text when it is not JSON).
    pub async fn call(
        &self,
        method: &str,
        path: &str,
        key: &str,
        body: Value,
    ) -> (StatusCode, Value) {
        let url = self.server.at(&format!("/api/v1{path}"));
        let request = match method {
            "GET" => self.http.get(url),
            "PUT" => self.http.put(url).json(&body),
            "DELETE" => self.http.delete(url),
            _ => self.http.post(url).json(&body),
        };
        let response = request.bearer_auth(key).send().await.unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        if method == "GET" || !self.reads_only {
            self.record(&text);
        }
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    /// [`Self::call`] with the admin key.
    pub async fn admin(&self, method: &str, path: &str, body: Value) -> (StatusCode, Value) {
        self.call(method, path, &self.server.admin_key, body).await
    }

    /// [`Self::admin`] that must succeed; its `data`.
    pub async fn ok(&self, method: &str, path: &str, body: Value) -> Value {
        let (status, value) = self.admin(method, path, body).await;
        assert!(status.is_success(), "{method} {path}: {status} {value}");
        value["data"].clone()
    }

    /// Keeps a body read some other way.
    pub fn record(&self, text: &str) {
        self.seen.lock().unwrap().push(text.to_owned());
    }

    /// Every body kept so far.
    pub fn bodies(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}
