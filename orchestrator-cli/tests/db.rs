//! `orch db backup | restore | check | copy` through the real binary, on
//! databases that real `orch serve` children wrote (issue 33, Operations).
//!
//! Backup, restore and check work on SQLite files whichever backend the
//! suite runs on; with `ORCH_TEST_DATABASE_URL` set, `check` also runs on a
//! PostgreSQL database and `copy` moves a SQLite database into a PostgreSQL
//! database this test creates and drops (without it the copy test has no
//! PostgreSQL server to copy to, and says so).

mod common;

use common::served::{orch, serve, stderr, stdout_json};
use serde_json::{Value, json};
use sqlx::Connection;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// `orch db restore --data-dir DIR --from FROM EXTRA...`.
fn restore_args<'a>(dir: &'a str, from: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["db", "restore", "--data-dir", dir, "--from", from];
    args.extend_from_slice(extra);
    args
}

/// Runs `orch args`, expecting exit `code` and `says` in its error.
async fn refused(args: &[&str], code: i32, says: &str) {
    let output = orch(args).await;
    assert_eq!(output.status.code(), Some(code), "{}", stderr(&output));
    assert!(stderr(&output).contains(says), "{}", stderr(&output));
}

#[tokio::test]
async fn a_backup_taken_while_writing_restores_into_a_fresh_data_dir_and_serves_the_same_data() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live");
    let live_arg = live.display().to_string();
    let key = orchestrator_tests::random_key("admin");
    let server = Arc::new(serve(["--data-dir", &live_arg], &key, true).await);
    for i in 0..20 {
        server
            .ok(
                "POST",
                "/tasks",
                json!({ "title": format!("before {i}"), "type": "code" }),
            )
            .await;
    }

    // A writer keeps creating tasks while the backup runs.
    let stop = Arc::new(AtomicBool::new(false));
    let acknowledged = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let writer = tokio::spawn({
        let (server, stop, acknowledged) = (server.clone(), stop.clone(), acknowledged.clone());
        async move {
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                let body = json!({ "title": format!("during {i}"), "type": "code" });
                let id = server.ok("POST", "/tasks", body).await["id"].clone();
                acknowledged
                    .lock()
                    .unwrap()
                    .push(id.as_str().unwrap().to_owned());
                i += 1;
            }
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before_backup = acknowledged.lock().unwrap().clone();
    let backup = dir.path().join("orch-backup.db");
    let backup_arg = backup.display().to_string();
    let made = orch(&[
        "db",
        "backup",
        "--data-dir",
        &live_arg,
        "--to",
        &backup_arg,
        "-o",
        "json",
    ])
    .await;
    let report = stdout_json(&made);
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::SeqCst);
    writer.await.unwrap();
    assert!(
        !before_backup.is_empty(),
        "the writer wrote during the backup"
    );
    assert!(
        acknowledged.lock().unwrap().len() > before_backup.len(),
        "the writer went on while the backup ran"
    );
    assert_eq!(report["backup"], backup_arg.as_str());
    assert!(report["bytes"].as_u64().unwrap() > 0);
    #[cfg(unix)]
    assert_eq!(
        common::served::mode(&backup),
        0o600,
        "the backup holds secrets"
    );

    // A second backup to the same name is refused (exit 5) unless asked.
    refused(
        &["db", "backup", "--data-dir", &live_arg, "--to", &backup_arg],
        5,
        "--overwrite",
    )
    .await;

    // The backup checks clean.
    let checked = orch(&[
        "db",
        "check",
        "--database-url",
        &format!("sqlite://{backup_arg}"),
        "-o",
        "json",
    ])
    .await;
    assert_eq!(stdout_json(&checked)["ok"], true);

    // Restore into a fresh data directory and serve it, without the
    // bootstrap key: the key comes from the backup.
    let restored = dir.path().join("restored");
    let restored_arg = restored.display().to_string();
    let done = orch(&restore_args(&restored_arg, &backup_arg, &["-o", "json"])).await;
    let done = stdout_json(&done);
    assert_eq!(done["replaced"], false);
    #[cfg(unix)]
    {
        assert_eq!(common::served::mode(&restored.join("orch.db")), 0o600);
        assert_eq!(common::served::mode(&restored), 0o700);
    }
    let second = serve(["--data-dir", &restored_arg], &key, false).await;
    let tasks = second.ok("GET", "/tasks?per_page=100", json!({})).await;
    let tasks = tasks.as_array().unwrap();
    let ids: Vec<&str> = tasks.iter().map(|t| t["id"].as_str().unwrap()).collect();
    // Every task acknowledged before the backup reads back (one by one: a
    // fast writer makes more than a page of them).
    for id in &before_backup {
        let restored = second.ok("GET", &format!("/tasks/{id}"), json!({})).await;
        assert_eq!(
            restored["id"],
            id.as_str(),
            "task {id}, acknowledged before the backup, was restored"
        );
    }
    // Each restored task reads as the live server reads it.
    for id in ids.iter().take(30) {
        let there = second.ok("GET", &format!("/tasks/{id}"), json!({})).await;
        let here = server.ok("GET", &format!("/tasks/{id}"), json!({})).await;
        assert_eq!(there, here, "task {id}");
    }

    // A restore over a served database is refused (exit 5), even with --replace.
    refused(
        &restore_args(&restored_arg, &backup_arg, &["--replace"]),
        5,
        "stop it first",
    )
    .await;
    second.stop().await;
    // Stopped: refused without --replace, done with it.
    refused(
        &restore_args(&restored_arg, &backup_arg, &[]),
        5,
        "--replace",
    )
    .await;
    let done = orch(&restore_args(
        &restored_arg,
        &backup_arg,
        &["--replace", "-o", "json"],
    ))
    .await;
    assert_eq!(stdout_json(&done)["replaced"], true);

    // Only orch databases are restored.
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not a database at all").unwrap();
    refused(
        &restore_args(&restored_arg, &text.display().to_string(), &["--replace"]),
        1,
        "not a SQLite database",
    )
    .await;
    let other = dir.path().join("other.db");
    let mut conn =
        sqlx::SqliteConnection::connect(&format!("sqlite://{}?mode=rwc", other.display()))
            .await
            .unwrap();
    sqlx::query("CREATE TABLE notes (body TEXT)")
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    refused(
        &restore_args(&restored_arg, &other.display().to_string(), &["--replace"]),
        1,
        "not an orch database",
    )
    .await;

    // PostgreSQL is backed up with its own tools.
    refused(
        &[
            "db",
            "backup",
            "--database-url",
            "postgres://nobody@127.0.0.1:1/none",
            "--to",
            &backup_arg,
        ],
        1,
        "pg_dump",
    )
    .await;

    Arc::into_inner(server).unwrap().stop().await;
}

