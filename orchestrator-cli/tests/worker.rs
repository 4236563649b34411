//! `orch worker run` against a real server, with a small shell script as
//! the command: a completed task (output from the last stdout line, logs
//! shipped), a failed task (exit code), a cancelled task (cancel_task
//! signal) and a drain that lets the running task finish.

use orchestrator_client::Client;
use orchestrator_client::api::fleet::ContainerFilter;
use orchestrator_client::api::{
    CreateTask, LogFilter, LogLevel, LogQuery, LogSource, PageRequest, SignalKind, SignalWorker,
    Task, TaskState,
};
use orchestrator_tests::TestServer;
use serde_json::json;
use std::path::Path;
use std::time::Duration;
use tokio::process::{Child, Command};
use uuid::Uuid;

mod common;

use common::eventually;

const SCRIPT: &str = r#"#!/bin/sh
input=$(cat)
case "$input" in
  *'"title":"fail'*) echo "about to fail" >&2; exit 3 ;;
  *'"title":"slow'*) sleep 30 ;;
  *'"title":"short'*) sleep 2 ;;
  *'"title":"hang'*) sleep 300 ;;
esac
echo "working on $ORCH_TASK_ID at $ORCH_URL"
[ -n "$ORCH_TASK_TOKEN" ] || exit 9
code() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $ORCH_TASK_TOKEN" "$ORCH_URL/api/v1$1"; }
own=$(code "/tasks/$ORCH_TASK_ID")
list=$(code /tasks)
echo "{\"done\": true, \"task\": \"$ORCH_TASK_ID\", \"own\": $own, \"list\": $list, \"leaked\": \"${ORCH_API_KEY:-}${ORCH_WORKER_KEY:-}\"}"
"#;

fn spawn_worker(server: &TestServer, dir: &Path, name: &str) -> Child {
    spawn_worker_with(server, dir, name, &[], None)
}

/// `orch worker run --name NAME --tag role:sh --concurrency 2 [EXTRA] -- sh task.sh`,
/// with `path` as PATH when given.
fn spawn_worker_with(
    server: &TestServer,
    dir: &Path,
    name: &str,
    extra: &[&str],
    path: Option<String>,
) -> Child {
    let script = dir.join("task.sh");
    std::fs::write(&script, SCRIPT).unwrap();
    let mut command = Command::new(common::ORCH);
    command
        .args([
            "worker",
            "run",
            "--name",
            name,
            "--tag",
            "role:sh",
            "--concurrency",
            "2",
        ])
        .args(extra)
        .arg("--")
        .arg("sh")
        .arg(&script)
        .env("ORCH_URL", &server.url)
        .env("ORCH_API_KEY", &server.admin_key)
        .env("ORCH_CONFIG", "/nonexistent/orch-config.json")
        .kill_on_drop(true);
    if let Some(path) = path {
        command.env("PATH", path);
    }
    command.spawn().expect("orch worker run starts")
}

fn task(title: &str) -> CreateTask {
    CreateTask {
        title: title.into(),
        task_type: "code".into(),
        role: Some("sh".into()),
        ..Default::default()
    }
}

async fn wait_for(admin: &Client, id: Uuid, done: impl Fn(&Task) -> bool) -> Task {
    eventually("the task's state", async || {
        done(&admin.tasks().get(id).await.unwrap())
    })
    .await;
    admin.tasks().get(id).await.unwrap()
}

async fn worker_id(admin: &Client, name: &str) -> Uuid {
    let online = async || {
        let workers = admin.fleet().workers().await.unwrap();
        workers
            .into_iter()
            .find(|w| w.name == name && w.status == "online")
            .map(|w| w.worker_id)
    };
    eventually("the worker comes online", async || online().await.is_some()).await;
    online().await.unwrap()
}

/// How many containers the fleet reports for `task_id`.
async fn reported(admin: &Client, task_id: Uuid) -> u64 {
    let filter = ContainerFilter {
        task_id: Some(task_id),
        ..Default::default()
    };
    admin
        .fleet()
        .containers(&filter, PageRequest::default())
        .await
        .unwrap()
        .total
}

