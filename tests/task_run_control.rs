//! Run control of tasks (issue 30): retry policies with backoff from the
//! moment of failure, delayed tasks and expiry, leases with heartbeats and
//! fencing, cooperative cancellation, dedupe keys. Over HTTP (and the SDK
//! for the worker channel), on SQLite and PostgreSQL.

use chrono::{DateTime, Duration, Utc};
use futures_util::StreamExt;
use orchestrator_client::api::{
    CreateTask, RegisterWorker, ServerMessage, TaskHeartbeat, WorkerAgentSpec,
};
use orchestrator_client::{Client, WorkerChannel};
use orchestrator_core::clock::ManualClock;
use orchestrator_tests::TestServer;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;

struct Api<'a> {
    server: &'a TestServer,
    http: reqwest::Client,
}

impl Api<'_> {
    fn new(server: &TestServer) -> Api<'_> {
        Api {
            server,
            http: server.http(),
        }
    }

    async fn call(&self, method: &str, path: &str, key: &str, body: Value) -> (StatusCode, Value) {
        let url = self.server.at(&format!("/api/v1{path}"));
        let request = match method {
            "GET" => self.http.get(url),
            _ => self.http.post(url).json(&body),
        };
        let response = request.bearer_auth(key).send().await.unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    async fn ok(&self, method: &str, path: &str, key: &str, body: Value) -> Value {
        let (status, value) = self.call(method, path, key, body).await;
        assert!(status.is_success(), "{method} {path}: {status} {value}");
        value["data"].clone()
    }

    async fn create(&self, extra: Value) -> Value {
        let mut body = json!({ "title": "t", "type": "code" });
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let admin = self.server.admin_key.clone();
        self.ok("POST", "/tasks", &admin, body).await
    }

    /// Registers an agent with its own key: (id, key).
    async fn agent(&self, name: &str) -> (String, String) {
        let admin = self.server.admin_key.clone();
        let agent = self
            .ok(
                "POST",
                "/agents/register",
                &admin,
                json!({ "name": name, "issue_api_key": true }),
            )
            .await;
        (
            agent["id"].as_str().unwrap().to_owned(),
            agent["api_key"].as_str().unwrap().to_owned(),
        )
    }

    /// The claim answer (status, task).
    async fn claim(&self, agent: &(String, String)) -> (StatusCode, Value) {
        let body = json!({ "agent_id": agent.0 });
        self.call("POST", "/tasks/claim", &agent.1, body).await
    }

    async fn task(&self, id: &str) -> Value {
        let admin = self.server.admin_key.clone();
        self.ok("GET", &format!("/tasks/{id}"), &admin, json!({}))
            .await
    }

    async fn heartbeat(
        &self,
        id: &str,
        who: &(String, String),
        attempt: i64,
    ) -> (StatusCode, Value) {
        let body =
            json!({ "agent_id": who.0, "attempt": attempt, "progress": { "done": attempt } });
        self.call("POST", &format!("/tasks/{id}/heartbeat"), &who.1, body)
            .await
    }

    async fn events(&self, kind: &str) -> Vec<Value> {
        let admin = self.server.admin_key.clone();
        let page = self
            .ok(
                "GET",
                &format!("/events?type={kind}&limit=100"),
                &admin,
                json!({}),
            )
            .await;
        page.as_array().cloned().unwrap_or_default()
    }
}

fn time(value: &Value) -> DateTime<Utc> {
    value
        .as_str()
        .unwrap_or_else(|| panic!("a time, got {value}"))
        .parse()
        .unwrap()
}

fn seconds(d: Duration) -> f64 {
    d.num_milliseconds() as f64 / 1000.0
}

