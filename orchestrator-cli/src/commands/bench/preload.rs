//! `orch bench lifecycle --preload N`: does the hot path stay flat as the
//! history grows? The lifecycle runs on the empty database, then N finished
//! tasks (with their events and log rows) are written straight into the
//! embedded server's database, then the lifecycle runs again on the same
//! server. The report carries both rates and their ratio, and both claim
//! p99s and theirs. Each phase runs [`PHASE_RUNS`] times and the figures
//! compared are the runs' medians.
//!
//! The preloaded rows are copies of the empty phase's finished tasks, events
//! and log rows (every column as the server wrote it, new ids), made by the
//! database itself (`INSERT ... SELECT`): as fast as the engine allows, and
//! shaped like real history rather than like a guess at it. One copy of the
//! template is one transaction, so the server's own writer is never held
//! back for long. On PostgreSQL the three tables are analyzed afterwards, as
//! autovacuum would after a bulk load; SQLite gets nothing the server would
//! not do itself. Before the second run the preload is flushed to disk (a
//! checkpoint, then the file's or the server's sync), so the run measures
//! the larger tables, not the kernel writing the preload back.

use super::embedded::Embedded;
use super::lifecycle::{self, LifecycleArgs};
use super::retention;
use super::stats::{self, round3};
use super::{Outcome, Target};
use anyhow::{Context, Result, bail};
use serde_json::json;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{Connection, PgConnection, SqliteConnection};
use std::time::{Duration, Instant};

/// How many times each phase's lifecycle runs without `--retention`; the
/// compared figures are the medians of the runs. Why: the target is a ratio
/// of two claim p99s, and one run's p99 moved by 2x within minutes on a
/// noisy host (BENCHMARKS.md, the full set of 2026-11-30 17:57 UTC: 2.07x
/// in the set, 1.02x when run again alone). With `--retention` each phase
/// runs once: the second run goes on while the sweep deletes the history,
/// and the sweep is what that run measures.
const PHASE_RUNS: usize = 3;

/// What the preload wrote.
#[derive(Debug, Clone, Copy, Default)]
pub struct Preloaded {
    pub tasks: u64,
    pub events: u64,
    pub logs: u64,
    pub elapsed: Duration,
    /// SQLite: how often the closing `TRUNCATE` checkpoint found another
    /// checkpoint running and was tried again.
    pub checkpoint_retries: u64,
}

impl Preloaded {
    fn rows(&self) -> u64 {
        self.tasks + self.events + self.logs
    }
}