#[tokio::test]
async fn worker_run_completes_fails_and_cancels_tasks() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let dir = tempfile::tempdir().unwrap();
    let mut worker = spawn_worker(&server, dir.path(), "sh-box");
    let worker_id = worker_id(&admin, "sh-box").await;

    let ok = admin.tasks().create(&task("ok")).await.unwrap();
    let done = wait_for(&admin, ok.id, |t| t.state.is_done()).await;
    assert_eq!(done.state, TaskState::Completed, "{:?}", done.error);
    // The command got a task token that reads its own task and nothing
    // else, and none of the worker's own keys.
    assert_eq!(
        done.output,
        Some(
            json!({"done": true, "task": ok.id.to_string(), "own": 200, "list": 403, "leaked": ""})
        )
    );
    let lines = async || {
        let logs = admin
            .logs()
            .query(&LogQuery {
                filter: LogFilter {
                    task_id: Some(ok.id),
                    source: Some(LogSource::TaskContainer),
                    ..Default::default()
                },
                ..Default::default()
            })
            .await
            .unwrap();
        logs.items
            .iter()
            .filter_map(|r| r.payload.as_ref()?["line"].as_str().map(str::to_owned))
            .collect::<Vec<String>>()
    };
    eventually("task_container logs", async || lines().await.len() == 2).await;
    assert!(lines().await.iter().any(|l| l.starts_with("working on")));

    let failing = admin.tasks().create(&task("fail")).await.unwrap();
    let failed = wait_for(&admin, failing.id, |t| t.state.is_done()).await;
    assert_eq!(failed.state, TaskState::Failed);
    let error = failed.error.unwrap();
    assert_eq!(error["category"], "exit_code", "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("status 3"),
        "{error}"
    );
    assert_eq!(error["recoverable"], true);
    // Why: the error names the command's last complaint, and its stderr
    // is an `error` row (what `orch logs tail --level error` shows).
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .ends_with(": about to fail"),
        "{error}"
    );
    let errors = async || {
        admin
            .logs()
            .query(&LogQuery {
                filter: LogFilter {
                    task_id: Some(failing.id),
                    level: Some(LogLevel::Error),
                    ..Default::default()
                },
                ..Default::default()
            })
            .await
            .unwrap()
            .items
    };
    eventually("the failure's error rows", async || {
        errors().await.len() >= 2
    })
    .await;
    let rows = errors().await;
    let stderr = rows
        .iter()
        .find(|r| r.operation == "task.failed")
        .expect("the failed command's stderr row");
    assert_eq!(
        stderr.payload.as_ref().unwrap()["last_lines"],
        json!(["about to fail"])
    );
    assert!(rows.iter().any(|r| r.operation == "task.fail"), "{rows:?}");

    let slow = admin.tasks().create(&task("slow")).await.unwrap();
    wait_for(&admin, slow.id, |t| t.state == TaskState::InProgress).await;
    // Its process shows in the fleet views once a heartbeat reports it.
    eventually("the running process is reported", async || {
        reported(&admin, slow.id).await == 1
    })
    .await;
    admin
        .workers()
        .signal(
            worker_id,
            &SignalWorker {
                signal: SignalKind::CancelTask,
                task_id: Some(slow.id),
            },
        )
        .await
        .unwrap();
    let cancelled = wait_for(&admin, slow.id, |t| t.state.is_done()).await;
    assert_eq!(cancelled.state, TaskState::Failed);
    assert_eq!(cancelled.error.unwrap()["category"], "cancelled");
    // Once it ended, the next heartbeat no longer reports it.
    eventually("the cancelled process is no longer reported", async || {
        reported(&admin, slow.id).await == 0
    })
    .await;
    worker.kill().await.unwrap();
}

#[tokio::test]
async fn drain_finishes_the_running_task_and_stops_claiming() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let dir = tempfile::tempdir().unwrap();
    let mut worker = spawn_worker(&server, dir.path(), "drain-box");
    let worker_id = worker_id(&admin, "drain-box").await;
    let short = admin.tasks().create(&task("short")).await.unwrap();
    wait_for(&admin, short.id, |t| t.state == TaskState::InProgress).await;
    // The running process shows in the live containers.
    eventually("the running task is reported live", async || {
        let live = admin.fleet().live_containers().await.unwrap();
        live.iter()
            .any(|c| c.task_id == Some(short.id) && c.id.starts_with("pid:") && c.name == "short")
    })
    .await;
    admin
        .workers()
        .signal(
            worker_id,
            &SignalWorker {
                signal: SignalKind::Drain,
                task_id: None,
            },
        )
        .await
        .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(20), worker.wait())
        .await
        .expect("the worker exits after draining")
        .unwrap();
    assert!(status.success());
    let finished = admin.tasks().get(short.id).await.unwrap();
    assert_eq!(finished.state, TaskState::Completed, "{:?}", finished.error);
    let later = admin.tasks().create(&task("later")).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        admin.tasks().get(later.id).await.unwrap().state,
        TaskState::Pending,
        "a drained worker claims nothing"
    );
}

