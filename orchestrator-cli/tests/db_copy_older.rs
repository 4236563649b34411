//! `orch db copy` from a SQLite file an older orch wrote (issue 33,
//! Operations): the file is at an earlier migration, with rows in it; the
//! copy migrates the PostgreSQL target to the file's version, copies, then
//! applies the remaining migrations there, and leaves the file byte for
//! byte as it was. `orch serve` on the target then serves the rows and
//! claims them (the claim needs the tables of the later migrations).
//!
//! The older file is made the way an older orch made it: the first
//! migrations only (sqlx's migrator stopping at [`OLD_VERSION`]), then rows
//! written by a current server copied into it column by column (the columns
//! the old schema has).
//!
//! Needs a PostgreSQL server (`ORCH_TEST_DATABASE_URL=postgres://...`);
//! without one the test says so and passes.

mod common;

use common::pg::PgDatabase;
use common::served::{agent, orch, serve, stderr, stdout_json};
use reqwest::StatusCode;
use serde_json::json;
use sqlx::{ConnectOptions, Connection};
use std::path::Path;

/// The migration the older file stops at: before flow limits (0020), whose
/// tables and triggers every claim now goes through.
const OLD_VERSION: i64 = 19;

/// The tables whose rows move into the older file.
const TABLES: [&str; 2] = ["tenants", "tasks"];

/// The applied migrations of the SQLite file at `path`.
async fn versions(path: &Path) -> Vec<i64> {
    let mut conn = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .connect()
        .await
        .unwrap();
    let rows: Vec<(i64,)> = sqlx::query_as("SELECT version FROM _sqlx_migrations ORDER BY 1")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    rows.into_iter().map(|r| r.0).collect()
}

#[tokio::test]
async fn an_older_sqlite_file_is_copied_at_its_version_and_the_target_migrated_after() {
    let Some(base) = std::env::var(orchestrator_tests::TEST_DATABASE_ENV)
        .ok()
        .filter(|u| u.starts_with("postgres"))
    else {
        eprintln!("skipped: orch db copy needs ORCH_TEST_DATABASE_URL=postgres://...");
        return;
    };
    let dir = tempfile::tempdir().unwrap();

    // Rows written by a current server.
    let current = dir.path().join("current");
    let current_arg = current.display().to_string();
    let key = orchestrator_tests::random_key("admin");
    let server = serve(["--data-dir", &current_arg], &key, true).await;
    let mut ids = Vec::new();
    for (title, priority) in [("first", "low"), ("urgent", "high"), ("last", "normal")] {
        let task = server
            .ok(
                "POST",
                "/tasks",
                json!({ "title": title, "type": "code", "priority": priority,
                    "input": { "title": title } }),
            )
            .await;
        ids.push(task["id"].as_str().unwrap().to_owned());
    }
    server.stop().await;

    // The older file: migrations up to OLD_VERSION, then those rows.
    let old = dir.path().join("old.db");
    let mut conn = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(&old)
        .create_if_missing(true)
        .foreign_keys(true)
        .connect()
        .await
        .unwrap();
    let migrations =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../orchestrator-core/migrations/sqlite");
    let migrator = sqlx::migrate::Migrator::new(migrations).await.unwrap();
    assert!(
        migrator.iter().any(|m| m.version > OLD_VERSION),
        "this orch has migrations after {OLD_VERSION}"
    );
    migrator.run_to(OLD_VERSION, &mut conn).await.unwrap();
    let attach = format!(
        "ATTACH DATABASE '{}' AS current",
        current.join("orch.db").display()
    );
    sqlx::raw_sql(sqlx::AssertSqlSafe(attach))
        .execute(&mut conn)
        .await
        .unwrap();
    for table in TABLES {
        let columns: Vec<(String,)> = sqlx::query_as("SELECT name FROM pragma_table_info($1)")
            .bind(table)
            .fetch_all(&mut conn)
            .await
            .unwrap();
        let columns = columns
            .iter()
            .map(|c| format!("\"{}\"", c.0))
            .collect::<Vec<_>>()
            .join(", ");
        let sql =
            format!("INSERT INTO main.{table} ({columns}) SELECT {columns} FROM current.{table}");
        let copied = sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
            .execute(&mut conn)
            .await
            .unwrap();
        assert!(copied.rows_affected() > 0, "{table}");
    }
    sqlx::raw_sql("DETACH DATABASE current")
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    let old_versions = versions(&old).await;
    assert_eq!(old_versions.last(), Some(&OLD_VERSION));
    let before = std::fs::read(&old).unwrap();

    // `orch db check` on it lists what is pending and passes.
    let from = format!("sqlite://{}", old.display());
    let checked = stdout_json(&orch(&["db", "check", "--database-url", &from, "-o", "json"]).await);
    assert_eq!(checked["ok"], true, "{checked}");
    let pending: Vec<i64> = checked["schema"]["pending"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert!(!pending.is_empty() && pending.iter().all(|v| *v > OLD_VERSION));

    // The copy.
    let target = PgDatabase::create(&base).await;
    let copied = orch(&[
        "db",
        "copy",
        "--from",
        &from,
        "--to",
        &target.url,
        "-o",
        "json",
    ])
    .await;
    let report = stdout_json(&copied);
    assert_eq!(report["schema_version"], OLD_VERSION, "{report}");
    assert_eq!(report["migrated_after"], json!(pending), "{report}");
    assert!(
        stderr(&copied).contains("source file is unchanged"),
        "{}",
        stderr(&copied)
    );
    let tasks = report["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["table"] == "tasks")
        .unwrap_or_else(|| panic!("tasks copied: {report}"));
    assert_eq!(tasks["rows"], 3);

    // The source is as it was: same bytes, same migrations.
    assert!(
        std::fs::read(&old).unwrap() == before,
        "the source file changed"
    );
    assert_eq!(versions(&old).await, old_versions);

    // The target has every migration, and checks clean.
    let checked =
        stdout_json(&orch(&["db", "check", "--database-url", &target.url, "-o", "json"]).await);
    assert_eq!(checked["ok"], true, "{checked}");
    assert_eq!(
        checked["schema"]["version"],
        checked["schema"]["latest_known"]
    );
    assert!(
        checked["schema"]["pending"].as_array().unwrap().is_empty(),
        "{checked}"
    );

    // Served: the rows read back, and the claim (through the later
    // migrations' tables) takes the high-priority task first.
    let moved = serve(["--database-url", &target.url], &key, true).await;
    for (id, title) in ids.iter().zip(["first", "urgent", "last"]) {
        let task = moved.ok("GET", &format!("/tasks/{id}"), json!({})).await;
        assert_eq!(task["title"], title);
        assert_eq!(task["state"], "pending");
        assert_eq!(task["input"]["title"], title);
    }
    let worker = agent(&moved, "after-copy").await;
    let (status, claim) = moved
        .call_as(
            &worker.1,
            "POST",
            "/tasks/claim",
            json!({ "agent_id": worker.0 }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{claim}");
    assert_eq!(claim["data"]["id"], ids[1].as_str(), "{claim}");
    moved.stop().await;
    target.drop_it().await;
}
