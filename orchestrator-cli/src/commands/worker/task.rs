//! One assigned task: start it, run the command (on the host, or in the
//! environment's image through docker/podman), stream its output lines to
//! `POST /logs/ingest` in batches (source `task_container`), then complete
//! it with the last stdout line or fail it with the exit code. A
//! `cancel_task` signal or a requested cancellation stops the process
//! (SIGTERM, SIGKILL 10 s later); the task's timeout kills it. While it
//! runs, [`super::lease`] heartbeats and forwards its progress.

use super::Shared;
use super::lease::{self, Progress};
use anyhow::{Context, bail};
use orchestrator_client::Client;
use orchestrator_client::api::environments::{EnvironmentFilter, ExecutionEnvironment};
use orchestrator_client::api::{
    CompleteBatchItem, CompleteTask, FailTask, IssueTaskToken, LogCategory, LogLevel, LogSource,
    NewLogEntry, PageRequest, StartTask, Task, TaskError, TaskKind, TaskState, Timestamp,
};
use serde_json::{Value, json};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

/// Log lines sent in one ingest call at most.
const BATCH: usize = 200;
/// How long a line may wait for its batch.
const FLUSH_EVERY: Duration = Duration::from_millis(300);
/// The last stderr lines a failed command's error row carries.
const STDERR_TAIL: usize = 20;
/// How long a command asked to stop (SIGTERM) has before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// Running tasks as the heartbeats report them, and their cancel switch.
pub(crate) struct Running {
    pub process_id: String,
    pub title: String,
    pub started_at: Timestamp,
    cancel: Option<oneshot::Sender<()>>,
}

impl Running {
    pub fn cancel(&mut self) {
        if let Some(cancel) = self.cancel.take() {
            let _ = cancel.send(());
        }
    }
}

/// How tasks run inside an execution environment's image.
pub(crate) struct ContainerRun {
    /// The environment's id: the worker declares it with the routing tag
    /// `env:<id>`, so the claim engine gives it that environment's tasks.
    pub environment_id: Uuid,
    pub runtime: String,
    pub image: String,
    cpu: String,
    memory: String,
}

impl ContainerRun {
    /// Looks the environment up (id or name) and finds docker or podman on
    /// PATH; refuses clearly when either is missing.
    pub async fn resolve(admin: &Client, wanted: &str) -> anyhow::Result<Self> {
        let environment: ExecutionEnvironment = match wanted.parse::<Uuid>() {
            Ok(id) => admin.environments().get(id).await?,
            Err(_) => admin
                .environments()
                .list(
                    &EnvironmentFilter {
                        q: Some(wanted.to_owned()),
                        ..Default::default()
                    },
                    PageRequest::new(1, 100),
                )
                .await?
                .items
                .into_iter()
                .find(|e| e.name.eq_ignore_ascii_case(wanted))
                .with_context(|| format!("no execution environment named `{wanted}`"))?,
        };
        let Some(runtime) = ["docker", "podman"].into_iter().find(|name| on_path(name)) else {
            bail!(
                "--env {wanted} runs tasks in the image {} and needs docker or podman on PATH; \
                 neither was found (run without --env to use this machine's shell)",
                environment.image
            );
        };
        Ok(Self {
            environment_id: environment.id,
            runtime: runtime.to_owned(),
            image: environment.image,
            cpu: environment.cpu,
            memory: environment.memory.replace("i", "").to_lowercase(),
        })
    }
}

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()))
}

pub(crate) struct TaskRun {
    shared: Arc<Shared>,
    agent_id: Uuid,
    task: Task,
}

/// How the process ended.
enum Ending {
    Exited(std::process::ExitStatus),
    Cancelled,
    TimedOut,
}

impl TaskRun {
    pub fn new(shared: Arc<Shared>, agent_id: Uuid, task: Task) -> Self {
        Self {
            shared,
            agent_id,
            task,
        }
    }