/// The lifecycle on the empty database, `preload` finished tasks written,
/// and the lifecycle again: the second run's report with the first run's
/// figures beside it (`empty_*`) and their ratios.
pub async fn run(target: &Target, args: LifecycleArgs, preload: u64) -> Result<Outcome> {
    let Some(embedded) = target.embedded.as_ref() else {
        bail!("--preload writes into the server's database: run it with --embedded");
    };
    let started = Instant::now();
    let single = LifecycleArgs {
        preload: None,
        retention: false,
        ..args.clone()
    };
    let runs = if args.retention { 1 } else { PHASE_RUNS };
    let mut empty_runs = Vec::with_capacity(runs);
    for _ in 0..runs {
        empty_runs.push(lifecycle::run_with(target, single.clone(), None).await?);
    }
    if !target.quiet {
        eprintln!("preloading {preload} finished tasks with their events and log rows");
    }
    let preloaded = preload_rows(embedded, preload, args.retention).await?;
    let purge = if args.retention {
        Some(retention::start(embedded).await?)
    } else {
        None
    };
    let mut loaded_runs = Vec::with_capacity(runs);
    for _ in 0..runs {
        loaded_runs.push(lifecycle::run_with(target, single.clone(), None).await?);
    }

    let rate = |o: &Outcome| o.results["tasks_per_s"].as_f64().unwrap_or(0.0);
    let claim_p99 = |o: &Outcome| {
        o.latency
            .iter()
            .find(|(route, _)| route.contains("claim"))
            .map_or(0.0, |(_, l)| l.p99_ms)
    };
    let ratio = |a: f64, b: f64| if b > 0.0 { round3(a / b) } else { 0.0 };
    let rates = |runs: &[Outcome]| runs.iter().map(rate).collect::<Vec<_>>();
    let p99s = |runs: &[Outcome]| runs.iter().map(claim_p99).collect::<Vec<_>>();
    let (empty_rates, loaded_rates) = (rates(&empty_runs), rates(&loaded_runs));
    let (empty_p99s, loaded_p99s) = (p99s(&empty_runs), p99s(&loaded_runs));
    let errors = empty_runs
        .iter()
        .chain(&loaded_runs)
        .map(|o| o.errors)
        .sum();
    // Each phase's run of median rate stands for it (its phases' rates and
    // its latency table); the claim p99s compared are the medians of all
    // the runs' p99s, which may come from other runs.
    let empty = median_run(empty_runs, rate);
    let loaded = median_run(loaded_runs, rate);
    let mut results = loaded.results.clone();
    results.insert("empty_tasks_per_s", json!(rate(&empty)));
    // Each phase's empty-database rate beside the loaded one: which of the
    // two moved.
    for (phase, empty_phase) in [
        ("create_per_s", "empty_create_per_s"),
        ("drain_tasks_per_s", "empty_drain_tasks_per_s"),
    ] {
        let figure = empty.results.get(phase).cloned().unwrap_or_default();
        results.insert(empty_phase, figure);
    }
    results.insert("scale_ratio", json!(ratio(rate(&loaded), rate(&empty))));
    let (empty_p99, loaded_p99) = (median(&empty_p99s), median(&loaded_p99s));
    results.insert("claim_p99_ms", json!(loaded_p99));
    results.insert("empty_claim_p99_ms", json!(empty_p99));
    results.insert("claim_p99_ratio", json!(ratio(loaded_p99, empty_p99)));
    results.insert("tasks_per_s_runs", json!(loaded_rates));
    results.insert("empty_tasks_per_s_runs", json!(empty_rates));
    results.insert("claim_p99_ms_runs", json!(loaded_p99s));
    results.insert("empty_claim_p99_ms_runs", json!(empty_p99s));
    results.insert("preloaded_tasks", json!(preloaded.tasks));
    results.insert("preloaded_events", json!(preloaded.events));
    results.insert("preloaded_logs", json!(preloaded.logs));
    results.insert("preload_s", json!(round3(preloaded.elapsed.as_secs_f64())));
    results.insert(
        "preload_checkpoint_retries",
        json!(preloaded.checkpoint_retries),
    );
    results.insert(
        "preload_rows_per_s",
        json!(stats::rate(preloaded.rows(), preloaded.elapsed)),
    );
    if let Some(purge) = purge {
        purge.finish(&mut results).await?;
    }
    let mut latency = loaded.latency;
    for (route, summary) in empty.latency {
        latency.insert(format!("empty {route}"), summary);
    }
    let mut parameters = loaded.parameters;
    parameters["preload"] = json!(preload);
    parameters["retention"] = json!(args.retention);
    parameters["phase_runs"] = json!(runs);
    Ok(Outcome {
        workload: "lifecycle",
        parameters,
        duration: started.elapsed(),
        results,
        latency,
        errors,
    })
}

/// The run whose `key` is the median of the runs' (the lower middle one of
/// an even number).
fn median_run(mut runs: Vec<Outcome>, key: impl Fn(&Outcome) -> f64) -> Outcome {
    runs.sort_by(|a, b| key(a).total_cmp(&key(b)));
    runs.swap_remove((runs.len() - 1) / 2)
}

