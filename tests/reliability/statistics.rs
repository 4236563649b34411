//! Planner statistics follow the hot tables' growth (issue 33, defect 9):
//! with autovacuum off for the table (as on development and CI servers), a
//! `tasks` table that grew from empty to thousands of rows is analyzed again
//! by the background runner, so plans cached while it was empty do not keep
//! scanning it. PostgreSQL only: SQLite's planner keeps no such statistics.

use orchestrator_client::api::CreateTask;
use orchestrator_tests::{TestServer, backend};
use sqlx::Connection;
use std::time::{Duration, Instant};

/// Rows `tasks` holds according to its statistics (`pg_class.reltuples`).
async fn tasks_in_statistics(url: &str) -> f64 {
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    let (rows,): (f64,) =
        sqlx::query_as("SELECT reltuples::float8 FROM pg_class WHERE oid = 'tasks'::regclass")
            .fetch_one(&mut conn)
            .await
            .unwrap();
    let _ = conn.close().await;
    rows
}

#[tokio::test]
async fn a_hot_table_that_grew_is_analyzed_again_without_autovacuum() {
    if backend() != "postgres" {
        return;
    }
    let server = TestServer::start_with(|config| {
        config.core.statistics_interval = Duration::from_millis(500);
    })
    .await;
    let url = server.database_url();
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    sqlx::query("ALTER TABLE tasks SET (autovacuum_enabled = false)")
        .execute(&mut conn)
        .await
        .unwrap();
    let _ = conn.close().await;
    // Analyzed after the migrations, empty.
    assert!(tasks_in_statistics(&url).await <= 0.0);

    const TASKS: usize = 3000;
    let writers: Vec<_> = (0..6)
        .map(|w| {
            let client = server.admin();
            tokio::spawn(async move {
                for i in 0..TASKS / 6 {
                    client
                        .tasks()
                        .create(&CreateTask {
                            title: format!("grow {w}-{i}"),
                            task_type: "code".into(),
                            ..Default::default()
                        })
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap();
    }
    // The statistics system counts the rows within seconds; the job then
    // analyzes the table at its next run.
    let started = Instant::now();
    loop {
        let rows = tasks_in_statistics(&url).await;
        if rows >= (TASKS / 2) as f64 {
            eprintln!(
                "tasks analyzed at {rows} rows after {:?}",
                started.elapsed()
            );
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the statistics still say {rows} rows of {TASKS}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// When `tasks` was last vacuumed by hand (or by orch), if ever.
async fn tasks_last_vacuum(url: &str) -> Option<String> {
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    let (at,): (Option<String>,) = sqlx::query_as(
        "SELECT last_vacuum::text FROM pg_stat_user_tables WHERE relid = 'tasks'::regclass",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    let _ = conn.close().await;
    at
}

/// Dead rows of `tasks` as the statistics system counts them.
async fn tasks_dead_rows(url: &str) -> i64 {
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    let (dead,): (i64,) = sqlx::query_as(
        "SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = 'tasks'::regclass",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    let _ = conn.close().await;
    dead
}

/// Issue 33, defect 9: with autovacuum off for `tasks`, the dead rows that
/// claims, starts and completes leave (and their entries in the claim
/// index) are vacuumed by the background runner once there are enough.
#[tokio::test]
async fn the_claim_table_is_vacuumed_when_autovacuum_is_off_for_it() {
    if backend() != "postgres" {
        return;
    }
    let server = TestServer::start_with(|config| {
        config.core.statistics_interval = Duration::from_millis(300);
    })
    .await;
    let url = server.database_url();
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    sqlx::query("ALTER TABLE tasks SET (autovacuum_enabled = false)")
        .execute(&mut conn)
        .await
        .unwrap();
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let client = server.admin();
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for i in 0..100 {
                    let task = client
                        .tasks()
                        .create(&CreateTask {
                            title: format!("dead {w}-{i}"),
                            task_type: "code".into(),
                            ..Default::default()
                        })
                        .await
                        .unwrap();
                    ids.push(task.id);
                }
                ids
            })
        })
        .collect();
    let mut tasks = Vec::new();
    for writer in writers {
        tasks.extend(writer.await.unwrap());
    }
    // Dead versions of every row, as the lifecycle's updates leave them.
    for _ in 0..3 {
        sqlx::query("UPDATE tasks SET updated_at = updated_at")
            .execute(&mut conn)
            .await
            .unwrap();
    }
    let _ = conn.close().await;
    let started = Instant::now();
    loop {
        if let Some(at) = tasks_last_vacuum(&url).await {
            eprintln!("tasks vacuumed at {at}, {:?} after", started.elapsed());
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "tasks was not vacuumed ({} dead rows)",
            tasks_dead_rows(&url).await
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        tasks_dead_rows(&url).await < 1000,
        "{} dead rows left",
        tasks_dead_rows(&url).await
    );
    // The tasks are all still there.
    let page = server.admin().tasks().get(tasks[0]).await.unwrap();
    assert_eq!(page.title, "dead 0-0");
}
