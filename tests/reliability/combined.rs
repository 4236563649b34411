//! Combined statements (issue 14, `store::combine`): the claims, the
//! starts, and the completions, that wait for the writer at the same time run
//! as one statement (a claim function over the list; `UPDATE ... FROM` a
//! list). Each request must still move its own task only, with its own
//! values, exactly once; each claim must get a task its agent may take and
//! no one else got; and every request that the statement does not serve (a
//! repeat, someone else's task, a second claim for the same agent) must get
//! the answer it would get alone.

use super::group_commit::pending_tasks;
use orchestrator_client::Client;
use orchestrator_client::api::{
    ClaimTask, CompleteTask, CreateTask, PageRequest, Priority, RegisterAgent, StartTask, Task,
    TaskFilter, TaskState,
};
use orchestrator_server::ServerConfig;
use orchestrator_tests::TestServer;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use uuid::Uuid;

/// Agents, each holding one claimed task: `(agent, task)`.
async fn holders(admin: &Client, n: usize) -> Vec<(Uuid, Uuid)> {
    let mut held = Vec::new();
    pending_tasks(admin, n).await;
    for i in 0..n {
        let agent = admin
            .agents()
            .register(&RegisterAgent {
                name: format!("holder-{i}"),
                ..Default::default()
            })
            .await
            .unwrap()
            .id;
        let task = admin
            .tasks()
            .claim(&ClaimTask {
                agent_id: agent,
                ..Default::default()
            })
            .await
            .unwrap()
            .expect("a pending task for each agent");
        held.push((agent, task.id));
    }
    held
}

fn start_as(agent: Uuid) -> StartTask {
    StartTask {
        agent_id: Some(agent),
        ..Default::default()
    }
}

/// Task `i`'s completion: its own output, metrics on even tasks, and a
/// failed verification on every third (→ `output_pending_assessment`).
fn completion(agent: Uuid, i: usize) -> CompleteTask {
    CompleteTask {
        agent_id: Some(agent),
        output: Some(json!({ "n": i })),
        metrics: i.is_multiple_of(2).then(|| json!({ "tokens": i })),
        git_info: i
            .is_multiple_of(5)
            .then(|| json!({ "sha": format!("c{i}") })),
        verification: i.is_multiple_of(3).then(|| json!({ "passed": false })),
        ..Default::default()
    }
}

