//! `orch db check` on PostgreSQL and `amcheck` (issue 33, Operations): a
//! database without the extension checks clean and says its indexes were
//! not checked; with `CREATE EXTENSION amcheck` every B-tree index is
//! checked; and a damaged index fails the check, naming the index.
//!
//! The damage: the test server is shared, so the test cannot overwrite a
//! page in the server's files (that needs its data directory and evicting
//! the page from shared buffers, a restart). It breaks an index the way
//! amcheck sees a damaged page instead: a B-tree built with an operator
//! class whose comparison function is then replaced by the reverse order,
//! so the keys on every page are out of order. Everything happens in a
//! database the test creates and drops.
//!
//! Needs a PostgreSQL server where the test's user is a superuser
//! (`ORCH_TEST_DATABASE_URL=postgres://...`); without one it says so and passes.

mod common;

use common::pg::PgDatabase;
use common::served::{orch, serve, stderr, stdout_json};
use serde_json::{Value, json};
use sqlx::Connection;

/// The `indexes` entry of a check report.
fn indexes(report: &Value) -> &Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "indexes")
        .unwrap_or_else(|| panic!("an indexes check: {report}"))
}

/// `orch db check --database-url URL -o json`.
async fn check(url: &str) -> std::process::Output {
    orch(&["db", "check", "--database-url", url, "-o", "json"]).await
}

#[tokio::test]
async fn check_uses_amcheck_when_installed_and_reports_a_damaged_index() {
    let Some(base) = std::env::var(orchestrator_tests::TEST_DATABASE_ENV)
        .ok()
        .filter(|u| u.starts_with("postgres"))
    else {
        eprintln!("skipped: the PostgreSQL check needs ORCH_TEST_DATABASE_URL=postgres://...");
        return;
    };
    let db = PgDatabase::create(&base).await;
    let key = orchestrator_tests::random_key("admin");
    let server = serve(["--database-url", &db.url], &key, true).await;
    for i in 0..50 {
        let body = json!({ "title": format!("checked {i}"), "type": "code" });
        server.ok("POST", "/tasks", body).await;
    }
    server.stop().await;

    // Without amcheck: the rest passes, and the report says why indexes
    // were not checked.
    let report = stdout_json(&check(&db.url).await);
    assert_eq!(report["ok"], true, "{report}");
    let skipped = indexes(&report);
    assert_eq!(skipped["ok"], true);
    assert!(
        skipped["detail"]
            .as_str()
            .unwrap()
            .contains("amcheck extension is not installed"),
        "{report}"
    );
    let names: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["connect", "schema", "tables", "indexes"]);

    // With amcheck: every B-tree index of orch's schema is checked.
    let mut conn = sqlx::PgConnection::connect(&db.url).await.unwrap();
    sqlx::raw_sql("CREATE EXTENSION amcheck")
        .execute(&mut conn)
        .await
        .unwrap();
    let (btrees,): (i64,) = sqlx::query_as(
        "SELECT COUNT(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
         JOIN pg_am a ON a.oid = c.relam \
         WHERE a.amname = 'btree' AND c.relnamespace = current_schema()::regnamespace",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert!(btrees > 20, "{btrees} B-tree indexes");
    let report = stdout_json(&check(&db.url).await);
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(
        indexes(&report)["detail"],
        format!("amcheck bt_index_check passed on {btrees} B-tree indexes"),
        "{report}"
    );

    // A damaged index: built in order, then its order reversed.
    sqlx::raw_sql(
        "CREATE TABLE damaged (n int4 NOT NULL);
         INSERT INTO damaged SELECT g FROM generate_series(1, 5000) g;
         CREATE FUNCTION damaged_cmp(int4, int4) RETURNS int4 LANGUAGE sql IMMUTABLE
             AS 'SELECT btint4cmp($1, $2)';
         CREATE OPERATOR CLASS damaged_ops FOR TYPE int4 USING btree AS
             OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
             FUNCTION 1 damaged_cmp(int4, int4);
         CREATE INDEX damaged_n ON damaged (n damaged_ops);
         CREATE OR REPLACE FUNCTION damaged_cmp(int4, int4) RETURNS int4 LANGUAGE sql
             IMMUTABLE AS 'SELECT btint4cmp($2, $1)';",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    conn.close().await.unwrap();
    let failed = check(&db.url).await;
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    let report: Value = serde_json::from_slice(&failed.stdout).expect("the report still prints");
    assert_eq!(report["ok"], false, "{report}");
    let damaged = indexes(&report);
    assert_eq!(damaged["ok"], false, "{report}");
    assert!(
        damaged["detail"].as_str().unwrap().contains("damaged_n"),
        "{report}"
    );
    // The other checks still ran and passed.
    for name in ["connect", "schema", "tables"] {
        let entry = report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap();
        assert_eq!(entry["ok"], true, "{report}");
    }
    assert!(
        stderr(&failed).contains("failed its check"),
        "{}",
        stderr(&failed)
    );
    db.drop_it().await;
}
