//! `orch serve` children for the `orch db` tests: start one on a data
//! directory or database URL, call its API with JSON, stop it with SIGTERM.

use reqwest::StatusCode;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::Duration;
use tokio::process::{Child, Command};

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// An `orch serve` child and an admin key for it.
pub struct Served {
    child: Child,
    pub base: String,
    pub key: String,
    http: reqwest::Client,
}

/// Starts `orch serve` on `database` (`--data-dir DIR` or `--database-url
/// URL`), with `bootstrap` as its admin key when given, and waits for it.
pub async fn serve(database: [&str; 2], key: &str, bootstrap: bool) -> Served {
    let port = free_port();
    let mut command = Command::new(env!("CARGO_BIN_EXE_orch"));
    command
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args(database)
        .args(["--rate-limit-per-minute", "0"])
        .args(["--allow-private-network", "true"])
        .env_remove("ORCH_BOOTSTRAP_ADMIN_KEY")
        .env_remove("ORCH_SECRET_KEY")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    if bootstrap {
        command.env("ORCH_BOOTSTRAP_ADMIN_KEY", key);
    }
    let child = command.spawn().expect("orch serve starts");
    orchestrator_client::install_crypto_provider();
    let served = Served {
        child,
        base: format!("http://127.0.0.1:{port}"),
        key: key.to_owned(),
        http: reqwest::Client::new(),
    };
    for _ in 0..600 {
        if let Ok(r) = served
            .http
            .get(format!("{}/readyz", served.base))
            .send()
            .await
            && r.status().is_success()
        {
            return served;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("orch serve did not become ready");
}

impl Served {
    pub async fn call_as(
        &self,
        key: &str,
        method: &str,
        path: &str,
        body: Value,
    ) -> (StatusCode, Value) {
        let url = format!("{}/api/v1{path}", self.base);
        let request = match method {
            "GET" => self.http.get(url),
            "PUT" => self.http.put(url).json(&body),
            _ => self.http.post(url).json(&body),
        };
        let response = request.bearer_auth(key).send().await.unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    pub async fn call(&self, method: &str, path: &str, body: Value) -> (StatusCode, Value) {
        self.call_as(&self.key, method, path, body).await
    }

    /// The `data` of a successful call.
    pub async fn ok(&self, method: &str, path: &str, body: Value) -> Value {
        let (status, value) = self.call(method, path, body).await;
        assert!(status.is_success(), "{method} {path}: {status} {value}");
        value["data"].clone()
    }

    /// Stops the server the way an operator does (SIGTERM), and waits.
    pub async fn stop(mut self) {
        if let Some(pid) = self.child.id() {
            let _ = Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status()
                .await;
        }
        if tokio::time::timeout(Duration::from_secs(30), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

/// Registers an agent with its own key: (id, key).
pub async fn agent(server: &Served, name: &str) -> (String, String) {
    let body = json!({ "name": name, "issue_api_key": true });
    let agent = server.ok("POST", "/agents/register", body).await;
    (
        agent["id"].as_str().unwrap().to_owned(),
        agent["api_key"].as_str().unwrap().to_owned(),
    )
}

/// `POST path` as `agent`: the `data` of a success.
pub async fn as_agent(server: &Served, agent: &(String, String), path: &str, body: Value) -> Value {
    let (status, value) = server.call_as(&agent.1, "POST", path, body).await;
    assert!(status.is_success(), "POST {path}: {status} {value}");
    value["data"].clone()
}

/// Creates a task and has `agent` claim it: its id.
pub async fn claimed_task(server: &Served, agent: &(String, String), title: &str) -> String {
    let body = json!({ "title": title, "type": "code" });
    let id = server.ok("POST", "/tasks", body).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, claimed) = server
        .call_as(
            &agent.1,
            "POST",
            "/tasks/claim",
            json!({ "agent_id": agent.0 }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{claimed}");
    assert_eq!(claimed["data"]["id"], id.as_str());
    id
}

pub fn stdout_json(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "orch failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON on stdout")
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[cfg(unix)]
pub fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

pub async fn orch(args: &[&str]) -> Output {
    super::orch_with(args, &[]).await
}
