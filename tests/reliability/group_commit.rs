//! Group commit (issue 14): many requests share one database commit, each in
//! its own savepoint. A request that writes and then fails must leave no
//! trace, while the requests batched with it commit.

use orchestrator_client::Client;
use orchestrator_client::api::{
    ClaimTask, CompleteTask, CreateTask, CreateTenant, Event, EventFilter, LogCategory, LogFilter,
    LogQuery, NewLogEntry, PageRequest, RegisterAgent, StartTask, TaskFilter, TaskState,
};
use orchestrator_tests::TestServer;
use std::collections::HashSet;
use uuid::Uuid;

fn task(title: String) -> CreateTask {
    CreateTask {
        title,
        task_type: "code".into(),
        ..Default::default()
    }
}

/// `n` pending tasks, created one after the other.
pub(super) async fn pending_tasks(admin: &Client, n: usize) -> Vec<Uuid> {
    let mut ids = Vec::new();
    for i in 0..n {
        ids.push(
            admin
                .tasks()
                .create(&task(format!("p{i}")))
                .await
                .unwrap()
                .id,
        );
    }
    ids
}

/// Claims the next pending task for `agent` and starts it; its id.
pub(super) async fn claim_and_start(admin: &Client, agent: Uuid) -> Uuid {
    let claimed = admin
        .tasks()
        .claim(&ClaimTask {
            agent_id: agent,
            ..Default::default()
        })
        .await
        .unwrap()
        .expect("a pending task to claim");
    admin
        .tasks()
        .start(
            claimed.id,
            &StartTask {
                agent_id: Some(agent),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    claimed.id
}

/// Asserts that a request was refused with 409.
fn refused_409<T: std::fmt::Debug>(answer: orchestrator_client::Result<T>, what: &str) {
    let refused = answer.expect_err(what);
    assert_eq!(refused.status(), Some(409), "{refused}");
}

/// Task `id`'s events, oldest first, as `admin` sees them.
pub(super) async fn events_of(admin: &Client, id: Uuid) -> Vec<Event> {
    let events = admin
        .events()
        .list(&EventFilter {
            entity_id: Some(id),
            ..Default::default()
        })
        .await
        .unwrap();
    events.items
}

/// The types of task `id`'s events, oldest first, as `admin` sees them.
async fn event_types(admin: &Client, id: Uuid) -> Vec<String> {
    let events = events_of(admin, id).await;
    events.into_iter().map(|e| e.event_type).collect()
}

/// 60 idempotent completions of pending tasks (each writes its
/// `request_id` record, then fails with 409) race 60 task creations, all at
/// once, so that they share batches. Afterwards every creation is there
/// with its one event, the failed completions changed nothing (no event,
/// still pending), and their `request_id`s are free: reused once the task
/// really is in progress, they complete it (a leaked record would replay
/// its unfinished response instead).
#[tokio::test]
async fn a_request_that_fails_in_a_batch_rolls_back_alone() {
    const N: usize = 60;
    let server = TestServer::start().await;
    let admin = server.admin();
    let pending = pending_tasks(&admin, N).await;

    let mut storm = Vec::new();
    for (i, &id) in pending.iter().enumerate() {
        let completer = admin.clone();
        storm.push(tokio::spawn(async move {
            let complete = CompleteTask {
                request_id: Some(format!("done-{i}")),
                ..Default::default()
            };
            refused_409(
                completer.tasks().complete(id, &complete).await,
                "a pending task cannot be completed",
            );
            None
        }));
        let creator = admin.clone();
        storm.push(tokio::spawn(async move {
            Some(
                creator
                    .tasks()
                    .create(&task(format!("s{i}")))
                    .await
                    .unwrap()
                    .id,
            )
        }));
    }
    let mut created = HashSet::new();
    for handle in storm {
        if let Some(id) = handle.await.unwrap() {
            created.insert(id);
        }
    }
    assert_eq!(created.len(), N);

    let listed = admin
        .tasks()
        .list(&TaskFilter::default(), PageRequest::new(1, 10))
        .await
        .unwrap();
    assert_eq!(listed.total, 2 * N as u64, "tasks after the storm");
    for &id in created.iter().chain(&pending) {
        assert_eq!(
            event_types(&admin, id).await,
            ["task.created"],
            "events of task {id}"
        );
    }

    let agent = admin
        .agents()
        .register(&RegisterAgent {
            name: "finisher".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut finished = HashSet::new();
    for _ in 0..2 * N {
        let claimed = claim_and_start(&admin, agent.id).await;
        let request_id = pending
            .iter()
            .position(|&p| p == claimed)
            .map(|i| format!("done-{i}"))
            .unwrap_or_else(|| Uuid::new_v4().to_string());
        let done = admin
            .tasks()
            .complete(
                claimed,
                &CompleteTask {
                    request_id: Some(request_id),
                    agent_id: Some(agent.id),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(done.state, TaskState::Completed);
        finished.insert(done.id);
    }
    assert_eq!(finished.len(), 2 * N);
}

/// The hot transitions run without a savepoint on SQLite (store
/// `begin_unguarded`) and open one only when their one-statement fast path
/// misses. 40 starts and 40 completions (no `request_id`) of pending tasks
/// miss it and fail with 409, racing 40 creations (themselves unguarded)
/// so that they share batches. Had a failing request run on without its
/// savepoint, it would have rolled its whole batch back and failed
/// creations with it; instead every creation is there with its event, and
/// the refused tasks are untouched.
#[tokio::test]
async fn a_fast_path_that_misses_fails_alone() {
    const N: usize = 40;
    let server = TestServer::start().await;
    let admin = server.admin();
    let agent = admin
        .agents()
        .register(&RegisterAgent {
            name: "starter".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let pending = pending_tasks(&admin, N).await;

    let mut storm = Vec::new();
    for &id in &pending {
        let starter = admin.clone();
        storm.push(tokio::spawn(async move {
            let start = StartTask {
                agent_id: Some(agent.id),
                ..Default::default()
            };
            refused_409(
                starter.tasks().start(id, &start).await,
                "a pending task cannot be started",
            );
            None
        }));
        let completer = admin.clone();
        storm.push(tokio::spawn(async move {
            let complete = CompleteTask {
                agent_id: Some(agent.id),
                ..Default::default()
            };
            refused_409(
                completer.tasks().complete(id, &complete).await,
                "a pending task cannot be completed",
            );
            None
        }));
        let creator = admin.clone();
        storm.push(tokio::spawn(async move {
            let created = creator.tasks().create(&task("s".into())).await;
            Some(created.expect("a creation batched with failing requests commits"))
        }));
    }
    let mut created = HashSet::new();
    for handle in storm {
        if let Some(task) = handle.await.unwrap() {
            created.insert(task.id);
        }
    }
    assert_eq!(created.len(), N);
    for &id in created.iter().chain(&pending) {
        assert_eq!(
            event_types(&admin, id).await,
            ["task.created"],
            "events of task {id}"
        );
    }
    for &id in &pending {
        let task = admin.tasks().get(id).await.unwrap();
        assert_eq!(task.state, TaskState::Pending, "refused task {id}");
    }
}

/// SQLite: the writer never checkpoints (a checkpoint inside a batch's
/// COMMIT held every queued request), so the checkpointer must: what was
/// written reaches the database file while the server runs, not only when
/// it closes (`store::checkpoint`). PostgreSQL has no WAL of ours to move.
#[tokio::test]
async fn sqlite_writes_reach_the_database_file_while_the_server_runs() {
    if orchestrator_tests::backend() != "sqlite" {
        return;
    }
    let server = TestServer::start().await;
    let file = server.data_dir().join("orch.db");
    let size = || std::fs::metadata(&file).expect("the database file").len();
    let before = size();
    let rows: Vec<NewLogEntry> = (0..1000)
        .map(|i| {
            let mut entry = NewLogEntry::new(LogCategory::Tool, "tool.exec");
            entry.payload = Some(serde_json::json!({"i": i, "pad": "x".repeat(300)}));
            entry
        })
        .collect();
    let admin = server.admin();
    // About 8 MB of rows and index entries, more than the WAL size at which
    // SQLite's own autocheckpoint would have run (1,000 pages).
    for _ in 0..20 {
        admin.logs().ingest(rows.clone()).await.unwrap();
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let now = size();
        if now > before + 4_000_000 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the database file stayed at {now} bytes (was {before}): the WAL was not checkpointed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// One thread of this process, from `/proc/self/task`.
struct ProcThread {
    name: String,
    /// `Cpus_allowed_list` as the kernel prints it (`1`, `0-3`).
    cpus: String,
    /// CPU time so far, in clock ticks (user + system).
    ticks: u64,
}

fn threads() -> Vec<ProcThread> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc/self/task").expect("/proc/self/task") {
        let dir = entry.unwrap().path();
        let (Ok(name), Ok(status), Ok(stat)) = (
            std::fs::read_to_string(dir.join("comm")),
            std::fs::read_to_string(dir.join("status")),
            std::fs::read_to_string(dir.join("stat")),
        ) else {
            continue; // the thread ended meanwhile
        };
        let cpus = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap_or_default()
            .trim()
            .to_owned();
        // Fields 14 and 15 (utime, stime) after the parenthesised name.
        let after_name = &stat[stat.rfind(')').unwrap() + 2..];
        let fields: Vec<&str> = after_name.split(' ').collect();
        let ticks = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
        found.push(ProcThread {
            name: name.trim().to_owned(),
            cpus,
            ticks,
        });
    }
    found
}

/// SQLite's hot writes (task create, claim, start, complete) run on the
/// store's writer thread, kept on one CPU with the writer connection's own
/// worker thread (`store::writer_thread`): the thread does the work of those
/// requests (its CPU time grows with them), and on a host with several
/// CPUs it shares its single CPU with one of sqlx's connection threads.
/// PostgreSQL has no such thread.
#[tokio::test]
async fn sqlite_hot_writes_run_on_the_writer_thread_beside_its_connection() {
    const TASKS: usize = 150;
    const WRITER: &str = "orch-sqlite-wri"; // the kernel keeps 15 bytes
    let server = TestServer::start().await;
    let admin = server.admin();
    let writer_ticks = || {
        threads()
            .into_iter()
            .filter(|t| t.name == WRITER)
            .map(|t| t.ticks)
            .sum::<u64>()
    };
    let before = writer_ticks();
    let agent = admin
        .agents()
        .register(&RegisterAgent {
            name: "writer-thread".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    for i in 0..TASKS {
        admin.tasks().create(&task(format!("w{i}"))).await.unwrap();
        let claimed = claim_and_start(&admin, agent.id).await;
        admin
            .tasks()
            .complete(
                claimed,
                &CompleteTask {
                    agent_id: Some(agent.id),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    }
    let all = threads();
    let writer: Vec<&ProcThread> = all.iter().filter(|t| t.name == WRITER).collect();
    if orchestrator_tests::backend() != "sqlite" {
        assert!(writer.is_empty(), "PostgreSQL has no SQLite writer thread");
        return;
    }
    assert_eq!(writer.len(), 1, "one writer thread for the one store");
    let spent = writer_ticks() - before;
    assert!(
        spent > 0,
        "the writer thread did none of the work of {} requests",
        TASKS * 4
    );
    let process_cpus = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| {
            l.strip_prefix("Cpus_allowed_list:")
                .map(|v| v.trim().to_owned())
        })
        .unwrap();
    let single = |cpus: &str| !cpus.contains(['-', ',']);
    if !single(&process_cpus) {
        let cpu = &writer[0].cpus;
        assert!(
            single(cpu),
            "the writer thread is kept on one CPU, not {cpu}"
        );
        assert!(
            all.iter()
                .any(|t| t.name.starts_with("sqlx-sqlite") && &t.cpus == cpu),
            "no sqlx connection thread shares the writer's CPU {cpu}"
        );
    }
}

/// Two tenants' agents claim, start and complete tasks all at once, so that
/// their moves share batches, whose event and platform log rows are written
/// at the commit (on PostgreSQL as one statement: the log rows of each
/// tenant are `WITH` parts of the event insert). Every task ends with one
/// event and one platform log row per move, each in its own tenant only.
#[tokio::test]
async fn a_batch_writes_each_tenants_events_and_log_rows() {
    const AGENTS: usize = 8;
    let server = TestServer::start().await;
    let second = server
        .service()
        .tenants()
        .create(&CreateTenant {
            name: "Batch Neighbour".into(),
            slug: None,
            request_id: None,
        })
        .await
        .unwrap();
    let tenants = [server.admin(), server.client(&second.admin_key.api_key)];
    let mut agents = Vec::new();
    for (t, admin) in tenants.iter().enumerate() {
        pending_tasks(admin, AGENTS).await;
        for i in 0..AGENTS {
            let agent = super::combined::register(admin, format!("mover-{t}-{i}"), vec![]).await;
            agents.push((t, agent));
        }
    }
    let batches = || async {
        (server.metric("orch_db_write_batches_total").await).expect("the batches metric")
    };
    let before = batches().await;
    let mut moves = Vec::new();
    for &(t, agent) in &agents {
        let admin = tenants[t].clone();
        moves.push(tokio::spawn(async move {
            let id = claim_and_start(&admin, agent).await;
            let done = admin
                .tasks()
                .complete(
                    id,
                    &CompleteTask {
                        agent_id: Some(agent),
                        ..Default::default()
                    },
                )
                .await
                .unwrap();
            assert_eq!(done.state, TaskState::Completed);
            (t, id)
        }));
    }
    let mut done = Vec::new();
    for handle in moves {
        done.push(handle.await.unwrap());
    }
    let (commits, moves) = (batches().await - before, (3 * agents.len()) as f64);
    assert!(
        commits < moves,
        "{moves} moves took {commits} commits: none shared a batch"
    );
    for (t, id) in done {
        let (own, other) = (&tenants[t], &tenants[1 - t]);
        assert_eq!(
            event_types(own, id).await,
            [
                "task.created",
                "task.state_changed",
                "task.state_changed",
                "task.state_changed"
            ],
            "events of task {id}"
        );
        assert_eq!(
            super::combined::state_moves(own, id).await,
            ["pending", "claimed", "in_progress", "completed"],
            "state moves of task {id}"
        );
        let logs = |client: &Client| {
            let client = client.clone();
            async move {
                client
                    .logs()
                    .query(&LogQuery {
                        filter: LogFilter {
                            task_id: Some(id),
                            ..Default::default()
                        },
                        ..Default::default()
                    })
                    .await
                    .unwrap()
                    .items
            }
        };
        let mut operations: Vec<String> =
            logs(own).await.into_iter().map(|r| r.operation).collect();
        operations.reverse(); // newest first → in order
        assert_eq!(
            operations,
            ["task.claim", "task.start", "task.complete"],
            "log rows of task {id}"
        );
        assert!(
            logs(other).await.is_empty(),
            "task {id}'s rows in the other tenant"
        );
        assert!(
            event_types(other, id).await.is_empty(),
            "task {id}'s events in the other tenant"
        );
    }
}
