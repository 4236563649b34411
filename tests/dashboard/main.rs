//! The operator dashboard in a real browser: headless Chromium driven over
//! WebDriver (chromedriver) against a real server, on SQLite and PostgreSQL.
//!
//! Chromium and chromedriver come from Debian's `chromium` and
//! `chromium-driver` packages (`.ci/run` installs them). A missing
//! chromedriver fails the test with a clear message; nothing is skipped.
//!
//! This file holds the harness (the driver, waits, clicks, sign-in); the
//! tests live in one module per page or concern.

mod bulk;
mod catalog;
mod first_hour;
mod limits;
mod pages;
mod rail;
mod run_control;
mod schedules;
mod session;
mod webhooks;
mod workflow;

use fantoccini::elements::Element;
use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client as Browser, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use orchestrator_client::api::{CreateTask, TaskState, WorkflowState};
use orchestrator_tests::TestServer;
use serde_json::{Value, json};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// How long a page may take to show what a step waits for.
const PATIENCE: Duration = Duration::from_secs(15);

/// A chromedriver process with one headless Chromium session; both end on
/// drop (the session first, through `close`).
struct Driver {
    process: Child,
    browser: Option<Browser>,
}

impl Driver {
    async fn start() -> Self {
        let binary = std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
        let port = free_port();
        // Its own process group: the browser it starts joins it, so a test
        // that fails before closing the session still leaves nothing behind.
        let process = Command::new(&binary)
            .arg(format!("--port={port}"))
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot run `{binary}` ({e}). The dashboard tests need headless Chromium and its \
                     WebDriver: `apt-get install -y chromium chromium-driver` (CI's .ci/run does this), \
                     or point CHROMEDRIVER at the binary."
                )
            });
        let mut caps = serde_json::Map::new();
        caps.insert("browserName".into(), json!("chrome"));
        caps.insert("goog:loggingPrefs".into(), json!({ "browser": "ALL" }));
        caps.insert(
            "goog:chromeOptions".into(),
            json!({ "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,800"] }),
        );
        let started = Instant::now();
        let browser = loop {
            match ClientBuilder::new(HttpConnector::new())
                .capabilities(caps.clone())
                .connect(&format!("http://127.0.0.1:{port}"))
                .await
            {
                Ok(browser) => break browser,
                Err(e) if started.elapsed() < Duration::from_secs(10) => {
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("chromedriver on port {port} did not start a session: {e}"),
            }
        };
        Self {
            process,
            browser: Some(browser),
        }
    }

    fn browser(&self) -> &Browser {
        self.browser.as_ref().expect("session open")
    }

    /// The browser console since the last call (chromedriver's log
    /// endpoint): every entry as (level, message).
    async fn console(&self) -> Vec<(String, String)> {
        let entries = self
            .browser()
            .issue_cmd(BrowserLog)
            .await
            .expect("read the browser log");
        entries
            .as_array()
            .expect("log entries")
            .iter()
            .map(|e| {
                (
                    e["level"].as_str().unwrap_or_default().to_owned(),
                    e["message"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    }

    /// Closes the session after checking the console: no errors at all, or
    /// only failed requests whose status the test expects (a refused key).
    /// A failure prints the whole console, each entry in full on its line.
    async fn close_expecting(self, expected_statuses: &[u16]) {
        let console = self.console().await;
        let unexpected: Vec<&(String, String)> = console
            .iter()
            .filter(|(level, message)| {
                level == "SEVERE"
                    && !expected_statuses
                        .iter()
                        .any(|s| message.contains(&format!("status of {s}")))
            })
            .collect();
        if !unexpected.is_empty() {
            let url = self
                .browser()
                .current_url()
                .await
                .map(|u| u.to_string())
                .unwrap_or_default();
            let mut report = format!(
                "{} unexpected console error(s) at {url}:\n",
                unexpected.len()
            );
            for (level, message) in &unexpected {
                report.push_str(&format!("  [{level}] {message}\n"));
            }
            report.push_str("the whole console:\n");
            for (level, message) in &console {
                report.push_str(&format!("  [{level}] {message}\n"));
            }
            eprintln!("{report}");
            panic!("{report}");
        }
        self.close_session().await;
    }

    async fn close(self) {
        self.close_expecting(&[]).await;
    }

    async fn close_session(mut self) {
        if let Some(browser) = self.browser.take() {
            let _ = browser.close().await;
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // The whole group (chromedriver and the browser), then the driver.
        let _ = Command::new("kill")
            .args(["-KILL", "--"])
            .arg(format!("-{}", self.process.id()))
            .stderr(Stdio::null())
            .status();
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// chromedriver's `POST /session/:id/se/log` (type `browser`).
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base: &url::Url,
        session: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base.join(&format!("session/{}/se/log", session.unwrap_or_default()))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(r#"{"type":"browser"}"#.into()))
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Waits until `css` matches an element whose text contains `text`.
async fn wait_text(browser: &Browser, css: &str, text: &str) -> Element {
    let started = Instant::now();
    loop {
        if let Ok(elements) = browser.find_all(Locator::Css(css)).await {
            for element in elements {
                if element.text().await.is_ok_and(|t| t.contains(text)) {
                    return element;
                }
            }
        }
        if started.elapsed() > PATIENCE {
            let page = browser
                .source()
                .await
                .unwrap_or_default()
                .chars()
                .take(3000)
                .collect::<String>();
            panic!("no `{css}` containing {text:?} within {PATIENCE:?}; page: {page}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Clicks the first `css` element whose text contains `text`, once it is
/// there. A live page may redraw between finding and clicking (a stale
/// element): then it finds the element again.
async fn click_text(browser: &Browser, css: &str, text: &str) {
    let started = Instant::now();
    loop {
        let element = wait_text(browser, css, text).await;
        match element.click().await {
            Ok(()) => return,
            Err(e) if started.elapsed() < PATIENCE => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("cannot click `{css}` containing {text:?}: {e}"),
        }
    }
}

/// Clicks `css` once it is there (again after a redraw, like `click_text`).
async fn click(browser: &Browser, css: &str) {
    click_text(browser, css, "").await;
}

/// Types into the field `css` (found again after a redraw).
async fn type_into(browser: &Browser, css: &str, text: &str) {
    let started = Instant::now();
    loop {
        let element = wait_css(browser, css).await;
        match element.send_keys(text).await {
            Ok(()) => return,
            Err(e) if started.elapsed() < PATIENCE => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("cannot type into `{css}`: {e}"),
        }
    }
}

async fn wait_css(browser: &Browser, css: &str) -> Element {
    browser
        .wait()
        .at_most(PATIENCE)
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("no `{css}` within {PATIENCE:?}: {e}"))
}

async fn wait_url(browser: &Browser, part: &str) -> String {
    let started = Instant::now();
    loop {
        let url = browser.current_url().await.unwrap().to_string();
        if url.contains(part) {
            return url;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "the page stayed at {url}, expected {part}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Writes one runtime log line for the workflow through the API.
async fn ingest(server: &TestServer, workflow_id: Uuid, operation: &str) {
    let ingested = server
        .http()
        .post(server.at("/api/v1/logs/ingest"))
        .bearer_auth(&server.admin_key)
        .json(&json!({ "entries": [{ "category": "tool", "operation": operation, "workflow_id": workflow_id }] }))
        .send()
        .await
        .unwrap();
    assert!(ingested.status().is_success(), "{}", ingested.status());
}

async fn sign_in(browser: &Browser, server: &TestServer, key: &str) {
    browser.goto(&server.at("/ui/signin")).await.unwrap();
    submit_key(browser, key).await;
}

/// A browser signed in as the admin, on the page sign-in lands on.
async fn signed_in(server: &TestServer) -> Driver {
    let driver = Driver::start().await;
    sign_in(driver.browser(), server, &server.admin_key).await;
    wait_url(driver.browser(), "/ui/workflows").await;
    driver
}

/// A launch of the fixtures' playbook in their workspace, named `name`.
fn launch(
    (playbook_id, workspace_id): (Uuid, Uuid),
    name: &str,
) -> orchestrator_client::api::CreateWorkflow {
    orchestrator_client::api::CreateWorkflow {
        playbook_id,
        workspace_id,
        name: name.into(),
        ..Default::default()
    }
}

/// Fills in and submits the sign-in form on the current page (from the
/// keyboard: Enter in the key field).
async fn submit_key(browser: &Browser, key: &str) {
    let field = wait_css(browser, "#api-key").await;
    field.send_keys(key).await.unwrap();
    field
        .send_keys(&fantoccini::key::Key::Enter.to_string())
        .await
        .unwrap();
}

/// Waits until `script` (a function body returning a value) returns true.
async fn wait_js(browser: &Browser, script: &str, what: &str) {
    let started = Instant::now();
    loop {
        if browser
            .execute(script, vec![])
            .await
            .is_ok_and(|v| v == Value::Bool(true))
        {
            return;
        }
        assert!(started.elapsed() < PATIENCE, "{what} within {PATIENCE:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// chromedriver's `POST /session/:id/goog/cdp/execute`: one DevTools command.
#[derive(Debug)]
struct DevTools(Value);

impl WebDriverCompatibleCommand for DevTools {
    fn endpoint(
        &self,
        base: &url::Url,
        session: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base.join(&format!(
            "session/{}/goog/cdp/execute",
            session.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(self.0.to_string()))
    }
}