    /// The command with its environment: `ORCH_TASK_ID`, `ORCH_WORKFLOW_ID`,
    /// `ORCH_URL` and `ORCH_TASK_TOKEN` (a credential limited to this task's
    /// routes while it is held, `POST /tasks/:id/token`). Only orchestrator
    /// tasks, which plan a workflow (create its work items and tasks), also
    /// get the agent's key as `ORCH_API_KEY`. The worker's own credentials
    /// (`ORCH_API_KEY`, `ORCH_WORKER_KEY` of its environment) never reach the
    /// command.
    fn command(&self, task_token: &str, planner_key: Option<&str>) -> Command {
        let mut env = vec![
            ("ORCH_TASK_ID", self.task.id.to_string()),
            (
                "ORCH_WORKFLOW_ID",
                self.task
                    .workflow_id
                    .map(|w| w.to_string())
                    .unwrap_or_default(),
            ),
            ("ORCH_URL", self.shared.url.clone()),
            ("ORCH_TASK_TOKEN", task_token.to_owned()),
        ];
        if let Some(key) = planner_key {
            env.push(("ORCH_API_KEY", key.to_owned()));
        }
        let argv = &self.shared.command;
        let mut command = match &self.shared.container {
            None => {
                let mut command = Command::new(&argv[0]);
                command
                    .args(&argv[1..])
                    .env_remove("ORCH_API_KEY")
                    .env_remove("ORCH_WORKER_KEY")
                    .envs(env);
                command
            }
            Some(container) => {
                let mut command = Command::new(&container.runtime);
                command
                    .args(["run", "--rm", "-i", "--name"])
                    .arg(format!("orch-task-{}", self.task.id))
                    .args(["--cpus", &container.cpu, "--memory", &container.memory]);
                for (key, value) in env {
                    command.arg("-e").arg(format!("{key}={value}"));
                }
                command.arg(&container.image).args(argv);
                command
            }
        };
        // Its own process group, so a kill reaches what the command started.
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        command
    }

    async fn report_failure(&self, category: &str, message: String, recoverable: bool) {
        let fail = FailTask {
            error: Some(TaskError {
                category: Some(category.into()),
                message: Some(message),
                recoverable: Some(recoverable),
            }),
            agent_id: Some(self.agent_id),
            worker_id: Some(self.shared.worker_id),
            ..Default::default()
        };
        if let Err(e) = self.shared.worker.tasks().fail(self.task.id, &fail).await {
            eprintln!("task {}: cannot record the failure: {e}", self.task.id);
        }
    }

    /// One `error` row with the failed command's last stderr lines: its
    /// stderr was streamed at `warn` (a command that succeeds may write
    /// there too), and only now is it known to belong to a failure.
    async fn log_failed_stderr(&self, message: &str, tail: Vec<String>) {
        let mut row = entry(&self.task, "stderr", String::new());
        row.operation = "task.failed".into();
        row.level = Some(LogLevel::Error);
        row.payload = Some(json!({ "stream": "stderr", "message": message, "last_lines": tail }));
        if let Err(e) = self.shared.worker.logs().ingest(vec![row]).await {
            eprintln!("task {}: the failure's log row was lost: {e}", self.task.id);
        }
    }

    /// Reports the completion: on its own, or (with `--batch`) with the
    /// others that end together in one `complete-batch` ([`super::batch`]).
    async fn complete(&self, complete: CompleteTask) -> Result<(), String> {
        let Some(queue) = &self.shared.completions else {
            return self
                .shared
                .worker
                .tasks()
                .complete(self.task.id, &complete)
                .await
                .map(|_| ())
                .map_err(|e| e.to_string());
        };
        let item = CompleteBatchItem {
            task_id: self.task.id,
            agent_id: complete.agent_id,
            output: complete.output,
            metrics: complete.metrics,
            request_id: complete.request_id,
        };
        let (reply, answer) = oneshot::channel();
        queue
            .send((item, reply))
            .map_err(|_| "the completion queue is closed".to_owned())?;
        match answer.await {
            Ok(Ok(done)) => match done.error {
                None => Ok(()),
                Some(error) => Err(format!("{}: {}", error.code.as_str(), error.message)),
            },
            Ok(Err(e)) => Err(e),
            Err(_) => Err("the completion queue is closed".to_owned()),
        }
    }

