//! Two PostgreSQL writers by default, and the rule that keeps them free of
//! deadlocks (`store::DEFAULT_PG_WRITERS`): every writer but the first waits
//! for a row lock at most 50 ms, and what gives way there runs again on the
//! first writer, which waits as long as it takes. A lock held from a
//! connection of the test's own stands in for the other writer's open
//! batch: the write must wait for it and then succeed, once, with no error
//! for the client, and `orch_db_write_give_ways_total` must count the
//! give-way. SQLite has one writer, which never gives way: there the
//! outside lock is the database's write lock, and the same writes wait for
//! it and succeed with nothing counted.

use super::combined::{register, state_moves};
use super::group_commit::claim_and_start;
use orchestrator_client::Client;
use orchestrator_client::api::{
    ClaimBatch, CompleteTask, CreateTask, PageRequest, RegisterWorker, RegisteredWorker,
    TaskFilter, TaskState, WorkerAgentSpec, WorkflowState,
};
use orchestrator_tests::{TestServer, backend};
use serde_json::json;
use sqlx::Connection;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// How long the outside connection holds its lock: far past the 50 ms after
/// which the second writer gives way.
const HOLD: Duration = Duration::from_millis(600);

const GIVE_WAYS: &str = "orch_db_write_give_ways_total";

const LOCK_TASK: &str = "SELECT 1 FROM tasks WHERE id = $1 FOR UPDATE";
const LOCK_WORKFLOW: &str = "SELECT 1 FROM workflows WHERE id = $1 FOR UPDATE";
/// Every tenant's row: a task's insert checks its tenant's row for its
/// foreign key (`FOR KEY SHARE`), which waits for this lock.
const LOCK_TENANTS: &str = "SELECT 1 FROM tenants FOR UPDATE";

/// An open transaction of the test's own that holds a lock the server's
/// writes need, until it is released.
enum Held {
    Postgres(sqlx::PgConnection),
    Sqlite(sqlx::SqliteConnection),
}

impl Held {
    /// PostgreSQL: the rows the statement `lock` (`SELECT ... FOR UPDATE`,
    /// with `id` bound where it has a `$1`) locks; SQLite: the database's
    /// write lock.
    async fn lock(server: &TestServer, lock: &'static str, id: Option<Uuid>) -> Self {
        let url = server.database_url();
        if backend() == "postgres" {
            let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
            sqlx::raw_sql("BEGIN").execute(&mut conn).await.unwrap();
            let mut query = sqlx::query(lock);
            if let Some(id) = id {
                query = query.bind(id);
            }
            let locked = query.fetch_all(&mut conn).await.unwrap();
            assert!(!locked.is_empty(), "no row to lock: {lock}");
            Self::Postgres(conn)
        } else {
            let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
            sqlx::raw_sql("BEGIN IMMEDIATE")
                .execute(&mut conn)
                .await
                .unwrap();
            Self::Sqlite(conn)
        }
    }

    async fn release(self) {
        match self {
            Self::Postgres(mut c) => sqlx::raw_sql("ROLLBACK").execute(&mut c).await.map(drop),
            Self::Sqlite(mut c) => sqlx::raw_sql("ROLLBACK").execute(&mut c).await.map(drop),
        }
        .unwrap();
    }
}

/// Give-ways the server has counted (the series is there on both databases).
async fn give_ways(server: &TestServer) -> f64 {
    server
        .metric(GIVE_WAYS)
        .await
        .unwrap_or_else(|| panic!("{GIVE_WAYS} is missing from /metrics"))
}

/// What a give-way adds to the count: one on PostgreSQL, none on SQLite.
fn one_on_postgres() -> f64 {
    match backend() {
        "postgres" => 1.0,
        _ => 0.0,
    }
}

/// Runs `write` while `held` holds its lock: it must still be waiting after
/// [`HOLD`], having given way exactly once by then on PostgreSQL (counted
/// while the lock is still held), and it answers once the lock goes.
async fn held_up<T: Send + 'static>(
    server: &TestServer,
    held: Held,
    write: impl std::future::Future<Output = T> + Send + 'static,
) -> T {
    let before = give_ways(server).await;
    let began = Instant::now();
    let writing = tokio::spawn(write);
    tokio::time::sleep(HOLD).await;
    assert!(!writing.is_finished(), "the write ignored the lock");
    assert_eq!(give_ways(server).await, before + one_on_postgres());
    held.release().await;
    let answer = writing.await.unwrap();
    assert!(began.elapsed() >= HOLD);
    answer
}

fn task(title: &str, workflow_id: Option<Uuid>) -> CreateTask {
    CreateTask {
        title: title.into(),
        task_type: "code".into(),
        workflow_id,
        ..Default::default()
    }
}