/// The median of `values` (the mean of the two middle ones of an even
/// number; 0 for none).
fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// Copies the whole WAL into the database file and empties it, trying
/// again until it has: a `TRUNCATE` checkpoint answers `busy` at once
/// (a row, not an error) while another connection checkpoints, as the
/// server's checkpointer does whenever its writer has written (its
/// background jobs write during a long preload). A run started on the
/// preload's gigabytes of WAL measured the server copying them and cutting
/// the file back, with its writer waiting: creates fell from about 7,000
/// to 1,750 a second in the same session. Returns the retries.
async fn truncate_wal(conn: &mut SqliteConnection) -> Result<u64> {
    const ATTEMPTS: u64 = 600;
    for retry in 0..ATTEMPTS {
        let (busy, frames, copied): (i64, i64, i64) =
            sqlx::query_as("PRAGMA wal_checkpoint(TRUNCATE)")
                .fetch_one(&mut *conn)
                .await
                .context("cannot checkpoint the preloaded database")?;
        if busy == 0 && copied >= frames {
            return Ok(retry);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!(
        "the preload's WAL could not be checkpointed: another checkpoint kept it busy for a minute"
    )
}

/// The two databases' spelling of the statements the preload runs.
struct Dialect {
    begin: &'static str,
    new_id: &'static str,
    columns: &'static str,
    /// `--retention`: the first run's rows moved [`AGE`] back, before they
    /// are copied (so ids and times still rise together, as the server
    /// writes them).
    age: [&'static str; 3],
}

/// How far `--retention` moves the history back: past the one-day
/// retention the server is restarted with.
pub const AGE: chrono::TimeDelta = chrono::TimeDelta::days(2);

const SQLITE: Dialect = Dialect {
    begin: "BEGIN IMMEDIATE",
    // Ids are 16-byte blobs on SQLite; any 16 bytes read back as a UUID.
    new_id: "randomblob(16)",
    columns: "SELECT name FROM pragma_table_info(?1) ORDER BY cid",
    // The text the server writes (RFC 3339, milliseconds, `+00:00`).
    age: [
        "UPDATE tasks SET \
         created_at = strftime('%Y-%m-%dT%H:%M:%f+00:00', created_at, '-2 days'), \
         updated_at = strftime('%Y-%m-%dT%H:%M:%f+00:00', updated_at, '-2 days'), \
         claimed_at = strftime('%Y-%m-%dT%H:%M:%f+00:00', claimed_at, '-2 days'), \
         started_at = strftime('%Y-%m-%dT%H:%M:%f+00:00', started_at, '-2 days'), \
         completed_at = strftime('%Y-%m-%dT%H:%M:%f+00:00', completed_at, '-2 days')",
        "UPDATE events SET created_at = strftime('%Y-%m-%dT%H:%M:%f+00:00', created_at, '-2 days')",
        "UPDATE logs SET created_at = strftime('%Y-%m-%dT%H:%M:%f+00:00', created_at, '-2 days')",
    ],
};

const POSTGRES: Dialect = Dialect {
    begin: "BEGIN",
    new_id: "gen_random_uuid()",
    columns: "SELECT column_name::text FROM information_schema.columns \
              WHERE table_schema = current_schema() AND table_name = $1 \
              AND is_generated = 'NEVER' ORDER BY ordinal_position",
    age: [
        "UPDATE tasks SET created_at = created_at - interval '2 days', \
         updated_at = updated_at - interval '2 days', claimed_at = claimed_at - interval '2 days', \
         started_at = started_at - interval '2 days', \
         completed_at = completed_at - interval '2 days'",
        "UPDATE events SET created_at = created_at - interval '2 days'",
        "UPDATE logs SET created_at = created_at - interval '2 days'",
    ],
};

/// The copy statements: one per table, each joining the template's rows to
/// `preload_map` (template id → new id) and replacing the column that names
/// the task. Events and logs get fresh sequence ids from the table.
fn copy_statements(
    tasks: &[String],
    events: &[String],
    logs: &[String],
) -> [(&'static str, String); 3] {
    let list = |columns: &[String], skip: &str| -> Vec<String> {
        columns
            .iter()
            .filter(|c| c.as_str() != skip)
            .cloned()
            .collect()
    };
    let copy = |table: &str, columns: Vec<String>, link: &str| {
        let names = columns
            .iter()
            .map(|c| format!("\"{c}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let values = columns
            .iter()
            .map(|c| {
                if c == link {
                    "m.new_id".to_owned()
                } else {
                    format!("r.\"{c}\"")
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        format!(
            "INSERT INTO {table} ({names}) SELECT {values} FROM preload_{table} r \
             JOIN preload_map m ON m.old_id = r.\"{link}\""
        )
    };
    [
        ("tasks", copy("tasks", list(tasks, ""), "id")),
        ("events", copy("events", list(events, "id"), "entity_id")),
        ("logs", copy("logs", list(logs, "id"), "task_id")),
    ]
}

/// The preload on one connection of either database (the statements are
/// the same text but for [`Dialect`]; sqlx's connection types differ).
macro_rules! copy_rows {
    ($conn:expr, $dialect:expr, $n:expr, $aged:expr) => {{
        let conn = $conn;
        let dialect: &Dialect = $dialect;
        let n: u64 = $n;
        async {
            if $aged {
                for age in dialect.age {
                    sqlx::raw_sql(age).execute(&mut *conn).await?;
                }
            }
            let mut columns = Vec::new();
            for table in ["tasks", "events", "logs"] {
                let names: Vec<String> = sqlx::query_scalar(dialect.columns)
                    .bind(table)
                    .fetch_all(&mut *conn)
                    .await?;
                columns.push(names);
            }
            for setup in [
                "CREATE TEMP TABLE preload_tasks AS SELECT * FROM tasks WHERE state = 'completed'",
                "CREATE TEMP TABLE preload_events AS SELECT * FROM events \
                 WHERE entity_type = 'task' AND entity_id IN (SELECT id FROM preload_tasks)",
                "CREATE TEMP TABLE preload_logs AS SELECT * FROM logs \
                 WHERE task_id IN (SELECT id FROM preload_tasks)",
            ] {
                sqlx::raw_sql(setup).execute(&mut *conn).await?;
            }
            let template: i64 = sqlx::query_scalar("SELECT count(*) FROM preload_tasks")
                .fetch_one(&mut *conn)
                .await?;
            if template == 0 {
                bail!("no finished task to copy: the first run completed nothing");
            }
            sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                "CREATE TEMP TABLE preload_map AS SELECT id AS old_id, {} AS new_id \
                 FROM preload_tasks LIMIT 0",
                dialect.new_id
            )))
            .execute(&mut *conn)
            .await?;
            sqlx::raw_sql("CREATE INDEX preload_map_old ON preload_map (old_id)")
                .execute(&mut *conn)
                .await?;
            let copies = copy_statements(&columns[0], &columns[1], &columns[2]);
            let mut preloaded = Preloaded::default();
            let mut left = n;
            while left > 0 {
                let take = left.min(template as u64);
                sqlx::raw_sql(dialect.begin).execute(&mut *conn).await?;
                sqlx::raw_sql("DELETE FROM preload_map")
                    .execute(&mut *conn)
                    .await?;
                sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                    "INSERT INTO preload_map SELECT id, {} FROM preload_tasks LIMIT {take}",
                    dialect.new_id
                )))
                .execute(&mut *conn)
                .await?;
                for (table, sql) in &copies {
                    let written = sqlx::raw_sql(sqlx::AssertSqlSafe(sql.clone()))
                        .execute(&mut *conn)
                        .await
                        .with_context(|| format!("cannot copy {table} rows"))?
                        .rows_affected();
                    match *table {
                        "tasks" => preloaded.tasks += written,
                        "events" => preloaded.events += written,
                        _ => preloaded.logs += written,
                    }
                }
                sqlx::raw_sql("COMMIT").execute(&mut *conn).await?;
                left -= take;
            }
            for table in [
                "preload_map",
                "preload_tasks",
                "preload_events",
                "preload_logs",
            ] {
                sqlx::raw_sql(sqlx::AssertSqlSafe(format!("DROP TABLE {table}")))
                    .execute(&mut *conn)
                    .await?;
            }
            Ok::<Preloaded, anyhow::Error>(preloaded)
        }
        .await
    }};
}

/// Writes `n` finished tasks (copies of those already finished) with their
/// events and log rows; `aged`: all of them, and the rows copied, [`AGE`]
/// old.
pub async fn preload_rows(embedded: &Embedded, n: u64, aged: bool) -> Result<Preloaded> {
    let started = Instant::now();
    let mut preloaded = if let Some(dir) = embedded.data_dir() {
        let options = SqliteConnectOptions::new()
            .filename(dir.join("orch.db"))
            .busy_timeout(Duration::from_secs(60));
        let mut conn = SqliteConnection::connect_with(&options)
            .await
            .context("cannot open the bench server's SQLite database")?;
        let mut preloaded = copy_rows!(&mut conn, &SQLITE, n, aged)?;
        // Start the measured run from an empty WAL, as the first run did,
        // and with the preload's gigabytes on disk: otherwise the kernel
        // writes them back during the run and the run pays for the preload.
        preloaded.checkpoint_retries = truncate_wal(&mut conn).await?;
        conn.close().await.ok();
        std::fs::File::open(dir.join("orch.db"))
            .and_then(|file| file.sync_all())
            .context("cannot flush the preloaded database to disk")?;
        preloaded
    } else if let Some(url) = embedded.database_url() {
        let mut conn = PgConnection::connect(&url)
            .await
            .context("cannot connect to the bench server's PostgreSQL database")?;
        let preloaded = copy_rows!(&mut conn, &POSTGRES, n, aged)?;
        sqlx::raw_sql("ANALYZE tasks, events, logs")
            .execute(&mut conn)
            .await?;
        // The preload's pages on disk before the run (as on SQLite); a
        // role that may not checkpoint leaves it to the next one.
        sqlx::raw_sql("CHECKPOINT").execute(&mut conn).await.ok();
        conn.close().await.ok();
        preloaded
    } else {
        bail!("the embedded server has no database this bench can reach");
    };
    preloaded.elapsed = started.elapsed();
    Ok(preloaded)
}