    /// Runs the task to its end; every outcome is reported to the server.
    pub async fn execute(self) {
        let id = self.task.id;
        let start = StartTask {
            agent_id: Some(self.agent_id),
            worker_id: Some(self.shared.worker_id),
            ..Default::default()
        };
        // A batched claim started it already (`claim-batch` with `start`).
        if self.task.state != TaskState::InProgress
            && let Err(e) = self.shared.worker.tasks().start(id, &start).await
        {
            eprintln!("task {id}: cannot start it: {e}");
            return;
        }
        eprintln!("task {id} ({}): running", self.task.title);
        let ask = IssueTaskToken {
            agent_id: Some(self.agent_id),
            worker_id: Some(self.shared.worker_id),
        };
        let task_token = match self.shared.worker.tasks().token(id, &ask).await {
            Ok(issued) => issued.token,
            Err(e) => {
                let message = format!("cannot get a task token: {e}");
                self.report_failure("task_token", message, true).await;
                return;
            }
        };
        let planner_key = (self.task.task_kind == TaskKind::Orchestrator).then(|| {
            self.shared
                .credentials
                .get(&self.agent_id)
                .unwrap_or(&self.shared.worker_key)
                .clone()
        });
        let mut child = match self.command(&task_token, planner_key.as_deref()).spawn() {
            Ok(child) => child,
            Err(e) => {
                let message = format!("cannot run {}: {e}", self.shared.command[0]);
                self.report_failure("spawn", message, false).await;
                return;
            }
        };
        let (cancel, cancelled) = oneshot::channel();
        let process_id = match &self.shared.container {
            Some(_) => format!("orch-task-{id}"),
            None => format!("pid:{}", child.id().unwrap_or_default()),
        };
        self.shared.running.lock().expect("lock").insert(
            id,
            Running {
                process_id,
                title: self.task.title.clone(),
                started_at: Timestamp::now(),
                cancel: Some(cancel),
            },
        );
        self.shared.changed.notify_one();
        if let Some(mut stdin) = child.stdin.take() {
            let input = serde_json::to_vec(&self.task).unwrap_or_default();
            // A command that does not read its stdin is fine.
            let _ = stdin.write_all(&input).await;
        }
        let (lines, received) = mpsc::unbounded_channel();
        let progress = Arc::new(Progress::default());
        let readers = [
            child
                .stdout
                .take()
                .map(|s| read_lines(s, "stdout", lines.clone(), None)),
            child
                .stderr
                .take()
                .map(|s| read_lines(s, "stderr", lines.clone(), Some(progress.clone()))),
        ];
        let heartbeats = lease::spawn(self.shared.clone(), self.agent_id, &self.task, progress);
        let pid = child.id();
        drop(lines);
        let shipper = tokio::spawn(ship_logs(
            self.shared.worker.clone(),
            self.task.clone(),
            received,
        ));
        let timeout = Duration::from_secs(60 * self.task.timeout_minutes.max(1) as u64);
        let ending = tokio::select! {
            status = child.wait() => match status {
                Ok(status) => Ending::Exited(status),
                Err(_) => Ending::Cancelled,
            },
            _ = cancelled => Ending::Cancelled,
            _ = tokio::time::sleep(timeout) => Ending::TimedOut,
        };
        heartbeats.abort();
        if !matches!(ending, Ending::Exited(_)) {
            if let Some(pid) = pid
                && matches!(ending, Ending::Cancelled)
            {
                // Asked to stop (run control §4): SIGTERM to the group, and
                // 10 s to finish before the SIGKILL below.
                let _ = Command::new("kill")
                    .args(["-TERM", "--", &format!("-{pid}")])
                    .output()
                    .await;
                let _ = tokio::time::timeout(STOP_GRACE, child.wait()).await;
            }
            if let Some(pid) = pid {
                // The whole group: a shell's children hold the output pipes.
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &format!("-{pid}")])
                    .output()
                    .await;
            }
            let _ = child.kill().await;
            if let Some(container) = &self.shared.container {
                let _ = Command::new(&container.runtime)
                    .args(["rm", "-f", &format!("orch-task-{id}")])
                    .output()
                    .await;
            }
        }
        for reader in readers.into_iter().flatten() {
            // A background process that kept the pipes open must not hold
            // the task's end.
            let abort = reader.abort_handle();
            if tokio::time::timeout(Duration::from_secs(5), reader)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
        let Shipped {
            last_stdout: last_line,
            stderr_tail,
        } = shipper.await.unwrap_or_default();
        self.shared.running.lock().expect("lock").remove(&id);
        self.shared.changed.notify_one();
        match ending {
            Ending::Exited(status) if status.success() => {
                let output = match last_line {
                    Some(line) => serde_json::from_str::<Value>(&line)
                        .unwrap_or_else(|_| json!({ "text": line })),
                    None => json!({ "text": "" }),
                };
                let complete = CompleteTask {
                    output: Some(output),
                    agent_id: Some(self.agent_id),
                    worker_id: Some(self.shared.worker_id),
                    ..Default::default()
                };
                match self.complete(complete).await {
                    Ok(()) => eprintln!("task {id}: completed"),
                    Err(e) => eprintln!("task {id}: cannot complete it: {e}"),
                }
            }
            Ending::Exited(status) => {
                let message = match status.code() {
                    Some(code) => format!("{} exited with status {code}", self.shared.command[0]),
                    None => format!("{} was killed by a signal", self.shared.command[0]),
                };
                eprintln!("task {id}: {message}");
                // The error names the command's last complaint, so `orch
                // tasks get` answers "why" without a trip to the logs.
                let message = match stderr_tail.iter().rev().find(|l| !l.trim().is_empty()) {
                    Some(last) => format!("{message}: {}", last.trim()),
                    None => message,
                };
                self.log_failed_stderr(&message, stderr_tail).await;
                self.report_failure("exit_code", message, true).await;
            }
            Ending::Cancelled => {
                eprintln!("task {id}: cancelled");
                let message = "the process was stopped by a cancel_task signal".to_owned();
                self.report_failure("cancelled", message, false).await;
            }
            Ending::TimedOut => {
                let message = format!(
                    "the process ran past the task's timeout of {} minute(s)",
                    self.task.timeout_minutes
                );
                self.report_failure("timeout", message, true).await;
            }
        }
    }
}

