//! `orch logs` and `orch events` against a real server: tail (lines and JSON
//! lines), follow across a server restart, query, get, export to a file,
//! stats and the event list.

use orchestrator_client::api::{LogCategory, LogLevel, NewLogEntry};
use orchestrator_server::ServerConfig;
use orchestrator_tests::TestServer;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

mod common;

use common::{ORCH, orch_with};

/// Runs `orch args...` against `url` with `key`, off the async runtime.
async fn orch(url: &str, key: &str, args: &[&str]) -> Output {
    let env = [("ORCH_URL", url), ("ORCH_API_KEY", key), ("NO_COLOR", "1")];
    let output = orch_with(args, &env).await;
    assert!(
        output.status.success(),
        "orch {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn entry(operation: &str) -> NewLogEntry {
    NewLogEntry::new(LogCategory::Tool, operation)
}

#[tokio::test]
async fn logs_commands_print_query_export_and_count() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let mut failing = NewLogEntry::new(LogCategory::Llm, "llm.chat");
    failing.level = Some(LogLevel::Error);
    failing.error = Some(serde_json::json!({"message": "model timed out"}));
    admin
        .logs()
        .ingest(vec![entry("tool.first"), failing, entry("tool.last")])
        .await
        .unwrap();
    let (url, key) = (server.url.as_str(), server.admin_key.as_str());

    // tail: readable lines, oldest first, no colour codes with NO_COLOR.
    let text = stdout(&orch(url, key, &["logs", "tail", "--category", "tool"]).await);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].contains("INFO") && lines[0].contains("tool.first"),
        "{text}"
    );
    assert!(lines[1].contains("tool.last"));
    assert!(!text.contains('\u{1b}'), "no ANSI codes: {text:?}");
    // -n 0: no old rows at all.
    let none = stdout(&orch(url, key, &["logs", "tail", "-n", "0"]).await);
    assert_eq!(none, "", "tail -n 0 printed old rows");
    let errors = stdout(&orch(url, key, &["logs", "tail", "--level", "error"]).await);
    assert!(
        errors.contains("ERROR") && errors.contains("model timed out"),
        "{errors}"
    );

    // -o json: one JSON object per line.
    let json_lines = stdout(
        &orch(
            url,
            key,
            &["logs", "tail", "--source", "runtime", "-o", "json"],
        )
        .await,
    );
    let rows: Vec<Value> = json_lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["operation"], "tool.first");
    let id = rows[1]["id"].as_str().unwrap().to_owned();

    // query, get, stats.
    let page: Value = serde_json::from_str(&stdout(
        &orch(
            url,
            key,
            &["logs", "query", "--operation", "llm.chat", "-o", "json"],
        )
        .await,
    ))
    .unwrap();
    assert_eq!(page["items"].as_array().unwrap().len(), 1);
    let got: Value = serde_json::from_str(&stdout(
        &orch(url, key, &["logs", "get", &id, "-o", "json"]).await,
    ))
    .unwrap();
    assert_eq!(got["operation"], "llm.chat");
    let stats: Value = serde_json::from_str(&stdout(
        &orch(
            url,
            key,
            &[
                "logs",
                "stats",
                "--group-by",
                "category",
                "--source",
                "runtime",
                "-o",
                "json",
            ],
        )
        .await,
    ))
    .unwrap();
    assert_eq!(stats["total"], 3);

    // export to a file.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("logs.csv");
    orch(
        url,
        key,
        &[
            "logs",
            "export",
            "--format",
            "csv",
            "--order",
            "asc",
            "--source",
            "runtime",
            "--out",
            file.to_str().unwrap(),
        ],
    )
    .await;
    let csv = std::fs::read_to_string(&file).unwrap();
    let csv_lines: Vec<&str> = csv.lines().collect();
    assert!(csv_lines[0].starts_with("id,created_at,"));
    assert_eq!(csv_lines.len(), 4, "{csv}");
    assert!(csv_lines[1].contains("tool.first"));

    // events list.
    let events: Value = serde_json::from_str(&stdout(
        &orch(url, key, &["events", "list", "-o", "json"]).await,
    ))
    .unwrap();
    assert!(events["items"].is_array());
}

/// Reads lines from the child's stdout on a thread; `next` waits up to 10 s.
struct Lines(std::sync::mpsc::Receiver<String>);

impl Lines {
    fn next(&self) -> String {
        self.0
            .recv_timeout(Duration::from_secs(10))
            .expect("a line within 10 s")
    }
}

// Multi-threaded: the test blocks on the child's output while the server,
// on the same runtime, keeps serving it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tail_follow_prints_new_rows_and_survives_a_server_restart() {
    let mut server = TestServer::start().await;
    let addr = server.handle().local_addr();
    server
        .admin()
        .logs()
        .ingest(vec![entry("old.row")])
        .await
        .unwrap();

    let mut child = Command::new(ORCH)
        .args(["logs", "tail", "-f", "--category", "tool"])
        .env("ORCH_URL", &server.url)
        .env("ORCH_API_KEY", &server.admin_key)
        .env("ORCH_CONFIG", "/nonexistent/orch-config.json")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let lines = Lines(rx);
    assert!(lines.next().contains("old.row"));

    server
        .admin()
        .logs()
        .ingest(vec![entry("live.row")])
        .await
        .unwrap();
    let line = lines.next();
    assert!(line.contains("live.row"), "{line}");

    // Restart the server on the same address and database; tail resumes.
    let database_url = server.database_url();
    server.stop().await;
    let mut config = ServerConfig::new(addr, database_url);
    config.rate_limit_per_minute = 0;
    config.core.max_connections = 5;
    let restarted = orchestrator_server::start(config).await.unwrap();
    let client = orchestrator_client::Client::new(format!("http://{addr}"))
        .unwrap()
        .with_api_key(&server.admin_key);
    client
        .logs()
        .ingest(vec![entry("after.restart")])
        .await
        .unwrap();
    let line = lines.next();
    assert!(line.contains("after.restart"), "{line}");

    child.kill().unwrap();
    let _ = child.wait();
    restarted.shutdown().await;
}

/// Tasks have UUIDv7 ids, whose first 8 hex digits are a timestamp: two
/// tasks created together share them. `logs tail` shortens ids to their
/// last 8 hex digits, which differ.
#[tokio::test]
async fn tail_shortens_ids_to_the_part_that_differs() {
    use orchestrator_client::api::CreateTask;
    let server = TestServer::start().await;
    let admin = server.admin();
    let mut ids = Vec::new();
    for title in ["first", "second"] {
        let task = admin
            .tasks()
            .create(&CreateTask {
                title: title.into(),
                task_type: "code".into(),
                ..Default::default()
            })
            .await
            .unwrap();
        let mut log = entry(&format!("tool.{title}"));
        log.task_id = Some(task.id);
        admin.logs().ingest(vec![log]).await.unwrap();
        ids.push(task.id.simple().to_string());
    }
    assert_eq!(
        ids[0][..8],
        ids[1][..8],
        "UUIDv7 ids created together share their first 8 hex digits"
    );
    let (url, key) = (server.url.as_str(), server.admin_key.as_str());
    let text = stdout(&orch(url, key, &["logs", "tail", "--category", "tool"]).await);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    for (line, id) in lines.iter().zip(&ids) {
        let short = &id[id.len() - 8..];
        assert!(
            line.contains(&format!("task={short}")),
            "{line} should show task={short}"
        );
    }
    assert_ne!(ids[0][24..], ids[1][24..]);
}