#[tokio::test]
async fn backoff_counts_from_the_failure_on_the_clock() {
    // The clock starts at real time and moves less than a minute in all,
    // so the agent (whose heartbeats are real time) stays active.
    let start = DateTime::from_timestamp(Utc::now().timestamp(), 0).unwrap();
    let clock = Arc::new(ManualClock::new(start));
    let given = clock.clone();
    let server = TestServer::start_with(move |c| c.core.clock = given).await;
    let api = Api::new(&server);
    let agent = api.agent("retrier").await;
    let policy = json!({ "max_attempts": 6, "initial_interval_seconds": 1,
        "backoff_coefficient": 2.0, "max_interval_seconds": 5, "jitter": 0.0 });
    let task = api.create(json!({ "retry_policy": policy })).await;
    let id = task["id"].as_str().unwrap().to_owned();
    assert_eq!(task["attempt"], 1);
    assert_eq!(task["retry_policy"]["max_attempts"], 6);
    assert!(task["run_at"].is_null());

    let mut delays = Vec::new();
    for attempt in 1..=6 {
        let (status, claimed) = api.claim(&agent).await;
        assert_eq!(status, StatusCode::OK, "attempt {attempt}: {claimed}");
        assert_eq!(claimed["data"]["id"], id.as_str());
        assert_eq!(claimed["data"]["attempt"], attempt);
        // Time passes while the attempt runs: the delay counts from the failure.
        clock.advance(Duration::seconds(2));
        let failed_at = clock_now(&clock);
        let body = json!({ "agent_id": agent.0, "attempt": attempt,
            "error": { "category": "tool", "message": "boom" } });
        let after = api
            .ok("POST", &format!("/tasks/{id}/fail"), &agent.1, body)
            .await;
        if attempt == 6 {
            assert_eq!(after["state"], "failed", "{after}");
            break;
        }
        assert_eq!(after["state"], "pending");
        assert_eq!(after["attempt"], attempt + 1);
        let run_at = time(&after["run_at"]);
        delays.push(seconds(run_at - failed_at));
        // Not claimable before run_at.
        clock.set(run_at - Duration::milliseconds(500));
        let (status, body) = api.claim(&agent).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "claimable early: {body}");
        clock.set(run_at);
    }
    assert_eq!(delays, vec![1.0, 2.0, 4.0, 5.0, 5.0]);
    let scheduled = api.events("task.retry_scheduled").await;
    assert_eq!(scheduled.len(), 5);
    assert_eq!(scheduled[0]["data"]["delay_seconds"], 1.0);
    assert_eq!(scheduled[0]["data"]["error_category"], "tool");

    // Jitter 0.2: every delay in its band. retry_after_seconds overrides.
    let policy = json!({ "max_attempts": 10, "initial_interval_seconds": 2, "jitter": 0.2 });
    let task = api.create(json!({ "retry_policy": policy })).await;
    let id = task["id"].as_str().unwrap().to_owned();
    for attempt in 1..=4 {
        api.claim(&agent).await;
        let now = clock_now(&clock);
        let mut body = json!({ "agent_id": agent.0 });
        if attempt == 4 {
            body["retry_after_seconds"] = json!(3);
        }
        let after = api
            .ok("POST", &format!("/tasks/{id}/fail"), &agent.1, body)
            .await;
        let delay = seconds(time(&after["run_at"]) - now);
        if attempt == 4 {
            assert_eq!(delay, 3.0);
        } else {
            let base = 2.0 * 2f64.powi(attempt - 1);
            assert!(
                delay >= base * 0.8 - 0.001 && delay <= base * 1.2 + 0.001,
                "attempt {attempt}: {delay} outside the band of {base}"
            );
        }
        clock.set(time(&after["run_at"]));
    }
    let (_, claimed) = api.claim(&agent).await;
    assert_eq!(claimed["data"]["id"], id.as_str());
    let body = json!({ "agent_id": agent.0, "output": {} });
    api.ok("POST", &format!("/tasks/{id}/complete"), &agent.1, body)
        .await;

    // A non-retryable category, or recoverable: false, fails at once.
    let policy = json!({ "max_attempts": 5, "non_retryable_categories": ["auth"] });
    for error in [
        json!({ "category": "auth" }),
        json!({ "category": "tool", "recoverable": false }),
    ] {
        let task = api.create(json!({ "retry_policy": policy })).await;
        let id = task["id"].as_str().unwrap().to_owned();
        let (_, claimed) = api.claim(&agent).await;
        assert_eq!(claimed["data"]["id"], id.as_str(), "{claimed}");
        let body = json!({ "agent_id": agent.0, "error": error });
        let after = api
            .ok("POST", &format!("/tasks/{id}/fail"), &agent.1, body)
            .await;
        assert_eq!(after["state"], "failed", "{error}: {after}");
        assert_eq!(after["attempt"], 1);
    }

    // Expiry: still pending at expires_at → cancelled (reason expired).
    let task = api
        .create(json!({ "ttl_seconds": 10, "delay_seconds": 3600 }))
        .await;
    let id = task["id"].as_str().unwrap().to_owned();
    assert_eq!(
        time(&task["expires_at"]),
        clock_now(&clock) + Duration::seconds(10)
    );
    clock.advance(Duration::seconds(11));
    let started = Instant::now();
    loop {
        let task = api.task(&id).await;
        if task["state"] == "cancelled" {
            break;
        }
        assert!(started.elapsed().as_secs_f64() < 3.0, "not expired: {task}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let expired = api.events("task.expired").await;
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0]["data"]["task_id"], id.as_str());
    let changes = api.events("task.state_changed").await;
    assert!(changes.iter().any(|e| e["data"]["task_id"] == id.as_str()
        && e["data"]["to_state"] == "cancelled"
        && e["data"]["reason"] == "expired"));
}