/// Every task is started twice by its holder and once by another agent,
/// all at once; then completed twice by its holder and once by another
/// agent, all at once. The holder's two starts both answer 200 with the task
/// in progress (the second is a repeat); the other agent's answers 403; of
/// the holder's two completions one answers 200 and the repeat 409, and
/// the other agent's is refused (403, or 409 once the task is done); each
/// task ends
/// with its own output, metrics, git info and state, and one event per move.
#[tokio::test]
async fn combined_moves_each_change_their_own_task_once() {
    const N: usize = 40;
    let server = TestServer::start().await;
    let admin = server.admin();
    let held = holders(&admin, N).await;

    let mut starts = Vec::new();
    for (i, &(agent, task)) in held.iter().enumerate() {
        let stranger = held[(i + 1) % N].0;
        for who in [agent, stranger, agent] {
            let client = admin.clone();
            starts.push(tokio::spawn(async move {
                (
                    who == agent,
                    client.tasks().start(task, &start_as(who)).await,
                )
            }));
        }
    }
    for handle in starts {
        match handle.await.unwrap() {
            (true, answer) => {
                let task = answer.expect("the holder's start (or its repeat) answers the task");
                assert_eq!(task.state, TaskState::InProgress);
            }
            (false, answer) => {
                let refused = answer.expect_err("another agent's start is refused");
                assert_eq!(refused.status(), Some(403), "{refused}");
            }
        }
    }

    let mut completions = Vec::new();
    for (i, &(agent, task)) in held.iter().enumerate() {
        let stranger = held[(i + 1) % N].0;
        for who in [agent, stranger, agent] {
            let client = admin.clone();
            completions.push(tokio::spawn(async move {
                let answer = client.tasks().complete(task, &completion(who, i)).await;
                (i, who == agent, answer)
            }));
        }
    }
    let mut completed = vec![0; N];
    for handle in completions {
        match handle.await.unwrap() {
            (i, true, Ok(task)) => {
                assert_eq!(task.id, held[i].1);
                assert_eq!(
                    task.output,
                    Some(json!({ "n": i })),
                    "the answer is task {i}'s"
                );
                completed[i] += 1;
            }
            (_, true, Err(refused)) => assert_eq!(refused.status(), Some(409), "{refused}"),
            (_, false, answer) => {
                // 403 while the task is in progress; once the holder's
                // completion is in, the state answers first (409).
                let refused = answer.expect_err("another agent's completion is refused");
                assert!(matches!(refused.status(), Some(403 | 409)), "{refused}");
            }
        }
    }
    assert!(
        completed.iter().all(|&n| n == 1),
        "each task completed exactly once: {completed:?}"
    );

    for (i, &(agent, id)) in held.iter().enumerate() {
        let task = admin.tasks().get(id).await.unwrap();
        let expected = if i.is_multiple_of(3) {
            TaskState::OutputPendingAssessment
        } else {
            TaskState::Completed
        };
        assert_eq!(task.state, expected, "task {i}");
        assert_eq!(task.assigned_agent_id, Some(agent), "task {i}");
        let sent = completion(agent, i);
        assert_eq!(task.output, sent.output, "task {i}");
        assert_eq!(task.metrics, sent.metrics, "task {i}");
        assert_eq!(task.git_info, sent.git_info, "task {i}");
        assert_eq!(task.verification, sent.verification, "task {i}");
        assert!(task.started_at.is_some(), "task {i}");
        assert_eq!(
            task.completed_at.is_some(),
            expected == TaskState::Completed,
            "task {i}"
        );
        let mut moves = state_moves(&admin, id).await;
        moves.sort_unstable();
        let mut want = vec!["pending", "claimed", "in_progress", expected.as_str()];
        want.sort_unstable();
        assert_eq!(moves, want, "the state changes of task {i}");
    }

    // The moves above were combined where the store combines (PostgreSQL):
    // some statement served several requests. SQLite runs each alone.
    let statements = server.metric("orch_db_combined_statements_total").await;
    let served = server.metric("orch_db_combined_requests_total").await;
    let (statements, served) = (statements.unwrap_or(-1.0), served.unwrap_or(-1.0));
    if orchestrator_tests::backend() == "postgres" {
        // At most every create and claim (one at a time above, a statement
        // each), and every start and completion that changed a task (4 × N).
        assert!(
            statements >= 1.0 && served > statements && served <= 4.0 * N as f64,
            "{statements} combined statements served {served} requests"
        );
    } else {
        assert_eq!((statements, served), (0.0, 0.0));
    }
}

fn plain_task(title: String) -> CreateTask {
    CreateTask {
        title,
        task_type: "code".into(),
        ..Default::default()
    }
}

/// A new agent named `name` with `tags` as its routing tags.
pub(super) async fn register(admin: &Client, name: String, tags: Vec<String>) -> Uuid {
    admin
        .agents()
        .register(&RegisterAgent {
            name,
            routing_tags: Some(tags),
            ..Default::default()
        })
        .await
        .unwrap()
        .id
}

