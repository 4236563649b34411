//! `orch bench lifecycle --preload N --retention`: does history retention
//! keep up? The preload is aged past a one-day retention
//! ([`super::preload::AGE`]), the server is restarted with that retention,
//! and the second lifecycle run goes on while the server's background sweep
//! deletes the history. This watches the database until every aged task,
//! event and log row is gone and reports how fast that went beside the
//! run's own rate.
//!
//! The watch reads only cheap things while the run goes on: whether one
//! aged task is left (on the tasks' creation-time index) and the smallest
//! event and log id (their primary keys), every half second.

use super::embedded::Embedded;
use super::stats::round3;
use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{Connection, PgConnection, SqliteConnection};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// The arguments the server is restarted with.
const RESTART_WITH: [&str; 4] = [
    "--history-retention-days",
    "1",
    "--retention-interval-seconds",
    "1",
];

/// How long the watch waits for the purge to finish.
const GIVE_UP_AFTER: Duration = Duration::from_secs(3600);

/// What the preload left past the retention (everything in the three
/// tables when the server is restarted).
#[derive(Debug, Clone, Copy)]
struct Aged {
    tasks: i64,
    events: i64,
    logs: i64,
    last_event: i64,
    last_log: i64,
}

/// How long the purge took.
#[derive(Debug, Clone, Copy)]
struct Purge {
    aged: Aged,
    tasks: Duration,
    all: Duration,
}

/// A purge being watched: [`start`] restarts the server with the retention
/// and begins; [`Watch::finish`] waits for its end and writes its figures.
pub struct Watch(JoinHandle<Result<Purge>>);

enum Db {
    Sqlite(SqliteConnection),
    Postgres(PgConnection),
}

/// The same query text over either connection type.
macro_rules! on {
    ($db:expr, $c:ident => $body:expr) => {
        match $db {
            Db::Sqlite($c) => $body,
            Db::Postgres($c) => $body,
        }
    };
}

async fn connect(embedded: &Embedded) -> Result<Db> {
    if let Some(dir) = embedded.data_dir() {
        let options = SqliteConnectOptions::new()
            .filename(dir.join("orch.db"))
            .busy_timeout(Duration::from_secs(60));
        Ok(Db::Sqlite(
            SqliteConnection::connect_with(&options)
                .await
                .context("cannot open the bench server's SQLite database")?,
        ))
    } else if let Some(url) = embedded.database_url() {
        Ok(Db::Postgres(PgConnection::connect(&url).await.context(
            "cannot connect to the bench server's PostgreSQL database",
        )?))
    } else {
        bail!("the embedded server has no database this bench can reach")
    }
}

/// Counts what is aged, restarts the server with a one-day history
/// retention and starts watching the purge.
pub async fn start(embedded: &Embedded) -> Result<Watch> {
    let mut db = connect(embedded).await?;
    let count = |table: &str| format!("SELECT count(*), coalesce(max(id), 0) FROM {table}");
    let tasks: i64 = on!(&mut db, c => sqlx::query_scalar("SELECT count(*) FROM tasks")
        .fetch_one(c)
        .await)?;
    let (events, last_event): (i64, i64) = on!(&mut db, c => sqlx::query_as(sqlx::AssertSqlSafe(count("events")))
        .fetch_one(c)
        .await)?;
    let (logs, last_log): (i64, i64) = on!(&mut db, c => sqlx::query_as(sqlx::AssertSqlSafe(count("logs")))
        .fetch_one(c)
        .await)?;
    let aged = Aged {
        tasks,
        events,
        logs,
        last_event,
        last_log,
    };
    let extra: Vec<String> = RESTART_WITH.iter().map(|a| (*a).to_owned()).collect();
    embedded
        .restart(&extra)
        .await
        .context("cannot restart the server with a history retention")?;
    // Younger than the aged rows, older than anything the run writes (the
    // server's one-day retention).
    let cutoff = Utc::now() - super::preload::AGE / 2;
    Ok(Watch(tokio::spawn(watch(db, aged, cutoff))))
}

async fn watch(mut db: Db, aged: Aged, cutoff: DateTime<Utc>) -> Result<Purge> {
    let started = Instant::now();
    let mut tasks_done = None;
    loop {
        let left: i64 = on!(&mut db, c => sqlx::query_scalar(
            "SELECT count(*) FROM (SELECT 1 FROM tasks \
             WHERE tenant_id IN (SELECT id FROM tenants) AND created_at < $1 LIMIT 1) t",
        )
        .bind(cutoff)
        .fetch_one(c)
        .await)?;
        if left == 0 && tasks_done.is_none() {
            tasks_done = Some(started.elapsed());
        }
        let first_event: i64 = on!(&mut db, c => sqlx::query_scalar("SELECT coalesce(min(id), 0) FROM events")
            .fetch_one(c)
            .await)?;
        let first_log: i64 = on!(&mut db, c => sqlx::query_scalar("SELECT coalesce(min(id), 0) FROM logs")
            .fetch_one(c)
            .await)?;
        let gone = |first: i64, last: i64| first == 0 || first > last;
        if let Some(tasks) = tasks_done
            && gone(first_event, aged.last_event)
            && gone(first_log, aged.last_log)
        {
            return Ok(Purge {
                aged,
                tasks,
                all: started.elapsed(),
            });
        }
        if started.elapsed() > GIVE_UP_AFTER {
            bail!(
                "the server had not deleted the aged history after {} s",
                GIVE_UP_AFTER.as_secs()
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

impl Watch {
    /// Waits for the purge to end and adds its figures to `results`:
    /// `retention_tasks_per_s` (aged tasks over the time until they and
    /// their events and log rows were all gone: what inflow of finished
    /// tasks the sweep keeps up with), `retention_rows_per_s` (tasks, events
    /// and log rows over the same time), `retention_s`, `retention_tasks_s`
    /// (until the last aged task alone was gone) and the counts.
    pub async fn finish(self, results: &mut BTreeMap<&'static str, Value>) -> Result<()> {
        let purge = self.0.await.context("the purge watch failed")??;
        let per_s = |n: i64, d: Duration| round3(n as f64 / d.as_secs_f64().max(0.001));
        let aged = purge.aged;
        results.insert("retention_aged_tasks", json!(aged.tasks));
        results.insert("retention_aged_events", json!(aged.events));
        results.insert("retention_aged_logs", json!(aged.logs));
        results.insert(
            "retention_tasks_s",
            json!(round3(purge.tasks.as_secs_f64())),
        );
        results.insert("retention_s", json!(round3(purge.all.as_secs_f64())));
        results.insert("retention_tasks_per_s", json!(per_s(aged.tasks, purge.all)));
        results.insert(
            "retention_rows_per_s",
            json!(per_s(aged.tasks + aged.events + aged.logs, purge.all)),
        );
        Ok(())
    }
}