fn clock_now(clock: &ManualClock) -> DateTime<Utc> {
    use orchestrator_core::clock::Clock;
    clock.now()
}

#[tokio::test]
async fn run_control_fields_are_checked() {
    let server = TestServer::start().await;
    let api = Api::new(&server);
    let admin = server.admin_key.clone();
    let cases = [
        (
            json!({ "retry_policy": { "max_attempts": 3 }, "auto_retry": true, "max_retries": 2 }),
            vec!["retry_policy", "auto_retry", "max_retries"],
        ),
        (
            json!({ "retry_policy": { "max_attempts": 0 } }),
            vec!["retry_policy.max_attempts"],
        ),
        (
            json!({ "retry_policy": { "max_attempts": 2, "jitter": 1.5 } }),
            vec!["retry_policy.jitter"],
        ),
        (
            json!({ "run_at": "2030-01-01T00:00:00Z", "delay_seconds": 5 }),
            vec!["run_at", "delay_seconds"],
        ),
        (
            json!({ "heartbeat_timeout_seconds": 4 }),
            vec!["heartbeat_timeout_seconds"],
        ),
        (json!({ "delay_seconds": -1 }), vec!["delay_seconds"]),
        (json!({ "dedupe_key": "" }), vec!["dedupe_key"]),
    ];
    for (extra, fields) in cases {
        let mut body = json!({ "title": "t", "type": "code" });
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let (status, answer) = api.call("POST", "/tasks", &admin, body).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{extra}: {answer}"
        );
        assert_eq!(answer["error"]["code"], "SCHEMA_VALIDATION_FAILED");
        for field in fields {
            assert!(
                answer["error"]["details"]["issues"]["fieldErrors"][field].is_array(),
                "{extra}: {field} not named in {answer}"
            );
        }
    }
    let page = api.ok("GET", "/tasks", &admin, json!({})).await;
    assert_eq!(
        page.as_array().map(Vec::len).unwrap_or(0),
        0,
        "a refused create wrote: {page}"
    );
}

/// A worker on the channel with one agent tagged `role:rc`.
async fn channel_worker(server: &TestServer) -> (WorkerChannel, uuid::Uuid) {
    let registered = server
        .admin()
        .workers()
        .register(&RegisterWorker {
            name: "rc-box".into(),
            agents: Some(vec![WorkerAgentSpec {
                name: "rc".into(),
                routing_tags: Some(vec!["role:rc".into()]),
                execution_mode: None,
            }]),
            ..Default::default()
        })
        .await
        .unwrap();
    let worker = Client::new(&server.url)
        .unwrap()
        .with_api_key(&registered.worker_api_key);
    let mut channel = worker.workers().connect(false).await.unwrap();
    let ready = next_frame(&mut channel, 10.0).await;
    assert!(matches!(ready, Some(ServerMessage::ConnectionReady { .. })));
    (channel, registered.agents[0].id)
}

