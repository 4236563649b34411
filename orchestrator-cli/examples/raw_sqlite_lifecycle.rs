//! Raw SQLite baseline for `orch bench lifecycle --embedded sqlite`: the same
//! lifecycle as plain SQL on sqlx, no HTTP, no auth, no JSON envelopes.
//!
//! Same storage set-up as the server (one writer connection, WAL,
//! `synchronous = NORMAL`, a table shaped like `tasks` with the same claim
//! index, an `events` table): N tasks are created (one transaction each,
//! task + event), then C concurrent loops claim (one `UPDATE ... RETURNING`
//! read with `fetch_all`, inside a transaction), start and complete, each
//! step one transaction that also writes an event.
//!
//! ```text
//! cargo run --release -p orchestrator-cli --example raw_sqlite_lifecycle -- --tasks 10000 --agents 32
//! ```
//! Prints one JSON object (tasks/s end to end, create/s, drain tasks/s).

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Row, SqlitePool};
use std::time::{Duration, Instant};
use uuid::Uuid;

const TENANT: Uuid = Uuid::from_u128(1);
const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

async fn event(
    tx: &mut sqlx::SqliteConnection,
    id: Uuid,
    kind: &str,
    data: &str,
) -> sqlx::Result<()> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO events (tenant_id, type, entity_type, entity_id, data, created_at) \
         VALUES ($1, $2, 'task', $3, $4, {NOW})"
    )))
    .bind(TENANT)
    .bind(kind)
    .bind(id)
    .bind(data)
    .execute(tx)
    .await
    .map(|_| ())
}

async fn create(pool: &SqlitePool, n: usize) -> sqlx::Result<()> {
    let mut tx = pool.begin().await?;
    let id = Uuid::new_v4();
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO tasks (id, tenant_id, title, type, priority_rank, state, required_tags, input, \
         context, metadata, created_at, updated_at) \
         VALUES ($1, $2, 'bench task', 'analysis', 2, 'pending', '[]', $3, '{{}}', '{{}}', {NOW}, {NOW})"
    )))
    .bind(id)
    .bind(TENANT)
    .bind(format!("{{\"n\":{n}}}"))
    .execute(&mut *tx)
    .await?;
    event(&mut tx, id, "task.created", "{\"to_state\":\"pending\"}").await?;
    tx.commit().await
}

/// One claim → start → complete; `false` when nothing was pending.
async fn lifecycle(pool: &SqlitePool, agent: Uuid) -> sqlx::Result<bool> {
    let mut tx = pool.begin().await?;
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE tasks SET state = 'claimed', assigned_agent_id = $1, claimed_at = {NOW}, updated_at = {NOW} \
         WHERE id = (SELECT t.id FROM tasks t WHERE t.state = 'pending' AND t.tenant_id = $2 \
           AND t.preferred_agent_id IS NULL AND t.preferred_worker_id IS NULL AND t.required_tags = '[]' \
           ORDER BY t.priority_rank DESC, t.created_at, t.id LIMIT 1) RETURNING id"
    )))
    .bind(agent)
    .bind(TENANT)
    .fetch_all(&mut *tx)
    .await?;
    let Some(row) = rows.first() else {
        return Ok(false);
    };
    let id: Uuid = row.get(0);
    event(
        &mut tx,
        id,
        "task.state_changed",
        "{\"to_state\":\"claimed\"}",
    )
    .await?;
    tx.commit().await?;
    for (set, from, to) in [
        (
            "state = 'in_progress', started_at",
            "claimed",
            "in_progress",
        ),
        (
            "state = 'completed', output = '{\"ok\":true}', completed_at",
            "in_progress",
            "completed",
        ),
    ] {
        let mut tx = pool.begin().await?;
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE tasks SET {set} = {NOW}, updated_at = {NOW} WHERE id = $1 AND state = '{from}'"
        )))
        .bind(id)
        .execute(&mut *tx)
        .await?;
        event(
            &mut tx,
            id,
            "task.state_changed",
            &format!("{{\"to_state\":\"{to}\"}}"),
        )
        .await?;
        tx.commit().await?;
    }
    Ok(true)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tasks = arg("--tasks", 10_000);
    let agents = arg("--agents", 32);
    let dir = tempfile::tempdir()?;
    let options = SqliteConnectOptions::new()
        .filename(dir.path().join("raw.db"))
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(10));
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .acquire_timeout(Duration::from_secs(60))
        .connect_with(options)
        .await?;
    sqlx::raw_sql(
        "CREATE TABLE tasks (id BLOB PRIMARY KEY, tenant_id BLOB NOT NULL, title TEXT NOT NULL, \
           type TEXT NOT NULL, priority_rank INTEGER NOT NULL, state TEXT NOT NULL, workflow_id BLOB, \
           required_tags TEXT NOT NULL, input TEXT NOT NULL, context TEXT NOT NULL, output TEXT, \
           metadata TEXT NOT NULL, assigned_agent_id BLOB, preferred_agent_id BLOB, \
           preferred_worker_id BLOB, claimed_at TEXT, started_at TEXT, completed_at TEXT, \
           created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
         CREATE INDEX tasks_claimable ON tasks (tenant_id, priority_rank DESC, created_at, id) WHERE state = 'pending';
         CREATE INDEX tasks_held_by_agent ON tasks (assigned_agent_id) WHERE state IN ('claimed', 'in_progress');
         CREATE INDEX tasks_tenant_created ON tasks (tenant_id, created_at DESC, id DESC);
         CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, tenant_id BLOB NOT NULL, \
           type TEXT NOT NULL, entity_type TEXT NOT NULL, entity_id BLOB NOT NULL, data TEXT NOT NULL, \
           created_at TEXT NOT NULL);
         CREATE INDEX events_tenant_id ON events (tenant_id, id);",
    )
    .execute(&pool)
    .await?;

    let started = Instant::now();
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut handles = Vec::new();
    for _ in 0..agents {
        let pool = pool.clone();
        let next = next.clone();
        handles.push(tokio::spawn(async move {
            loop {
                let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if n >= tasks {
                    return Ok::<_, sqlx::Error>(());
                }
                create(&pool, n).await?;
            }
        }));
    }
    for handle in handles {
        handle.await??;
    }
    let create_time = started.elapsed();
    let drain_started = Instant::now();
    let mut handles = Vec::new();
    for _ in 0..agents {
        let pool = pool.clone();
        let agent = Uuid::new_v4();
        handles.push(tokio::spawn(async move {
            let mut done = 0u64;
            while lifecycle(&pool, agent).await? {
                done += 1;
            }
            Ok::<_, sqlx::Error>(done)
        }));
    }
    let mut completed = 0;
    for handle in handles {
        completed += handle.await??;
    }
    let drain_time = drain_started.elapsed();
    let total = started.elapsed();
    let rate = |n: u64, d: Duration| (n as f64 / d.as_secs_f64() * 10.0).round() / 10.0;
    println!(
        "{{\"baseline\": \"raw_sqlite_lifecycle\", \"tasks\": {tasks}, \"agents\": {agents}, \
         \"tasks_completed\": {completed}, \"tasks_per_s\": {}, \"create_per_s\": {}, \
         \"drain_tasks_per_s\": {}, \"cores\": {}, \"build_profile\": \"{}\"}}",
        rate(completed, total),
        rate(tasks as u64, create_time),
        rate(completed, drain_time),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
    );
    pool.close().await;
    Ok(())
}
