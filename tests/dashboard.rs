//! The operator dashboard in a real browser: headless Chromium driven over
//! WebDriver (chromedriver) against a real server, on SQLite and PostgreSQL.
//!
//! Chromium and chromedriver come from Debian's `chromium` and
//! `chromium-driver` packages (`.ci/run` installs them). A missing
//! chromedriver fails the test with a clear message; nothing is skipped.

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

#[tokio::test]
async fn operator_launches_follows_and_steers_a_workflow() {
    let server = TestServer::start().await;
    let (playbook_id, workspace_id) = server.launch_fixtures("Ship it", "Main repo").await;
    let driver = Driver::start().await;
    let browser = driver.browser();

    // Opening a page signed out lands on sign-in, then returns to it.
    browser.goto(&server.at("/ui/launch")).await.unwrap();
    wait_url(browser, "/ui/signin?next=").await;
    submit_key(browser, &server.admin_key).await;
    wait_url(browser, "/ui/launch").await;

    // Launch: the pickers list the playbook and workspace.
    wait_text(browser, "#launch-playbook option", "Ship it").await;
    wait_text(browser, "#launch-workspace option", "Main repo").await;
    type_into(browser, "#launch-name", "Browser launch").await;
    type_into(browser, "#launch-parameters", "ticket=OPS-7").await;
    type_into(browser, "#launch-summary", "Ship the fix for OPS-7").await;
    let dir = tempfile::tempdir().unwrap();
    let brief = dir.path().join("brief.md");
    std::fs::write(&brief, "# Brief\n").unwrap();
    wait_css(browser, "#launch-files")
        .await
        .send_keys(brief.to_str().unwrap())
        .await
        .unwrap();
    click(browser, "#launch").await;
    let url = wait_url(browser, "/ui/workflows/").await;
    let workflow_id: Uuid = url.rsplit('/').next().unwrap().parse().unwrap();
    wait_text(browser, "h1", "Browser launch").await;
    let detail = server.admin().workflows().get(workflow_id).await.unwrap();
    assert_eq!(detail.workflow.playbook_id, playbook_id);
    assert_eq!(detail.workflow.workspace_id, workspace_id);
    assert_eq!(detail.workflow.parameters["ticket"], "OPS-7");
    let packet = detail
        .workflow
        .initial_input_packet
        .expect("an input packet");
    assert_eq!(packet.summary.as_deref(), Some("Ship the fix for OPS-7"));
    let files = packet.files.expect("the uploaded file");
    assert_eq!(files[0].file_name, "brief.md");
    assert_eq!(files[0].content_base64, "IyBCcmllZgo=");
    wait_text(browser, "#input-packet", "brief.md").await;
    wait_text(browser, "#input-packet", "8 bytes").await;
    wait_text(browser, "#feed-state", "live").await;

    // Operator actions on the workflow: pause, then resume.
    click(browser, "#pause").await;
    wait_text(browser, "#workflow-state", "paused").await;
    click(browser, "#resume").await;
    wait_css(browser, "#pause").await;
    let state = server.admin().workflows().get(workflow_id).await.unwrap();
    assert_ne!(state.workflow.state, WorkflowState::Paused);

    // A task created through the API appears on the open page, no reload.
    let task = server
        .admin()
        .tasks()
        .create(&CreateTask {
            title: "Created behind the page's back".into(),
            task_type: "code".into(),
            workflow_id: Some(workflow_id),
            ..Default::default()
        })
        .await
        .unwrap();
    wait_text(browser, "#tasks", "Created behind the page's back").await;
    wait_text(browser, "#feed", "task.created").await;
    // The feed names the task by the random end of its UUIDv7 id (the last 8
    // hex digits), not by its first 8, a timestamp shared by everything
    // created within a minute.
    let simple = task.id.simple().to_string();
    wait_text(browser, "#feed", &format!("task {}", &simple[24..])).await;

    // Open it and run an action its state allows: skip a pending task.
    click_text(browser, "#tasks a", "Created behind the page's back").await;
    wait_url(browser, &format!("/ui/tasks/{}", task.id)).await;
    wait_text(browser, "#task-state", "pending").await;
    click(browser, "#act-skip").await;
    wait_text(browser, "#action-done", "skip").await;
    wait_text(browser, "#task-state", "completed").await;
    let skipped = server.admin().tasks().get(task.id).await.unwrap();
    assert_eq!(skipped.state, TaskState::Completed);

    // The live tail shows a log line written after the page opened.
    browser
        .goto(&server.at(&format!("/ui/logs?workflow_id={workflow_id}")))
        .await
        .unwrap();
    wait_text(browser, "#tail-state", "live").await;
    ingest(&server, workflow_id, "tool.browser_probe").await;
    wait_text(browser, "#log-rows", "tool.browser_probe").await;

    // Pausing the tail stops new lines; resuming catches up on them.
    click(browser, "#tail-toggle").await;
    wait_text(browser, "#tail-state", "paused").await;
    ingest(&server, workflow_id, "tool.while_paused").await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    let rows = wait_css(browser, "#log-rows").await.text().await.unwrap();
    assert!(
        !rows.contains("tool.while_paused"),
        "paused tail showed a line"
    );
    click(browser, "#tail-toggle").await;
    wait_text(browser, "#log-rows", "tool.while_paused").await;

    // Sign out: back at sign-in, and the session no longer opens pages.
    let access = browser
        .get_named_cookie("service_access_token")
        .await
        .unwrap()
        .value()
        .to_owned();
    click(browser, "#signout").await;
    wait_url(browser, "/ui/signin").await;
    browser.goto(&server.at("/ui/workflows")).await.unwrap();
    wait_url(browser, "/ui/signin?next=").await;
    // The server revoked the session (the logout carried the CSRF header):
    // a copy of the access cookie is dead too.
    let me = server
        .http()
        .get(server.at("/api/v1/auth/me"))
        .bearer_auth(&access)
        .send()
        .await
        .unwrap();
    assert_eq!(me.status(), 401, "sign-out must revoke the session");
    driver.close().await;
}

