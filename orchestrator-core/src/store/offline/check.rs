//! `orch db check`: the engine's own integrity check, the schema version
//! against this binary's migrations, and what is pending.
//!
//! SQLite: `PRAGMA integrity_check` (or `quick_check`, which skips the
//! index-to-table cross-check) and `PRAGMA foreign_key_check`. PostgreSQL
//! has no whole-database check of its own: the check reads every table
//! (which fails on a page the server cannot read, and verifies page
//! checksums when the cluster has them on), runs `amcheck`'s
//! `bt_index_check` on every B-tree index when that extension is installed
//! in the database, and says so when it is not.

use super::schema::SchemaStatus;
use super::{Context, Result, is_postgres, open_sqlite, sqlite_only};
use serde::Serialize;
use sqlx::{Connection, PgConnection, SqliteConnection};

/// One thing checked.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// What was checked (`open`, `integrity`, `foreign keys`, `schema`, ...).
    pub name: &'static str,
    /// Whether it passed.
    pub ok: bool,
    /// What was found: the check that ran when it passed, the problem (or
    /// the first lines of it) when it did not.
    pub detail: String,
}

/// Everything `orch db check` found.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// `sqlite` or `postgres`.
    pub backend: &'static str,
    /// Whether every check passed.
    pub ok: bool,
    /// The checks in the order they ran; a check that could not run (the
    /// database would not open) ends the list.
    pub checks: Vec<Check>,
    /// The schema, when it could be read.
    pub schema: Option<SchemaStatus>,
}

impl CheckReport {
    fn new(backend: &'static str) -> Self {
        Self {
            backend,
            ok: true,
            checks: Vec::new(),
            schema: None,
        }
    }

    fn add(&mut self, name: &'static str, ok: bool, detail: impl Into<String>) {
        self.ok &= ok;
        self.checks.push(Check {
            name,
            ok,
            detail: detail.into(),
        });
    }

    fn schema(&mut self, schema: Result<Option<SchemaStatus>>) {
        match schema {
            Ok(Some(status)) => {
                let problem = status.problem();
                self.add(
                    "schema",
                    problem.is_none(),
                    problem.unwrap_or_else(|| status.summary()),
                );
                self.schema = Some(status);
            }
            Ok(None) => self.add("schema", false, super::schema::not_orch().to_string()),
            Err(e) => self.add("schema", false, e.to_string()),
        }
    }
}

/// Checks the database of `database_url`; `quick` picks SQLite's quicker
/// check. A problem found is in the report (`ok: false`); an `Err` means
/// the check could not be made at all (a wrong URL).
pub async fn check(database_url: &str, quick: bool) -> Result<CheckReport> {
    if is_postgres(database_url) {
        return Ok(check_postgres(database_url).await);
    }
    let path = sqlite_only(database_url, "check", "")?;
    let mut report = CheckReport::new("sqlite");
    let mut conn = match open_sqlite(&path).await {
        Ok(conn) => conn,
        Err(e) => {
            report.add("open", false, e.to_string());
            return Ok(report);
        }
    };
    let pragma = if quick {
        "PRAGMA quick_check"
    } else {
        "PRAGMA integrity_check"
    };
    let found: std::result::Result<Vec<(String,)>, _> =
        sqlx::query_as(pragma).fetch_all(&mut conn).await;
    match found {
        Ok(rows) if rows.len() == 1 && rows[0].0 == "ok" => report.add("integrity", true, pragma),
        Ok(rows) => {
            let lines: Vec<String> = rows.into_iter().take(10).map(|r| r.0).collect();
            report.add("integrity", false, lines.join("; "));
        }
        Err(e) => report.add("integrity", false, e.to_string()),
    }
    sqlite_foreign_keys(&mut conn, &mut report).await;
    let schema = SchemaStatus::sqlite(&mut conn).await.map(Some);
    report.schema(schema);
    let _ = conn.close().await;
    Ok(report)
}