/// A completion is a combined statement, which runs on the second writer.
/// With the task's row locked from outside, that statement waits past 50 ms
/// and gives way; the completion then takes its ordinary path on the first
/// writer, waits there until the lock goes, and completes the task once.
#[tokio::test]
async fn a_completion_held_up_by_a_row_lock_gives_way_and_completes_once() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let agent = register(&admin, "patient".into(), Vec::new()).await;
    let id = admin.tasks().create(&task("held", None)).await.unwrap().id;
    assert_eq!(claim_and_start(&admin, agent).await, id);

    let before = give_ways(&server).await;
    let held = Held::lock(&server, LOCK_TASK, Some(id)).await;
    let completing = async move {
        admin
            .tasks()
            .complete(
                id,
                &CompleteTask {
                    agent_id: Some(agent),
                    output: Some(json!({ "waited": true })),
                    ..Default::default()
                },
            )
            .await
    };
    let done = held_up(&server, held, completing)
        .await
        .expect("the completion succeeds");
    assert_eq!(done.state, TaskState::Completed);
    assert_eq!(done.output, Some(json!({ "waited": true })));
    let admin = server.admin();
    let mut moves = state_moves(&admin, id).await;
    moves.sort_unstable();
    assert_eq!(moves, ["claimed", "completed", "in_progress", "pending"]);
    // Nothing gave way again after the lock went.
    assert_eq!(give_ways(&server).await, before + one_on_postgres());
}

async fn worker(admin: &Client, name: &str) -> RegisteredWorker {
    admin
        .workers()
        .register(&RegisterWorker {
            name: name.into(),
            connection_mode: Some("polling".into()),
            agents: Some(vec![WorkerAgentSpec {
                name: format!("{name}-0"),
                routing_tags: None,
                execution_mode: None,
            }]),
            ..Default::default()
        })
        .await
        .unwrap()
}

/// Two workers' `claim-batch` requests for tasks of one pending workflow,
/// whose row (which the first claim moves to `in_progress`) is locked from
/// outside. The first batch holds one writer while it waits; the second
/// takes the other; whichever of them waits on the second writer gives way
/// and runs again on the first. Both end with a task each, two different
/// tasks claimed once, once the lock goes, and the workflow in progress.
#[tokio::test]
async fn claim_batches_held_up_by_a_row_lock_give_way_and_claim_once() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let workflow = server.launch_workflow("give-way").await;
    for i in 0..2 {
        admin
            .tasks()
            .create(&task(&format!("wf-{i}"), Some(workflow)))
            .await
            .unwrap();
    }
    let workers = [
        worker(&admin, "first").await,
        worker(&admin, "second").await,
    ];
    let launched = admin.workflows().get(workflow).await.unwrap();
    assert_eq!(launched.workflow.state, WorkflowState::Pending);

    let before = give_ways(&server).await;
    let held = Held::lock(&server, LOCK_WORKFLOW, Some(workflow)).await;
    let began = Instant::now();
    let mut claims = Vec::new();
    for registered in &workers {
        let client = server.client(&registered.worker_api_key);
        let worker_id = registered.worker_id;
        claims.push(tokio::spawn(async move {
            let request = ClaimBatch {
                limit: 1,
                workflow_id: Some(workflow),
                ..Default::default()
            };
            client.workers().claim_batch(worker_id, &request).await
        }));
        // The first batch takes a writer before the second asks for one.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(HOLD).await;
    assert!(
        claims.iter().all(|c| !c.is_finished()),
        "a claim ignored the lock"
    );
    assert!(give_ways(&server).await >= before + one_on_postgres());
    held.release().await;
    let mut claimed = Vec::new();
    for claim in claims {
        let batch = claim.await.unwrap().expect("the batch succeeds");
        assert_eq!(batch.len(), 1, "one task for the worker's one agent");
        claimed.push(batch[0].task.id);
    }
    assert!(began.elapsed() >= HOLD);
    assert_ne!(claimed[0], claimed[1], "one task claimed by both batches");
    for id in claimed {
        let mut moves = state_moves(&admin, id).await;
        moves.sort_unstable();
        assert_eq!(moves, ["claimed", "pending"]);
    }
    let after = admin.workflows().get(workflow).await.unwrap();
    assert_eq!(after.workflow.state, WorkflowState::InProgress);
}

/// A plain create is a combined statement on the second writer too. With
/// the tenant's row locked from outside, its foreign-key check waits past
/// 50 ms and the group gives way; the create then takes the ordinary path
/// on the first writer and adds its one task once the lock goes.
#[tokio::test]
async fn a_create_held_up_by_a_row_lock_gives_way_and_adds_one_task() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let held = Held::lock(&server, LOCK_TENANTS, None).await;
    let creating = async move { admin.tasks().create(&task("held back", None)).await };
    let created = held_up(&server, held, creating)
        .await
        .expect("the create succeeds");
    assert_eq!(created.state, TaskState::Pending);
    let admin = server.admin();
    let listed = admin
        .tasks()
        .list(&TaskFilter::default(), PageRequest::default())
        .await
        .unwrap();
    let titled: Vec<_> = listed
        .items
        .iter()
        .filter(|t| t.title == "held back")
        .collect();
    assert_eq!(titled.len(), 1, "one task, added once");
    assert_eq!(state_moves(&admin, created.id).await, ["pending"]);
}