#[tokio::test]
async fn a_wrong_key_shows_the_servers_error() {
    let server = TestServer::start().await;
    let driver = Driver::start().await;
    let browser = driver.browser();
    sign_in(browser, &server, "orch_admin_not_a_real_key_000000000000").await;
    let error = wait_css(browser, "#signin-error [role=alert]").await;
    let text = error.text().await.unwrap();
    assert!(!text.trim().is_empty(), "an empty error box");
    assert!(browser.current_url().await.unwrap().path() == "/ui/signin");
    // The form stays usable: the right key then signs in.
    wait_css(browser, "#api-key").await.clear().await.unwrap();
    submit_key(browser, &server.admin_key).await;
    wait_url(browser, "/ui/workflows").await;
    wait_text(browser, "main h1", "Workflows").await;
    driver.close_expecting(&[401]).await;
}

#[tokio::test]
async fn a_cookie_session_without_csrf_cannot_write() {
    let server = TestServer::start().await;
    let (playbook_id, workspace_id) = server.launch_fixtures("Ship it", "Main repo").await;
    let driver = Driver::start().await;
    let browser = driver.browser();
    sign_in(browser, &server, &server.admin_key).await;
    wait_url(browser, "/ui/workflows").await;

    // From the signed-in page: the same write without and with the header.
    let script = r#"
        const [body, withCsrf, done] = arguments;
        const headers = { 'content-type': 'application/json' };
        if (withCsrf) {
            headers['x-csrf-token'] = document.cookie.split('; ').find((c) => c.startsWith('service_csrf_token=')).split('=')[1];
        }
        fetch('/api/v1/workflows', { method: 'POST', credentials: 'same-origin', headers, body: JSON.stringify(body) })
            .then(async (r) => done({ status: r.status, body: await r.json() }), (e) => done({ status: 0, body: String(e) }));
    "#;
    let body =
        json!({ "playbook_id": playbook_id, "workspace_id": workspace_id, "name": "csrf probe" });
    let refused: Value = browser
        .execute_async(script, vec![body.clone(), json!(false)])
        .await
        .unwrap();
    assert_eq!(refused["status"], 401, "{refused}");
    assert!(
        refused["body"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("x-csrf-token"),
        "{refused}"
    );
    assert_eq!(
        server
            .admin()
            .workflows()
            .list(&Default::default(), Default::default())
            .await
            .unwrap()
            .total,
        0,
        "the refused write changed nothing"
    );
    let accepted: Value = browser
        .execute_async(script, vec![body, json!(true)])
        .await
        .unwrap();
    assert_eq!(accepted["status"], 201, "{accepted}");
    // The access cookie is HttpOnly: scripts cannot read the token.
    let cookies: Value = browser
        .execute("return document.cookie;", vec![])
        .await
        .unwrap();
    let cookies = cookies.as_str().unwrap();
    assert!(cookies.contains("service_csrf_token="));
    assert!(!cookies.contains("service_access_token="));
    driver.close_expecting(&[401]).await;
}

#[tokio::test]
async fn assets_are_embedded_typed_and_locked_down_on_both_addresses() {
    let server = TestServer::start_with(|config| {
        config.dashboard_listen = Some("127.0.0.1:0".parse().unwrap());
    })
    .await;
    let second = format!(
        "http://{}",
        server
            .handle()
            .dashboard_addr()
            .expect("a dashboard address")
    );
    let http = server.http();
    for base in [server.url.as_str(), second.as_str()] {
        for (path, content_type) in [
            ("/", "text/html"),
            ("/ui", "text/html"),
            (
                "/ui/workflows/6d1c7f0e-0000-4000-8000-000000000000",
                "text/html",
            ),
            ("/ui/assets/app.js", "text/javascript"),
            ("/ui/assets/pages/workflow.js", "text/javascript"),
            ("/ui/assets/style.css", "text/css"),
            ("/ui/assets/favicon.svg", "image/svg+xml"),
        ] {
            let response = http.get(format!("{base}{path}")).send().await.unwrap();
            assert_eq!(response.status(), 200, "{base}{path}");
            let headers = response.headers();
            assert!(
                headers["content-type"]
                    .to_str()
                    .unwrap()
                    .starts_with(content_type),
                "{path}: {:?}",
                headers["content-type"]
            );
            let csp = headers["content-security-policy"].to_str().unwrap();
            assert!(csp.contains("script-src 'self'") && csp.contains("default-src 'none'"));
            assert!(!csp.contains("unsafe"), "{csp}");
            assert_eq!(headers["x-content-type-options"], "nosniff");
        }
        let missing = http
            .get(format!("{base}/ui/assets/missing.js"))
            .send()
            .await
            .unwrap();
        assert_eq!(missing.status(), 404);
        let body: Value = missing.json().await.unwrap();
        assert!(body["error"]["code"].is_string(), "{body}");
        // The second address serves the API too (one origin for the cookies).
        let health = http.get(format!("{base}/healthz")).send().await.unwrap();
        assert_eq!(health.status(), 200);
    }
    // The shell loads its modules from this origin only: no inline script.
    let html = http
        .get(server.at("/"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.contains(r#"<script type="module" src="/ui/assets/app.js"></script>"#));
    assert!(!html.contains("<script>"));
}

#[tokio::test]
async fn an_expired_access_token_is_refreshed_with_the_csrf_header() {
    let server = TestServer::start_with(|config| {
        config.core.access_token_ttl = Duration::from_secs(2);
    })
    .await;
    let driver = Driver::start().await;
    let browser = driver.browser();
    sign_in(browser, &server, &server.admin_key).await;
    wait_text(browser, "main h1", "Workflows").await;
    // The page refreshes the session before the access token expires
    // (refresh cookie + CSRF header): the expiry it keeps moves on.
    let first: Value = browser
        .execute(
            "return localStorage.getItem('orch.session.expires_at');",
            vec![],
        )
        .await
        .unwrap();
    let first = first
        .as_str()
        .expect("the session's expiry is kept")
        .to_owned();
    wait_js(
        browser,
        &format!("return localStorage.getItem('orch.session.expires_at') !== {first:?};"),
        "a refresh",
    )
    .await;
    // Past the first token's expiry and the server's 5 s leeway, pages
    // still load: the session lives on the refreshed token, never sign-in.
    wait_js(
        browser,
        &format!("return Date.now() > Date.parse({first:?}) + 6000;"),
        "the first token's end",
    )
    .await;
    click(browser, "a[data-nav=fleet]").await;
    wait_text(browser, "main h1", "Fleet").await;
    wait_text(browser, "main", "No agents have registered.").await;
    assert_eq!(browser.current_url().await.unwrap().path(), "/ui/fleet");

    // The session ends behind the page's back: the next read meets a 401,
    // the refresh fails too, and the page goes to sign-in (never blank).
    let status: Value = browser
        .execute_async(
            r#"const done = arguments[0];
               const csrf = document.cookie.split('; ').find((c) => c.startsWith('service_csrf_token=')).split('=')[1];
               fetch('/api/v1/auth/logout', { method: 'POST', credentials: 'same-origin', headers: { 'x-csrf-token': csrf, 'content-type': 'application/json' }, body: '{}' })
                 .then((r) => done(r.status), () => done(0));"#,
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(status, 200);
    click(browser, "a[data-nav=workflows]").await;
    wait_url(browser, "/ui/signin?expired=1").await;
    wait_text(browser, "main", "Your session ended").await;
    driver.close_expecting(&[401]).await;
}

#[tokio::test]
async fn catalog_import_and_rail_search_work_from_the_browser() {
    let server = TestServer::start().await;
    let (_, workspace_id) = server.launch_fixtures("Unused", "Main repo").await;
    let driver = Driver::start().await;
    let browser = driver.browser();
    sign_in(browser, &server, &server.admin_key).await;
    wait_url(browser, "/ui/workflows").await;

    // Import a catalog playbook: preview (one decision per artifact), import.
    browser.goto(&server.at("/ui/catalog")).await.unwrap();
    click_text(browser, ".cards button", "Preview import").await;
    click_text(browser, "main button", "Import").await;
    let done = wait_text(browser, "[role=status]", "Imported").await;
    let imported = done.text().await.unwrap();
    let playbooks = server
        .admin()
        .playbooks()
        .list(Default::default())
        .await
        .unwrap();
    let local = playbooks
        .items
        .iter()
        .find(|p| imported.contains(&p.name) && p.name != "Unused")
        .expect("the imported playbook is listed by the API");

    // Two workflows from it; the rail's search narrows to one, in the URL.
    for name in ["alpha release", "beta release"] {
        server
            .admin()
            .workflows()
            .create(&orchestrator_client::api::CreateWorkflow {
                playbook_id: local.id,
                workspace_id,
                name: name.into(),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    browser.goto(&server.at("/ui/workflows")).await.unwrap();
    wait_text(browser, "#rail", "beta release").await;
    let search = wait_css(browser, "#rail-search").await;
    search.send_keys("alpha").await.unwrap();
    search
        .send_keys(&fantoccini::key::Key::Enter.to_string())
        .await
        .unwrap();
    wait_url(browser, "search=alpha").await;
    wait_text(browser, "main", "1 in all").await;
    let rail = wait_css(browser, "#rail").await.text().await.unwrap();
    assert!(
        rail.contains("alpha release") && !rail.contains("beta release"),
        "{rail}"
    );
    driver.close().await;
}

/// Eight tabs of the dashboard: a browser allows six HTTP/1.1 connections
/// to one host, so a stream per tab would leave the seventh tab loading
/// forever. The tabs share one event stream (the leader tab follows it and
/// passes frames on), so every tab loads and every tab sees live changes.
#[tokio::test]
async fn eight_tabs_load_and_follow_live_changes_over_one_shared_stream() {
    let server = TestServer::start().await;
    let (playbook_id, workspace_id) = server.launch_fixtures("Tabs", "Tab repo").await;
    let launch = |name: &str| orchestrator_client::api::CreateWorkflow {
        playbook_id,
        workspace_id,
        name: name.into(),
        ..Default::default()
    };
    server
        .admin()
        .workflows()
        .create(&launch("first run"))
        .await
        .unwrap();
    let driver = Driver::start().await;
    let browser = driver.browser();
    sign_in(browser, &server, &server.admin_key).await;
    wait_url(browser, "/ui/workflows").await;
    for tab in 1..8 {
        let opened = browser.new_window(true).await.unwrap();
        browser.switch_to_window(opened.handle).await.unwrap();
        let rail = server.at("/ui/workflows");
        tokio::time::timeout(Duration::from_secs(20), browser.goto(&rail))
            .await
            .unwrap_or_else(|_| panic!("tab {} did not load (connections used up)", tab + 1))
            .unwrap();
        wait_text(browser, "#rail", "first run").await;
    }
    // A change shows live in the last tab, which is not the one streaming.
    server
        .admin()
        .workflows()
        .create(&launch("late run"))
        .await
        .unwrap();
    wait_text(browser, "#rail", "late run").await;
    driver.close().await;
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

#[tokio::test]
async fn task_and_workflow_actions_follow_the_state() {
    let server = TestServer::start().await;
    let (playbook_id, workspace_id) = server.launch_fixtures("Steer", "Main repo").await;
    let admin = server.admin();
    let workflow = admin
        .workflows()
        .create(&orchestrator_client::api::CreateWorkflow {
            playbook_id,
            workspace_id,
            name: "Steered run".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    // An agent submits a task's output that fails its verification: the
    // task waits for an operator's assessment.
    let agent = admin
        .agents()
        .register(&orchestrator_client::api::RegisterAgent {
            name: "dev".into(),
            execution_mode: Some(orchestrator_client::api::ExecutionMode::Specialist),
            issue_api_key: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    let agent_client = orchestrator_client::Client::new(&server.url)
        .unwrap()
        .with_api_key(agent.api_key.clone().expect("key issued"));
    let assess = admin
        .tasks()
        .create(&CreateTask {
            title: "Assess me".into(),
            task_type: "code".into(),
            workflow_id: Some(workflow.id),
            ..Default::default()
        })
        .await
        .unwrap();
    let claimed = agent_client
        .tasks()
        .claim(&orchestrator_client::api::ClaimTask {
            agent_id: agent.id,
            workflow_id: Some(workflow.id),
            ..Default::default()
        })
        .await
        .unwrap()
        .expect("a task to claim");
    assert_eq!(claimed.id, assess.id);
    agent_client
        .tasks()
        .start(assess.id, &Default::default())
        .await
        .unwrap();
    agent_client
        .tasks()
        .complete(
            assess.id,
            &orchestrator_client::api::CompleteTask {
                output: Some(json!({ "patch": "half done" })),
                verification: Some(json!({ "passed": false })),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let task = admin
        .tasks()
        .create(&CreateTask {
            title: "Cancel me".into(),
            task_type: "code".into(),
            workflow_id: Some(workflow.id),
            ..Default::default()
        })
        .await
        .unwrap();
    let driver = Driver::start().await;
    let browser = driver.browser();
    sign_in(browser, &server, &server.admin_key).await;
    wait_url(browser, "/ui/workflows").await;

    // A pending task offers cancel but not retry; cancelled, it offers retry.
    browser
        .goto(&server.at(&format!("/ui/tasks/{}", task.id)))
        .await
        .unwrap();
    wait_text(browser, "#task-state", "pending").await;
    assert!(
        browser.find(Locator::Css("#act-retry")).await.is_err(),
        "retry offered on a pending task"
    );
    click(browser, "#act-cancel").await;
    wait_text(browser, "#task-state", "cancelled").await;
    wait_text(browser, "#action-done", "cancel").await;
    assert!(
        browser.find(Locator::Css("#act-cancel")).await.is_err(),
        "cancel offered on a cancelled task"
    );
    click(browser, "#act-retry").await;
    wait_text(browser, "#task-state", "pending").await;
    assert_eq!(
        admin.tasks().get(task.id).await.unwrap().state,
        TaskState::Pending
    );
    // Reassign asks for a reason (a form), then sends it.
    click(browser, "summary#act-reassign").await;
    type_into(browser, "#act-reassign-form textarea", "wrong specialist").await;
    click(browser, "#act-reassign-form button").await;
    wait_text(browser, "#action-done", "reassign").await;
    assert_eq!(
        admin.tasks().get(task.id).await.unwrap().state,
        TaskState::Pending
    );

    // Output awaiting assessment: approve and request changes are offered;
    // requesting changes sends the feedback and the task back to pending.
    browser
        .goto(&server.at(&format!("/ui/tasks/{}", assess.id)))
        .await
        .unwrap();
    wait_text(browser, "#task-state", "output pending assessment").await;
    wait_css(browser, "#act-approve-output").await;
    click(browser, "summary#act-request-changes").await;
    type_into(
        browser,
        "#act-request-changes-form textarea",
        "add the tests",
    )
    .await;
    click(browser, "#act-request-changes-form button").await;
    wait_text(browser, "#action-done", "request changes").await;
    wait_text(browser, "#task-state", "pending").await;
    assert_eq!(
        admin.tasks().get(assess.id).await.unwrap().state,
        TaskState::Pending
    );

    // The workflow: cancel (after a confirmation), then redrive it from the form.
    browser
        .goto(&server.at(&format!("/ui/workflows/{}", workflow.id)))
        .await
        .unwrap();
    wait_text(browser, "#feed-state", "live").await;
    type_into(browser, "#action-reason", "wrong branch").await;
    click(browser, "#cancel-workflow").await;
    browser.accept_alert().await.unwrap();
    wait_text(browser, "#workflow-state", "cancelled").await;
    assert_eq!(
        admin
            .workflows()
            .get(workflow.id)
            .await
            .unwrap()
            .workflow
            .state,
        WorkflowState::Cancelled
    );
    click(browser, "#redrive summary").await;
    let name = wait_css(browser, "#redrive-name").await;
    name.clear().await.unwrap();
    type_into(browser, "#redrive-name", "Steered run, again").await;
    type_into(browser, "#redrive-reason", "branch fixed").await;
    click(browser, "#redrive-submit").await;
    click_text(browser, "[role=status] a", "open the new run").await;
    wait_text(browser, "h1", "Steered run, again").await;
    let url = wait_url(browser, "/ui/workflows/").await;
    let new_id: Uuid = url.rsplit('/').next().unwrap().parse().unwrap();
    assert_ne!(new_id, workflow.id);
    let redriven = admin.workflows().get(new_id).await.unwrap();
    assert_eq!(redriven.workflow.redrive_of, Some(workflow.id));
    driver.close().await;
}

#[tokio::test]
async fn playbooks_workspaces_and_fleet_act_from_the_browser() {
    let server = TestServer::start().await;
    let (playbook_id, workspace_id) = server.launch_fixtures("Old flow", "Files repo").await;
    let admin = server.admin();
    let environment = admin
        .environments()
        .create(
            &orchestrator_client::api::environments::CreateExecutionEnvironment {
                name: "Debian tools".into(),
                image: "debian:bookworm".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    admin
        .workers()
        .register(&orchestrator_client::api::RegisterWorker {
            name: "box-one".into(),
            agents: Some(vec![orchestrator_client::api::WorkerAgentSpec {
                name: "box-one-agent".into(),
                routing_tags: None,
                execution_mode: None,
            }]),
            ..Default::default()
        })
        .await
        .unwrap();
    let driver = Driver::start().await;
    let browser = driver.browser();
    sign_in(browser, &server, &server.admin_key).await;
    wait_url(browser, "/ui/workflows").await;

    // Playbooks: archive one; it shows archived and the API agrees.
    browser.goto(&server.at("/ui/playbooks")).await.unwrap();
    click(
        browser,
        &format!("tr[data-id='{playbook_id}'] button.archive"),
    )
    .await;
    wait_text(browser, "[role=status]", "Old flow archived").await;
    wait_text(browser, &format!("tr[data-id='{playbook_id}']"), "archived").await;
    assert!(admin.playbooks().get(playbook_id).await.unwrap().archived);

    // A workspace: set a memory entry, delete it; upload a file, download it.
    browser
        .goto(&server.at(&format!("/ui/workspaces/{workspace_id}")))
        .await
        .unwrap();
    wait_text(browser, "#memory", "No memory entries").await;
    type_into(browser, "#memory-key", "release").await;
    type_into(browser, "#memory-value", r#"{"train": 7}"#).await;
    click(browser, "#memory-save").await;
    wait_text(browser, "#memory tr[data-key=release]", r#"{"train":7}"#).await;
    let stored = admin.workspaces().get(workspace_id).await.unwrap();
    assert_eq!(stored.memory["release"], json!({ "train": 7 }));
    click(browser, "#memory tr[data-key=release] button").await;
    wait_text(browser, "#memory", "No memory entries").await;
    assert!(admin.workspaces().get(workspace_id).await.unwrap().memory["release"].is_null());

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "uploaded from the browser\n").unwrap();
    wait_css(browser, "#file-upload")
        .await
        .send_keys(path.to_str().unwrap())
        .await
        .unwrap();
    click(browser, "#file-upload-submit").await;
    wait_text(browser, "#files a.download", "notes.txt").await;
    // The download link serves the bytes to the cookie session.
    let body: Value = browser
        .execute_async(
            r#"const done = arguments[0];
               const href = document.querySelector('#files a.download').getAttribute('href');
               fetch(href, { credentials: 'same-origin' }).then(async (r) => done({ status: r.status, text: await r.text() }), (e) => done({ status: 0, text: String(e) }));"#,
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(body["status"], 200, "{body}");
    assert_eq!(body["text"], "uploaded from the browser\n");

    // The fleet: the environment with its image and posture, the worker.
    click(browser, "a[data-nav=fleet]").await;
    let row = format!("#environments tr[data-id='{}']", environment.id);
    wait_text(browser, &row, "debian:bookworm").await;
    wait_text(browser, &row, "unknown").await;
    wait_text(browser, "#workers", "box-one").await;
    wait_text(browser, "#agents", "box-one-agent").await;
    click(browser, &format!("{row} button[data-act=blocked]")).await;
    wait_text(browser, &format!("{row} td.support"), "blocked").await;
    assert_eq!(
        admin
            .environments()
            .get(environment.id)
            .await
            .unwrap()
            .support_status,
        Some(orchestrator_client::api::environments::SupportStatus::Blocked)
    );
    click(browser, &format!("{row} button[data-act=verify]")).await;
    wait_text(browser, "[role=status]", "Debian tools:").await;
    driver.close().await;
}

#[tokio::test]
async fn the_rail_pages_and_narrows_in_the_url() {
    let server = TestServer::start().await;
    let (playbook_id, workspace_id) = server.launch_fixtures("Many", "Main repo").await;
    let admin = server.admin();
    for n in 0..23 {
        admin
            .workflows()
            .create(&orchestrator_client::api::CreateWorkflow {
                playbook_id,
                workspace_id,
                name: format!("run {n:02}"),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    let driver = Driver::start().await;
    let browser = driver.browser();
    sign_in(browser, &server, &server.admin_key).await;
    wait_text(browser, "main", "Page 1 of 2 · 23 in all").await;
    click_text(browser, ".pager button", "Next").await;
    wait_url(browser, "page=2").await;
    wait_text(browser, "main", "Page 2 of 2 · 23 in all").await;
    let rows = browser
        .find_all(Locator::Css("#rail tbody tr"))
        .await
        .unwrap();
    assert_eq!(rows.len(), 3);
    // The page is a URL: opening it again shows the same page.
    browser.refresh().await.unwrap();
    wait_text(browser, "main", "Page 2 of 2").await;
    // Needs action only: none of these has a task needing a human.
    click(browser, "#rail-needs").await;
    wait_url(browser, "needs_action_only=true").await;
    wait_text(browser, "main", "No workflows here yet").await;
    driver.close().await;
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

/// Every page at 1280×800 and in a narrow window (no sideways scrolling),
/// and the workflow page in the dark theme, with no console errors. With
/// `ORCH_SCREENSHOTS=<dir>` it also saves each view there as a PNG (how
/// docs/screenshots is made).
#[tokio::test]
async fn every_page_renders_wide_narrow_and_dark() {
    let server = TestServer::start().await;
    let (playbook_id, workspace_id) = server.launch_fixtures("Release train", "Main repo").await;
    let admin = server.admin();
    let workflow = admin
        .workflows()
        .create(&orchestrator_client::api::CreateWorkflow {
            playbook_id,
            workspace_id,
            name: "Release 2.4".into(),
            parameters: Some([("ticket".to_owned(), "OPS-7".to_owned())].into()),
            ..Default::default()
        })
        .await
        .unwrap();
    for (title, column) in [
        ("Changelog", "inbox"),
        ("Migrate the schema", "active"),
        ("Tag the release", "done"),
    ] {
        admin
            .workflows()
            .create_work_item(
                workflow.id,
                &orchestrator_client::api::CreateWorkItem {
                    title: title.into(),
                    stage_name: Some("build".into()),
                    column_id: Some(column.into()),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    }
    let mut task_id = None;
    for title in [
        "Write the changelog",
        "Run the migrations",
        "Review the diff",
    ] {
        let task = admin
            .tasks()
            .create(&CreateTask {
                title: title.into(),
                task_type: "code".into(),
                workflow_id: Some(workflow.id),
                input: Some(json!({ "branch": "release/2.4" })),
                ..Default::default()
            })
            .await
            .unwrap();
        task_id.get_or_insert(task.id);
    }
    for operation in ["tool.git_checkout", "tool.run_tests", "llm.plan"] {
        ingest(&server, workflow.id, operation).await;
    }
    let environment = admin
        .environments()
        .create(
            &orchestrator_client::api::environments::CreateExecutionEnvironment {
                name: "Debian tools".into(),
                image: "debian:bookworm".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let _ = environment;
    admin
        .workers()
        .register(&orchestrator_client::api::RegisterWorker {
            name: "build-box".into(),
            routing_tags: Some(vec!["env:runner".into()]),
            agents: Some(vec![orchestrator_client::api::WorkerAgentSpec {
                name: "build-box-agent".into(),
                routing_tags: None,
                execution_mode: None,
            }]),
            ..Default::default()
        })
        .await
        .unwrap();

    let shots = std::env::var_os("ORCH_SCREENSHOTS").map(std::path::PathBuf::from);
    let driver = Driver::start().await;
    let browser = driver.browser();
    browser.goto(&server.at("/ui/signin")).await.unwrap();
    wait_css(browser, "#api-key").await;
    let shoot = |name: &'static str| {
        let shots = shots.clone();
        async move {
            if let Some(dir) = shots {
                // Relative times and fonts settle before the picture.
                tokio::time::sleep(Duration::from_millis(300)).await;
                let png = browser.screenshot().await.unwrap();
                std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
            }
        }
    };
    shoot("signin").await;
    submit_key(browser, &server.admin_key).await;
    wait_text(browser, "#rail", "Release 2.4").await;

    let pages: Vec<(&str, String, &str, &str)> = vec![
        ("rail", "/ui/workflows".into(), "#rail", "Release 2.4"),
        (
            "workflow",
            format!("/ui/workflows/{}", workflow.id),
            "#tasks",
            "Review the diff",
        ),
        (
            "task",
            format!("/ui/tasks/{}", task_id.unwrap()),
            "main h1",
            "Write the changelog",
        ),
        (
            "logs",
            format!("/ui/logs?workflow_id={}", workflow.id),
            "#log-rows",
            "tool.run_tests",
        ),
        (
            "launch",
            "/ui/launch".into(),
            "#launch-playbook",
            "Release train",
        ),
        ("catalog", "/ui/catalog".into(), ".cards", "Preview import"),
        (
            "playbooks",
            "/ui/playbooks".into(),
            "main table",
            "Release train",
        ),
        (
            "workspace",
            format!("/ui/workspaces/{workspace_id}"),
            "main h1",
            "Main repo",
        ),
        (
            "fleet",
            "/ui/fleet".into(),
            "#environments",
            "debian:bookworm",
        ),
    ];
    for (width, suffix) in [(1280u32, ""), (420u32, "narrow-")] {
        browser.set_window_size(width, 800).await.unwrap();
        for (name, path, css, text) in &pages {
            browser.goto(&server.at(path)).await.unwrap();
            wait_text(browser, css, text).await;
            // Nothing wider than the window: no sideways scrolling.
            wait_js(
                browser,
                "return document.documentElement.scrollWidth <= window.innerWidth + 1;",
                &format!("{path} fits {width} px"),
            )
            .await;
            if suffix.is_empty() || *name == "workflow" || *name == "rail" {
                let name = format!("{suffix}{name}");
                if let Some(dir) = &shots {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    let png = browser.screenshot().await.unwrap();
                    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
                }
            }
        }
    }

    // The dark theme follows the system setting.
    browser.set_window_size(1280, 800).await.unwrap();
    browser
        .issue_cmd(DevTools(json!({
            "cmd": "Emulation.setEmulatedMedia",
            "params": { "features": [{ "name": "prefers-color-scheme", "value": "dark" }] }
        })))
        .await
        .unwrap();
    browser
        .goto(&server.at(&format!("/ui/workflows/{}", workflow.id)))
        .await
        .unwrap();
    wait_text(browser, "#tasks", "Review the diff").await;
    let background: Value = browser
        .execute(
            "return getComputedStyle(document.body).backgroundColor;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(background, "rgb(15, 18, 22)", "the dark background");
    shoot("dark-workflow").await;
    driver.close().await;
}

#[tokio::test]
async fn schedules_are_created_with_a_preview_triggered_and_followed_from_the_browser() {
    let server = TestServer::start().await;
    let driver = Driver::start().await;
    let browser = driver.browser();
    sign_in(browser, &server, &server.admin_key).await;
    wait_url(browser, "/ui/workflows").await;

    // The form previews the next five fires in the zone as it is typed.
    browser.goto(&server.at("/ui/schedules")).await.unwrap();
    wait_text(browser, "#schedules", "No schedules yet").await;
    type_into(browser, "#new-name", "Paris nightly").await;
    type_into(browser, "#new-cron", "0 2 * * *").await;
    let zone = wait_css(browser, "#new-timezone").await;
    zone.clear().await.unwrap();
    zone.send_keys("Europe/Paris").await.unwrap();
    zone.send_keys(&fantoccini::key::Key::Tab.to_string())
        .await
        .unwrap();
    // Paris is at +01:00 or +02:00, never at UTC's +00:00.
    wait_text(browser, "#new-preview li", "T02:00:00+0").await;
    let started = Instant::now();
    let preview = loop {
        let text = wait_css(browser, "#new-preview")
            .await
            .text()
            .await
            .unwrap();
        if !text.contains("+00:00") || started.elapsed() > PATIENCE {
            break text;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(preview.matches("T02:00:00+0").count(), 5, "{preview}");
    assert!(!preview.contains("+00:00"), "{preview}");

    // A task target; created, the schedule's page opens.
    browser
        .find(Locator::Css("#new-target option[value=task]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    type_into(
        browser,
        "#new-task",
        r#"{"title": "Nightly report", "type": "code"}"#,
    )
    .await;
    click(browser, "#new-save").await;
    wait_url(browser, "/ui/schedules/").await;
    wait_text(browser, "main", "0 2 * * * (Europe/Paris)").await;

    // Trigger: a launched run linking to its task.
    click_text(browser, "main button", "Trigger").await;
    wait_text(browser, "[role=status]", "launched").await;
    click_text(browser, "#runs a", "task").await;
    wait_url(browser, "/ui/tasks/").await;
    wait_text(browser, "main", "Nightly report").await;

    // Back on the list: next fire and last outcome, and pause.
    browser.goto(&server.at("/ui/schedules")).await.unwrap();
    wait_text(browser, "#schedules", "launched").await;
    click_text(browser, "#schedules button", "Pause").await;
    wait_text(browser, "#schedules", "paused").await;
    let listed = server
        .admin()
        .schedules()
        .list(&Default::default(), Default::default())
        .await
        .unwrap();
    assert!(listed.items[0].paused);
    driver.close().await;
}