#[tokio::test]
async fn check_passes_good_databases_and_fails_a_corrupted_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data_arg = data.display().to_string();
    let key = orchestrator_tests::random_key("admin");
    let server = serve(["--data-dir", &data_arg], &key, true).await;
    for i in 0..200 {
        let body = json!({ "title": format!("task {i} {}", "x".repeat(200)), "type": "code" });
        server.ok("POST", "/tasks", body).await;
    }
    // Checked while it serves.
    let checked = stdout_json(&orch(&["db", "check", "--data-dir", &data_arg, "-o", "json"]).await);
    assert_eq!(checked["ok"], true, "{checked}");
    assert_eq!(checked["backend"], "sqlite");
    let names: Vec<&str> = checked["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["integrity", "foreign keys", "schema"]);
    assert!(checked["schema"]["pending"].as_array().unwrap().is_empty());
    assert_eq!(
        checked["schema"]["version"],
        checked["schema"]["latest_known"]
    );

    // The same database in the suite's backend (PostgreSQL when configured).
    let mut suite = orchestrator_tests::TestServer::start().await;
    suite.stop().await;
    let url = suite.database_url();
    let checked = stdout_json(&orch(&["db", "check", "--database-url", &url, "-o", "json"]).await);
    assert_eq!(checked["ok"], true, "{checked}");
    assert_eq!(checked["backend"], orchestrator_tests::backend());

    // A copy with damaged pages fails, exit 1, naming the integrity check.
    let copy = dir.path().join("copy.db");
    let copy_arg = copy.display().to_string();
    stdout_json(
        &orch(&[
            "db",
            "backup",
            "--data-dir",
            &data_arg,
            "--to",
            &copy_arg,
            "-o",
            "json",
        ])
        .await,
    );
    server.stop().await;
    let mut bytes = std::fs::read(&copy).unwrap();
    let page = u16::from_be_bytes([bytes[16], bytes[17]]) as usize;
    let pages = bytes.len() / page;
    assert!(pages > 10, "{pages} pages");
    for p in 2..pages {
        let at = p * page + page / 2;
        bytes[at..at + 64].fill(0xA5);
    }
    std::fs::write(&copy, &bytes).unwrap();
    let failed = orch(&[
        "db",
        "check",
        "--database-url",
        &format!("sqlite://{copy_arg}"),
        "-o",
        "json",
    ])
    .await;
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    let report: Value = serde_json::from_slice(&failed.stdout).expect("the report still prints");
    assert_eq!(report["ok"], false);
    let integrity = &report["checks"][0];
    assert_eq!(integrity["name"], "integrity");
    assert_eq!(integrity["ok"], false, "{report}");
    assert!(
        stderr(&failed).contains("failed its check"),
        "{}",
        stderr(&failed)
    );

    // A file that is not there is an error, not a new database.
    let missing = dir.path().join("missing.db");
    let failed = orch(&[
        "db",
        "check",
        "--database-url",
        &format!("sqlite://{}", missing.display()),
    ])
    .await;
    assert_eq!(failed.status.code(), Some(1));
    assert!(!missing.exists(), "check created a database");
}