/// Forwards `stream`'s lines to the log shipper; progress reports
/// (`ORCH_PROGRESS {json}`) also go to `progress`.
fn read_lines(
    stream: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    name: &'static str,
    lines: mpsc::UnboundedSender<(&'static str, String)>,
    progress: Option<Arc<Progress>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut reader = BufReader::new(stream).lines();
        while let Ok(Some(line)) = reader.next_line().await {
            if let Some(progress) = &progress {
                progress.offer(&line);
            }
            if lines.send((name, line)).is_err() {
                break;
            }
        }
    })
}

/// What the shipper saw of a command's output.
#[derive(Default)]
struct Shipped {
    /// The last non-empty stdout line (the task's output).
    last_stdout: Option<String>,
    /// The last [`STDERR_TAIL`] stderr lines.
    stderr_tail: Vec<String>,
}

/// Sends the output lines in batches; answers the last non-empty stdout
/// line and the tail of stderr.
async fn ship_logs(
    worker: Client,
    task: Task,
    mut lines: mpsc::UnboundedReceiver<(&'static str, String)>,
) -> Shipped {
    let mut last = None;
    let mut stderr_tail = std::collections::VecDeque::with_capacity(STDERR_TAIL);
    let mut batch: Vec<NewLogEntry> = Vec::new();
    let mut open = true;
    while open {
        let deadline = tokio::time::sleep(FLUSH_EVERY);
        tokio::pin!(deadline);
        while batch.len() < BATCH {
            tokio::select! {
                line = lines.recv() => match line {
                    Some((stream, line)) => {
                        if stream == "stdout" && !line.trim().is_empty() {
                            last = Some(line.clone());
                        }
                        if stream == "stderr" {
                            if stderr_tail.len() == STDERR_TAIL {
                                stderr_tail.pop_front();
                            }
                            stderr_tail.push_back(line.clone());
                        }
                        batch.push(entry(&task, stream, line));
                    }
                    None => {
                        open = false;
                        break;
                    }
                },
                _ = &mut deadline => break,
            }
        }
        if !batch.is_empty()
            && let Err(e) = worker.logs().ingest(std::mem::take(&mut batch)).await
        {
            eprintln!("task {}: log lines lost: {e}", task.id);
        }
    }
    Shipped {
        last_stdout: last,
        stderr_tail: stderr_tail.into(),
    }
}

fn entry(task: &Task, stream: &str, line: String) -> NewLogEntry {
    let mut entry = NewLogEntry::new(LogCategory::Tool, format!("task.{stream}"));
    entry.source = Some(LogSource::TaskContainer);
    entry.level = Some(if stream == "stderr" {
        LogLevel::Warn
    } else {
        LogLevel::Info
    });
    entry.task_id = Some(task.id);
    entry.workflow_id = task.workflow_id;
    entry.workspace_id = task.workspace_id;
    entry.work_item_id = task.work_item_id;
    entry.stage_name = task.stage_name.clone();
    entry.payload = Some(json!({ "stream": stream, "line": line }));
    entry
}