/// The states task `id` moved to, in its events' order.
pub(super) async fn state_moves(admin: &Client, id: Uuid) -> Vec<String> {
    let events = super::group_commit::events_of(admin, id).await;
    events
        .iter()
        .filter_map(|e| e.data.get("to_state").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

/// How often task `id` was claimed, by its events.
async fn claimed_events(admin: &Client, id: Uuid) -> usize {
    let moves = state_moves(admin, id).await;
    moves.iter().filter(|m| *m == "claimed").count()
}

/// 40 agents claim twice each, all 80 claims at once, for 30 tasks: 5 that
/// each prefer one agent, 5 high-priority ones that need the tag
/// `role:reviewer` (10 agents have it), 20 plain ones. Every task is claimed
/// exactly once, by an agent allowed to take it (a preferred task by its
/// agent; a reviewer task by a reviewer); no agent gets two tasks, and an
/// agent's two claims answer the same task (the second finds it held), or
/// both nothing. On PostgreSQL some statement served several claims.
#[tokio::test]
async fn combined_claims_give_each_agent_its_own_eligible_task() {
    const AGENTS: usize = 40;
    let server = TestServer::start().await;
    let admin = server.admin();
    let mut agents = Vec::new();
    for i in 0..AGENTS {
        let tags = if (10..20).contains(&i) {
            vec!["role:reviewer".to_owned()]
        } else {
            Vec::new()
        };
        agents.push(register(&admin, format!("claimer-{i}"), tags).await);
    }
    let mut preferred = HashMap::new();
    for (i, &agent) in agents.iter().enumerate().take(5) {
        let task = CreateTask {
            preferred_agent_id: Some(agent),
            ..plain_task(format!("for-{i}"))
        };
        preferred.insert(admin.tasks().create(&task).await.unwrap().id, agent);
    }
    let mut reviews = HashSet::new();
    for i in 0..5 {
        let task = CreateTask {
            role: Some("reviewer".into()),
            priority: Some(Priority::High),
            ..plain_task(format!("review-{i}"))
        };
        reviews.insert(admin.tasks().create(&task).await.unwrap().id);
    }
    for i in 0..20 {
        admin
            .tasks()
            .create(&plain_task(format!("plain-{i}")))
            .await
            .unwrap();
    }
    let before = server
        .metric("orch_db_combined_statements_total")
        .await
        .unwrap_or(0.0);

    let mut claims = Vec::new();
    for (i, &agent) in agents.iter().enumerate() {
        for _ in 0..2 {
            let client = admin.clone();
            claims.push(tokio::spawn(async move {
                let request = ClaimTask {
                    agent_id: agent,
                    ..Default::default()
                };
                (i, client.tasks().claim(&request).await.unwrap())
            }));
        }
    }
    let mut answers: Vec<Vec<Option<Task>>> = vec![Vec::new(); AGENTS];
    for claim in claims {
        let (i, answer) = claim.await.unwrap();
        answers[i].push(answer);
    }

    let mut holder_of: HashMap<Uuid, usize> = HashMap::new();
    for (i, pair) in answers.iter().enumerate() {
        let ids: Vec<Option<Uuid>> = pair.iter().map(|t| t.as_ref().map(|t| t.id)).collect();
        assert_eq!(ids[0], ids[1], "agent {i}'s two claims answer one task");
        let Some(task) = &pair[0] else { continue };
        assert_eq!(task.state, TaskState::Claimed);
        assert_eq!(task.assigned_agent_id, Some(agents[i]), "agent {i}'s task");
        if let Some(&owner) = preferred.get(&task.id) {
            assert_eq!(owner, agents[i], "a preferred task goes to its agent");
        }
        if reviews.contains(&task.id) {
            assert!((10..20).contains(&i), "agent {i} has no reviewer tag");
        }
        if let Some(other) = holder_of.insert(task.id, i) {
            panic!("task {} went to agents {other} and {i}", task.id);
        }
    }
    // Each agent preferred by a task takes it first, the reviewer tasks
    // outrank the plain ones for reviewers, and there are more agents than
    // tasks: all 30 are claimed, 10 agents get nothing.
    assert_eq!(holder_of.len(), 30, "every task is claimed: {holder_of:?}");
    for id in holder_of.keys() {
        let task = admin.tasks().get(*id).await.unwrap();
        assert_eq!(task.state, TaskState::Claimed);
        assert_eq!(claimed_events(&admin, *id).await, 1, "one claim of {id}");
    }

    let after = server.metric("orch_db_combined_statements_total").await;
    let served = server.metric("orch_db_combined_requests_total").await;
    if orchestrator_tests::backend() == "postgres" {
        let (after, served) = (after.unwrap(), served.unwrap());
        assert!(
            after - before < (2 * AGENTS) as f64 && served <= (2 * AGENTS) as f64,
            "{} statements served {served} claims",
            after - before
        );
    } else {
        assert_eq!((after, served), (Some(0.0), Some(0.0)));
    }
}

/// Two replicas on one PostgreSQL database, each combining its own claims:
/// 12 agents, each claiming through both replicas at once, round after
/// round, and completing what it got, until the tasks run out. A claim for
/// an agent can race the other replica's claim for it; the race must be
/// resolved as it is without combining: one task for the agent, which both
/// claims answer (or, when no other task is left to try, the loser answers
/// nothing).
/// A request caught in a batch that a race rolled back is told to retry
/// (503 or 409), and is retried here as a client would.
#[tokio::test]
async fn claims_for_one_agent_through_two_replicas_give_it_one_task() {
    if orchestrator_tests::backend() != "postgres" {
        eprintln!("skipped: two replicas need PostgreSQL (set ORCH_TEST_DATABASE_URL)");
        return;
    }
    const AGENTS: usize = 12;
    const ROUNDS: usize = 6;
    let first = TestServer::start().await;
    let mut config = ServerConfig::new("127.0.0.1:0".parse().unwrap(), first.database_url());
    config.core.max_connections = 5;
    config.rate_limit_per_minute = 0;
    let second = orchestrator_server::start(config).await.unwrap();
    let replicas = [
        first.admin(),
        Client::new(format!("http://{}", second.local_addr()))
            .unwrap()
            .with_api_key(&first.admin_key),
    ];
    pending_tasks(&replicas[0], AGENTS * ROUNDS).await;
    let mut agents = Vec::new();
    for i in 0..AGENTS {
        agents.push(register(&replicas[0], format!("twin-{i}"), Vec::new()).await);
    }

    async fn claim(client: Client, agent: Uuid) -> Option<Task> {
        let request = ClaimTask {
            agent_id: agent,
            ..Default::default()
        };
        for _ in 0..20 {
            match client.tasks().claim(&request).await {
                Ok(task) => return task,
                Err(e) if matches!(e.status(), Some(409 | 503)) => continue,
                Err(e) => panic!("claim for {agent}: {e}"),
            }
        }
        panic!("claim for {agent} kept being told to retry")
    }

    let mut seen = HashSet::new();
    for round in 0..ROUNDS {
        let mut claims = Vec::new();
        for &agent in &agents {
            for client in &replicas {
                claims.push(tokio::spawn(claim(client.clone(), agent)));
            }
        }
        let mut answers = Vec::new();
        for claim in claims {
            answers.push(claim.await.unwrap());
        }
        for (i, pair) in answers.chunks(2).enumerate() {
            // Both answer the agent's one task; or, once every task left is
            // taken in the other replica's open batch, the later claim finds
            // nothing it can see or lock (204), as a claim does alone.
            let (a, b) = match (&pair[0], &pair[1]) {
                (Some(a), Some(b)) => (a, Some(b)),
                (Some(a), None) | (None, Some(a)) => (a, None),
                (None, None) => panic!("round {round}: no task for agent {i}"),
            };
            if let Some(b) = b {
                assert_eq!(
                    a.id, b.id,
                    "round {round}: agent {i}'s claims answer one task"
                );
            }
            assert_eq!(a.assigned_agent_id, Some(agents[i]));
            assert!(
                seen.insert(a.id),
                "round {round}: task {} claimed again",
                a.id
            );
            replicas[0]
                .tasks()
                .complete(
                    a.id,
                    &CompleteTask {
                        agent_id: Some(agents[i]),
                        output: Some(json!({ "round": round })),
                        ..Default::default()
                    },
                )
                .await
                .unwrap();
        }
    }
    for id in &seen {
        assert_eq!(
            claimed_events(&replicas[0], *id).await,
            1,
            "one claim of {id}"
        );
    }
    assert_eq!(seen.len(), AGENTS * ROUNDS);
}

/// Create `i`: its own title, priority, role, input, metadata and limits;
/// every fourth names a preferred agent and every fifth a `request_id`
/// (those take the ordinary path); the rest are plain.
fn create_request(i: usize, agent: Uuid) -> CreateTask {
    let priorities = [Priority::Low, Priority::Normal, Priority::High];
    CreateTask {
        description: i.is_multiple_of(2).then(|| format!("task number {i}")),
        priority: Some(priorities[i % 3]),
        role: i.is_multiple_of(3).then(|| format!("role{i}")),
        input: Some(json!({ "n": i })),
        metadata: Some(json!({ "of": i })),
        timeout_minutes: Some(1 + i as i64),
        max_retries: Some((i % 10) as i64),
        token_budget: i.is_multiple_of(2).then_some(i as f64 + 0.5),
        preferred_agent_id: i.is_multiple_of(4).then_some(agent),
        request_id: i.is_multiple_of(5).then(|| format!("create-{i}")),
        ..plain_task(format!("made-{i}"))
    }
}

/// 60 creates at once, plain ones among ones that name an agent or a
/// `request_id`, and 5 with a type outside the enum (422, nothing written). Each task is
/// stored with its own values and one `task.created` event; on PostgreSQL
/// some statement inserted several plain tasks.
#[tokio::test]
async fn combined_creates_each_insert_their_own_task() {
    const N: usize = 60;
    let server = TestServer::start().await;
    let admin = server.admin();
    let agent = register(&admin, "preferred".into(), Vec::new()).await;
    let metric = |name: &'static str| {
        let server = &server;
        async move { server.metric(name).await }
    };
    let before = metric("orch_db_combined_requests_total")
        .await
        .unwrap_or(0.0);
    let statements_before = metric("orch_db_combined_statements_total")
        .await
        .unwrap_or(0.0);
    let mut creates = Vec::new();
    for i in 0..N + 5 {
        let client = admin.clone();
        creates.push(tokio::spawn(async move {
            let request = if i < N {
                create_request(i, agent)
            } else {
                // Invalid: a type outside the enum.
                CreateTask {
                    task_type: "no-such-type".into(),
                    ..plain_task(format!("bad-{i}"))
                }
            };
            (i, client.tasks().create(&request).await)
        }));
    }
    let mut made = Vec::new();
    for create in creates {
        match create.await.unwrap() {
            (i, Ok(task)) if i < N => made.push((i, task)),
            (i, answer) if i < N => panic!("create {i}: {answer:?}"),
            (_, answer) => {
                let refused = answer.expect_err("an invalid create is refused");
                assert_eq!(refused.status(), Some(422), "{refused}");
            }
        }
    }
    for (i, answered) in &made {
        let sent = create_request(*i, agent);
        let task = admin.tasks().get(answered.id).await.unwrap();
        assert_eq!(task.title, sent.title, "task {i}");
        assert_eq!(task.state, TaskState::Pending, "task {i}");
        assert_eq!(task.description, sent.description, "task {i}");
        assert_eq!(Some(task.priority), sent.priority, "task {i}");
        assert_eq!(task.role, sent.role, "task {i}");
        assert_eq!(Some(task.input.clone()), sent.input, "task {i}");
        assert_eq!(Some(task.metadata.clone()), sent.metadata, "task {i}");
        assert_eq!(Some(task.timeout_minutes), sent.timeout_minutes, "task {i}");
        assert_eq!(Some(task.max_retries), sent.max_retries, "task {i}");
        assert_eq!(task.token_budget, sent.token_budget, "task {i}");
        assert_eq!(task.preferred_agent_id, sent.preferred_agent_id, "task {i}");
        let tags = task.required_tags.clone();
        let want: Vec<String> = sent.role.iter().map(|r| format!("role:{r}")).collect();
        assert_eq!(tags, want, "task {i}");
        assert_eq!(state_moves(&admin, task.id).await, ["pending"], "task {i}");
        assert_eq!(&task, answered, "task {i} as answered");
    }
    let listed = admin
        .tasks()
        .list(&TaskFilter::default(), PageRequest::default())
        .await
        .unwrap();
    assert_eq!(listed.total, N as u64, "only the valid creates wrote");

    let served = metric("orch_db_combined_requests_total").await;
    let statements = metric("orch_db_combined_statements_total").await;
    if orchestrator_tests::backend() == "postgres" {
        // Every plain create (not every fourth, not every fifth), in fewer
        // statements than creates.
        let plain = (0..N)
            .filter(|i| !i.is_multiple_of(4) && !i.is_multiple_of(5))
            .count() as f64;
        let (served, statements) = (served.unwrap() - before, statements.unwrap());
        assert_eq!(served, plain, "combined creates served");
        assert!(
            statements - statements_before < plain,
            "{plain} creates took {statements} - {statements_before} statements"
        );
    } else {
        assert_eq!((served, statements), (Some(0.0), Some(0.0)));
    }
}