async fn next_frame(channel: &mut WorkerChannel, within: f64) -> Option<ServerMessage> {
    let wait = std::time::Duration::from_secs_f64(within);
    match tokio::time::timeout(wait, channel.next()).await {
        Ok(frame) => Some(frame.expect("open").expect("readable")),
        Err(_) => None,
    }
}

#[tokio::test]
async fn a_delayed_task_reaches_a_waiting_worker_at_its_run_at() {
    let server = TestServer::start().await;
    let api = Api::new(&server);
    let (mut channel, agent_id) = channel_worker(&server).await;
    // Let the channel's first rounds pass.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let created_at = Instant::now();
    let task = api
        .create(json!({ "role": "rc", "delay_seconds": 2 }))
        .await;
    let id = task["id"].as_str().unwrap().to_owned();
    assert!(task["run_at"].is_string());
    // Not before run_at...
    assert!(
        next_frame(&mut channel, 1.0).await.is_none(),
        "assigned before run_at"
    );
    // ...and within 1 s of it, with nothing else happening.
    let frame = next_frame(&mut channel, 2.5).await;
    let elapsed = created_at.elapsed().as_secs_f64();
    match frame {
        Some(ServerMessage::TaskAssigned { agent_id: a, task }) => {
            assert_eq!(a, agent_id);
            assert_eq!(task.id.to_string(), id);
            assert_eq!(task.attempt, 1);
        }
        other => panic!("expected task.assigned, got {other:?}"),
    }
    assert!(
        (1.9..=2.9).contains(&elapsed),
        "assigned {elapsed:.2} s after create, for a 2 s delay"
    );

    // Reschedule: only while pending.
    let admin = server.admin_key.clone();
    let (status, answer) = api
        .call(
            "POST",
            &format!("/tasks/{id}/reschedule"),
            &admin,
            json!({ "delay_seconds": 5 }),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{answer}");
    let other = api
        .create(json!({ "title": "later", "delay_seconds": 3600 }))
        .await;
    let other_id = other["id"].as_str().unwrap();
    let moved = api
        .ok(
            "POST",
            &format!("/tasks/{other_id}/reschedule"),
            &admin,
            json!({ "run_at": "2099-01-01T00:00:00Z" }),
        )
        .await;
    assert_eq!(
        time(&moved["run_at"]),
        "2099-01-01T00:00:00Z".parse::<DateTime<Utc>>().unwrap()
    );
}

#[tokio::test]
async fn leases_expire_fence_stale_holders_and_carry_cancellation() {
    let server = TestServer::start().await;
    let api = Api::new(&server);
    let agent = api.agent("leaser").await;
    let other = api.agent("bystander").await;
    let policy = json!({ "max_attempts": 3, "initial_interval_seconds": 0, "jitter": 0.0 });
    let task = api
        .create(json!({ "heartbeat_timeout_seconds": 5, "retry_policy": policy }))
        .await;
    let id = task["id"].as_str().unwrap().to_owned();
    let (_, claimed) = api.claim(&agent).await;
    assert_eq!(claimed["data"]["attempt"], 1);
    let (status, ack) = api.heartbeat(&id, &agent, 1).await;
    assert_eq!(status, StatusCode::OK, "{ack}");
    assert_eq!(ack["data"]["ack"], true);
    assert_eq!(ack["data"]["cancel_requested"], false);
    assert!(ack["data"]["lease_expires_at"].is_string());
    let last_beat = Instant::now();
    let (status, _) = api.heartbeat(&id, &other, 1).await;
    assert_eq!(status, StatusCode::CONFLICT, "a heartbeat by a non-holder");
    assert_eq!(api.task(&id).await["progress"]["done"], 1);

    // It stops heartbeating: released within timeout + 1 s.
    loop {
        let task = api.task(&id).await;
        if task["state"] == "pending" {
            assert_eq!(task["attempt"], 2);
            assert_eq!(task["error"]["category"], "lease_expired");
            break;
        }
        let waited = last_beat.elapsed().as_secs_f64();
        assert!(
            waited < 6.5,
            "still held {waited:.1} s after the last heartbeat: {task}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(last_beat.elapsed().as_secs_f64() >= 4.9);
    assert_eq!(api.events("task.lease_expired").await.len(), 1);
    assert_eq!(
        server.metric("orch_task_leases_expired_total").await,
        Some(1.0)
    );
    assert_eq!(
        server.metric("orch_task_retries_scheduled_total").await,
        Some(1.0)
    );

    // The same agent claims attempt 2; its stale attempt-1 calls are LEASE_LOST.
    let (_, again) = api.claim(&agent).await;
    assert_eq!(again["data"]["attempt"], 2);
    for op in ["complete", "start", "fail"] {
        let body = json!({ "agent_id": agent.0, "attempt": 1 });
        let (status, answer) = api
            .call("POST", &format!("/tasks/{id}/{op}"), &agent.1, body)
            .await;
        assert_eq!(status, StatusCode::CONFLICT, "{op}: {answer}");
        assert_eq!(answer["error"]["code"], "LEASE_LOST", "{op}: {answer}");
    }
    let (status, answer) = api.heartbeat(&id, &agent, 1).await;
    assert_eq!(answer["error"]["code"], "LEASE_LOST", "{status} {answer}");
    let body = json!({ "agent_id": agent.0, "attempt": 2, "output": { "ok": true } });
    let done = api
        .ok("POST", &format!("/tasks/{id}/complete"), &agent.1, body)
        .await;
    assert_eq!(done["state"], "completed");

    // A holder heartbeating every 2 s keeps a 5 s lease for 30 s.
    let task = api.create(json!({ "heartbeat_timeout_seconds": 5 })).await;
    let id = task["id"].as_str().unwrap().to_owned();
    api.claim(&agent).await;
    for _ in 0..15 {
        let (status, ack) = api.heartbeat(&id, &agent, 1).await;
        assert_eq!(status, StatusCode::OK, "released while heartbeating: {ack}");
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    }
    assert_eq!(api.task(&id).await["state"], "claimed");

    // Cancel of a heartbeating task: seen in the next heartbeat answer.
    let admin = server.admin_key.clone();
    let cancelled = api
        .ok("POST", &format!("/tasks/{id}/cancel"), &admin, json!({}))
        .await;
    assert_eq!(cancelled["state"], "claimed");
    assert_eq!(cancelled["cancel_requested"], true);
    let (_, ack) = api.heartbeat(&id, &agent, 1).await;
    assert_eq!(ack["data"]["cancel_requested"], true, "{ack}");
    let body = json!({ "agent_id": agent.0, "error": { "category": "cancelled" } });
    let ended = api
        .ok("POST", &format!("/tasks/{id}/fail"), &agent.1, body)
        .await;
    assert_eq!(ended["state"], "cancelled", "{ended}");
}

#[tokio::test]
async fn cancellation_reaches_the_worker_channel() {
    let server = TestServer::start().await;
    let api = Api::new(&server);
    let (mut channel, _agent_id) = channel_worker(&server).await;
    let task = api
        .create(json!({ "role": "rc", "heartbeat_timeout_seconds": 60 }))
        .await;
    let id = task["id"].as_str().unwrap().to_owned();
    match next_frame(&mut channel, 10.0).await {
        Some(ServerMessage::TaskAssigned { .. }) => {}
        other => panic!("expected task.assigned, got {other:?}"),
    }
    let admin = server.admin_key.clone();
    api.ok("POST", &format!("/tasks/{id}/cancel"), &admin, json!({}))
        .await;
    loop {
        match next_frame(&mut channel, 5.0).await {
            Some(ServerMessage::TaskCancelRequested { task_id, .. }) => {
                assert_eq!(task_id.to_string(), id);
                break;
            }
            Some(_) => continue,
            None => panic!("no task.cancel_requested frame"),
        }
    }
}

#[tokio::test]
async fn twenty_concurrent_creates_with_one_dedupe_key_make_one_task() {
    let server = TestServer::start().await;
    let api = Api::new(&server);
    let admin = server.admin_key.clone();
    let creates = (0..20).map(|_| {
        let body = json!({ "title": "once", "type": "code", "dedupe_key": "nightly-2030-01-01" });
        api.call("POST", "/tasks", &admin, body)
    });
    let answers = futures_util::future::join_all(creates).await;
    let fresh: Vec<&Value> = answers
        .iter()
        .filter(|(s, _)| *s == StatusCode::CREATED)
        .map(|(_, v)| v)
        .collect();
    assert_eq!(fresh.len(), 1, "{answers:?}");
    assert_eq!(fresh[0]["meta"]["deduplicated"], false);
    let id = fresh[0]["data"]["id"].clone();
    for (status, answer) in answers.iter().filter(|(s, _)| *s != StatusCode::CREATED) {
        assert_eq!(*status, StatusCode::OK, "{answer}");
        assert_eq!(answer["meta"]["deduplicated"], true);
        assert_eq!(answer["data"]["id"], id);
    }
    assert_eq!(
        server.metric("orch_task_dedupe_hits_total").await,
        Some(19.0)
    );
    // Once the task ends the key is free.
    let agent = api.agent("deduper").await;
    let (_, claimed) = api.claim(&agent).await;
    assert_eq!(claimed["data"]["id"], id);
    let id = id.as_str().unwrap();
    let body = json!({ "agent_id": agent.0, "output": {} });
    api.ok("POST", &format!("/tasks/{id}/complete"), &agent.1, body)
        .await;
    let body = json!({ "title": "again", "type": "code", "dedupe_key": "nightly-2030-01-01" });
    let (status, answer) = api.call("POST", "/tasks", &admin, body).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert_ne!(answer["data"]["id"].as_str(), Some(id));

    // Workflows too.
    let (playbook, workspace) = server.launch_fixtures("rc-playbook", "rc-space").await;
    let launch = || {
        let body = json!({ "playbook_id": playbook, "workspace_id": workspace,
            "name": "once", "dedupe_key": "wf-key" });
        api.call("POST", "/workflows", &admin, body)
    };
    let launches = futures_util::future::join_all((0..5).map(|_| launch())).await;
    let created: Vec<_> = launches
        .iter()
        .filter(|(s, _)| *s == StatusCode::CREATED)
        .collect();
    assert_eq!(created.len(), 1, "{launches:?}");
    for (status, answer) in &launches {
        assert!(status.is_success(), "{answer}");
        assert_eq!(answer["data"]["id"], created[0].1["data"]["id"]);
    }
}

#[tokio::test]
async fn the_sdk_heartbeats_and_reads_run_control_fields() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let task = admin
        .tasks()
        .create(&CreateTask {
            title: "sdk".into(),
            task_type: "code".into(),
            heartbeat_timeout_seconds: Some(30),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(task.heartbeat_timeout_seconds, Some(30));
    let api = Api::new(&server);
    let agent = api.agent("sdk-agent").await;
    api.claim(&agent).await;
    let holder = server.client(&agent.1);
    let ack = holder
        .tasks()
        .heartbeat(
            task.id,
            &TaskHeartbeat {
                attempt: Some(1),
                progress: Some(json!({ "pct": 50 })),
                agent_id: None,
            },
        )
        .await
        .unwrap();
    assert!(ack.ack && !ack.cancel_requested);
    assert!(ack.lease_expires_at.is_some());
    let read = admin.tasks().get(task.id).await.unwrap();
    assert_eq!(read.progress, Some(json!({ "pct": 50 })));
    assert!(read.progress_at.is_some());
}