/// The README walk-through: a catalog playbook's workflow completes with
/// `orch worker run -- examples/worker_task.sh` and `orch workflows launch
/// --watch` (the example needs curl and jq).
#[tokio::test]
async fn the_readme_walk_through_completes_a_catalog_workflow() {
    let server = TestServer::start().await;
    let env = [
        ("ORCH_URL", server.url.as_str()),
        ("ORCH_API_KEY", server.admin_key.as_str()),
    ];
    let ok = |output: std::process::Output| {
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    ok(common::orch_with(&["catalog", "import", "feature-delivery"], &env).await);
    ok(common::orch_with(&["workspaces", "create", "--name", "demo"], &env).await);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/worker_task.sh");
    let mut worker = Command::new(common::ORCH)
        .args(["worker", "run", "--name", "laptop", "--"])
        .arg(&script)
        .env("ORCH_URL", &server.url)
        .env("ORCH_API_KEY", &server.admin_key)
        .env("ORCH_CONFIG", "/nonexistent/orch-config.json")
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let launched = tokio::time::timeout(
        Duration::from_secs(45),
        common::orch_with(
            &[
                "workflows",
                "launch",
                "--playbook",
                "feature-delivery",
                "--workspace",
                "demo",
                "--name",
                "First run",
                "--watch",
                "-o",
                "json",
            ],
            &env,
        ),
    )
    .await
    .expect("the workflow finishes");
    let text = ok(launched);
    assert!(text.contains("\"completed\""), "{text}");
    let admin = server.admin();
    let tasks = admin
        .tasks()
        .list(&Default::default(), PageRequest::default())
        .await
        .unwrap();
    assert!(
        tasks.total >= 2,
        "the orchestrator task planned stage tasks"
    );
    assert!(tasks.items.iter().all(|t| t.state == TaskState::Completed));
    worker.kill().await.unwrap();
}

#[tokio::test]
async fn env_without_a_container_runtime_is_refused_clearly() {
    let server = TestServer::start().await;
    server
        .admin()
        .environments()
        .create(
            &orchestrator_client::api::environments::CreateExecutionEnvironment {
                name: "Runner".into(),
                image: "debian:bookworm-slim".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let output = Command::new(common::ORCH)
        .args([
            "worker", "run", "--name", "boxed", "--env", "runner", "--", "true",
        ])
        .env("ORCH_URL", &server.url)
        .env("ORCH_API_KEY", &server.admin_key)
        .env("ORCH_CONFIG", "/nonexistent/orch-config.json")
        .env("PATH", "/nonexistent")
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("needs docker or podman"), "{stderr}");
    assert_eq!(
        server
            .admin()
            .workers()
            .list(PageRequest::default())
            .await
            .unwrap()
            .total,
        0,
        "nothing was registered"
    );
}

#[tokio::test]
async fn ctrl_c_lets_the_running_task_finish_then_exits() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let dir = tempfile::tempdir().unwrap();
    let mut worker = spawn_worker(&server, dir.path(), "int-box");
    worker_id(&admin, "int-box").await;
    let short = admin.tasks().create(&task("short")).await.unwrap();
    wait_for(&admin, short.id, |t| t.state == TaskState::InProgress).await;
    let pid = worker.id().unwrap().to_string();
    let sent = Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .await
        .unwrap();
    assert!(sent.success());
    let status = tokio::time::timeout(Duration::from_secs(20), worker.wait())
        .await
        .expect("the worker exits after its task")
        .unwrap();
    assert!(status.success());
    let finished = admin.tasks().get(short.id).await.unwrap();
    assert_eq!(finished.state, TaskState::Completed, "{:?}", finished.error);
}

/// A stand-in for the docker CLI (no container runtime on the test
/// machines): `run --rm -i --name N --cpus C --memory M -e K=V... IMAGE
/// ARGV...` runs ARGV here with only the `-e` variables, and records the
/// image and limits it was asked for.
const FAKE_DOCKER: &str = r#"#!/bin/sh
[ "$1" = run ] || exit 0
shift
log="$(dirname "$0")/docker.log"
vars=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rm|-i) shift ;;
    --name|--cpus|--memory) echo "$1 $2" >> "$log"; shift 2 ;;
    -e) vars="$vars $2"; shift 2 ;;
    *) break ;;
  esac