async fn sqlite_foreign_keys(conn: &mut SqliteConnection, report: &mut CheckReport) {
    let found: std::result::Result<Vec<(String,)>, _> =
        sqlx::query_as("SELECT \"table\" FROM pragma_foreign_key_check")
            .fetch_all(&mut *conn)
            .await;
    match found {
        Ok(rows) if rows.is_empty() => report.add("foreign keys", true, "no dangling references"),
        Ok(rows) => {
            let mut tables: Vec<String> = rows.into_iter().map(|r| r.0).collect();
            let count = tables.len();
            tables.dedup();
            report.add(
                "foreign keys",
                false,
                format!("{count} rows name missing rows (in {})", tables.join(", ")),
            );
        }
        Err(e) => report.add("foreign keys", false, e.to_string()),
    }
}

async fn check_postgres(url: &str) -> CheckReport {
    let mut report = CheckReport::new("postgres");
    let mut conn = match PgConnection::connect(url).await {
        Ok(conn) => conn,
        Err(e) => {
            report.add("connect", false, e.to_string());
            return report;
        }
    };
    let version: std::result::Result<(String,), _> =
        sqlx::query_as("SELECT current_setting('server_version')")
            .fetch_one(&mut conn)
            .await;
    match version {
        Ok((version,)) => report.add("connect", true, format!("PostgreSQL {version}")),
        Err(e) => report.add("connect", false, e.to_string()),
    }
    let schema = SchemaStatus::postgres(&mut conn).await;
    report.schema(schema);
    match read_every_table(&mut conn).await {
        Ok(detail) => report.add("tables", true, detail),
        Err(e) => report.add("tables", false, e.to_string()),
    }
    match check_indexes(&mut conn).await {
        Ok(Some(count)) => report.add(
            "indexes",
            true,
            format!("amcheck bt_index_check passed on {count} B-tree indexes"),
        ),
        Ok(None) => report.add(
            "indexes",
            true,
            "not checked: the amcheck extension is not installed in this database \
             (CREATE EXTENSION amcheck, as a superuser, turns this check on)",
        ),
        Err(e) => report.add("indexes", false, e.to_string()),
    }
    let _ = conn.close().await;
    report
}

/// Reads every row of every table of the current schema.
async fn read_every_table(conn: &mut PgConnection) -> Result<String> {
    let tables: Vec<(String,)> = sqlx::query_as(
        "SELECT table_name::text FROM information_schema.tables \
         WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1",
    )
    .fetch_all(&mut *conn)
    .await
    .context(|| "cannot list the tables".into())?;
    let mut rows = 0i64;
    for (table,) in &tables {
        let sql = format!("SELECT COUNT(*) FROM {}", super::copy::quote(table));
        let (count,): (i64,) = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .fetch_one(&mut *conn)
            .await
            .context(|| format!("cannot read table {table}"))?;
        rows += count;
    }
    let (checksums,): (String,) = sqlx::query_as("SELECT current_setting('data_checksums')")
        .fetch_one(&mut *conn)
        .await
        .context(|| "cannot read data_checksums".into())?;
    Ok(format!(
        "read {rows} rows of {} tables (page checksums {})",
        tables.len(),
        if checksums == "on" {
            "verified"
        } else {
            "off in this cluster"
        }
    ))
}

/// `bt_index_check` on every B-tree index of the current schema; `None`
/// when amcheck is not installed.
async fn check_indexes(conn: &mut PgConnection) -> Result<Option<usize>> {
    let (installed,): (bool,) =
        sqlx::query_as("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'amcheck')")
            .fetch_one(&mut *conn)
            .await
            .context(|| "cannot list extensions".into())?;
    if !installed {
        return Ok(None);
    }
    let indexes: Vec<(String,)> = sqlx::query_as(
        "SELECT c.oid::regclass::text FROM pg_index i \
         JOIN pg_class c ON c.oid = i.indexrelid \
         JOIN pg_am a ON a.oid = c.relam \
         WHERE a.amname = 'btree' AND c.relnamespace = current_schema()::regnamespace",
    )
    .fetch_all(&mut *conn)
    .await
    .context(|| "cannot list the indexes".into())?;
    for (index,) in &indexes {
        sqlx::query("SELECT bt_index_check($1::text::regclass)")
            .bind(index)
            .execute(&mut *conn)
            .await
            .context(|| format!("index {index}"))?;
    }
    Ok(Some(indexes.len()))
}