done
echo "image $1" >> "$log"
shift
exec env -i PATH="$PATH" $vars "$@"
"#;

#[tokio::test]
async fn env_runs_the_environments_tasks_through_the_container_runtime() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let environment = admin
        .environments()
        .create(
            &orchestrator_client::api::environments::CreateExecutionEnvironment {
                name: "Shell".into(),
                image: "debian:bookworm-slim".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let docker = bin.join("docker");
    std::fs::write(&docker, FAKE_DOCKER).unwrap();
    std::fs::set_permissions(&docker, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // A plain worker is up too: the environment's task must not go to it.
    let mut plain = spawn_worker(&server, dir.path(), "plain-box");
    worker_id(&admin, "plain-box").await;
    let mut boxed = spawn_worker_with(
        &server,
        dir.path(),
        "shell-box",
        &["--env", "shell"],
        Some(path),
    );
    worker_id(&admin, "shell-box").await;
    // The fleet says what the --env worker can run.
    let fleet = admin.fleet().workers().await.unwrap();
    let envs = |name: &str| {
        fleet
            .iter()
            .find(|w| w.name == name)
            .unwrap()
            .environments
            .iter()
            .map(|e| e.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(envs("shell-box"), vec![environment.id]);
    assert!(envs("plain-box").is_empty());

    let mut request = task("in the box");
    request.execution_environment_id = Some(environment.id);
    let boxed_task = admin.tasks().create(&request).await.unwrap();
    let done = wait_for(&admin, boxed_task.id, |t| t.state.is_done()).await;
    assert_eq!(done.state, TaskState::Completed, "{:?}", done.error);
    let output = done.output.unwrap();
    assert_eq!(output["own"], 200, "{output}");
    assert_eq!(output["leaked"], "", "{output}");
    let shell_box = admin
        .fleet()
        .workers()
        .await
        .unwrap()
        .into_iter()
        .find(|w| w.name == "shell-box")
        .unwrap();
    assert_eq!(done.assigned_worker_id, Some(shell_box.worker_id));
    let log = std::fs::read_to_string(dir.path().join("bin/docker.log")).unwrap();
    assert!(log.contains("image debian:bookworm-slim"), "{log}");
    assert!(
        log.contains(&format!("--name orch-task-{}", boxed_task.id)),
        "{log}"
    );
    plain.kill().await.unwrap();
    boxed.kill().await.unwrap();
}

/// The task's timeout (1 minute, the least there is) kills the command and
/// fails the task with category `timeout`; the process is no longer
/// reported. Slow by nature: it waits out the minute.
#[tokio::test]
async fn the_tasks_timeout_kills_the_command() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let dir = tempfile::tempdir().unwrap();
    let mut worker = spawn_worker(&server, dir.path(), "slow-box");
    worker_id(&admin, "slow-box").await;
    let mut request = task("hang");
    request.timeout_minutes = Some(1);
    let hang = admin.tasks().create(&request).await.unwrap();
    wait_for(&admin, hang.id, |t| t.state == TaskState::InProgress).await;
    eventually("the hanging process is reported", async || {
        reported(&admin, hang.id).await == 1
    })
    .await;
    let deadline = std::time::Instant::now() + Duration::from_secs(150);
    let failed = loop {
        let task = admin.tasks().get(hang.id).await.unwrap();
        if task.state.is_done() {
            break task;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the timeout never fired"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(failed.state, TaskState::Failed);
    assert_eq!(failed.error.unwrap()["category"], "timeout");
    eventually("the killed process is no longer reported", async || {
        reported(&admin, hang.id).await == 0
    })
    .await;
    worker.kill().await.unwrap();
}
