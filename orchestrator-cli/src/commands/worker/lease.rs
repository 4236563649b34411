//! A running task's lease (run control §4): heartbeats while the command
//! runs, carrying the progress the command reports (a stderr line
//! `ORCH_PROGRESS {json}`), and cancellation when the server asks for it
//! (the heartbeat answer's `cancel_requested`, or a lost lease).

use super::Shared;
use orchestrator_client::api::{Task, TaskHeartbeat};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use uuid::Uuid;

/// The stderr prefix of a progress report.
pub(super) const PROGRESS_PREFIX: &str = "ORCH_PROGRESS ";

/// How often a task without a heartbeat timeout still reports progress.
const PROGRESS_EVERY: Duration = Duration::from_secs(15);

/// The latest progress the command reported, not yet sent.
#[derive(Default)]
pub(super) struct Progress {
    latest: Mutex<Option<Value>>,
    reported: Notify,
}

impl Progress {
    /// Takes a stderr line: a progress report is kept for the next
    /// heartbeat (sent at once); anything else is ignored.
    pub fn offer(&self, line: &str) {
        let Some(json) = line.strip_prefix(PROGRESS_PREFIX) else {
            return;
        };
        match serde_json::from_str::<Value>(json.trim()) {
            Ok(value) if value.is_object() => {
                *self.latest.lock().expect("lock") = Some(value);
                self.reported.notify_one();
            }
            _ => eprintln!("ignoring a progress line that is not a JSON object: {line}"),
        }
    }

    fn take(&self) -> Option<Value> {
        self.latest.lock().expect("lock").take()
    }
}

/// Heartbeats for `task` until aborted: every third of its heartbeat
/// timeout (or every [`PROGRESS_EVERY`] when progress waits and it has
/// none), and at once when progress is reported. A `cancel_requested`
/// answer or a `LEASE_LOST` refusal stops the command.
pub(super) fn spawn(
    shared: Arc<Shared>,
    agent_id: Uuid,
    task: &Task,
    progress: Arc<Progress>,
) -> tokio::task::JoinHandle<()> {
    let (id, attempt) = (task.id, task.attempt);
    let timeout = task.heartbeat_timeout_seconds;
    let every = timeout.map_or(PROGRESS_EVERY, |t| {
        Duration::from_millis((t.max(1) as u64 * 1000) / 3)
    });
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = progress.reported.notified() => {}
            }
            let report = progress.take();
            if timeout.is_none() && report.is_none() {
                continue;
            }
            let beat = TaskHeartbeat {
                attempt: Some(attempt),
                progress: report,
                agent_id: Some(agent_id),
            };
            let stop = match shared.worker.tasks().heartbeat(id, &beat).await {
                Ok(ack) => ack.cancel_requested,
                Err(e) if e.code() == Some(orchestrator_client::api::ErrorCode::LeaseLost) => {
                    eprintln!("task {id}: lease lost; stopping it");
                    true
                }
                Err(e) => {
                    eprintln!("task {id}: heartbeat failed: {e}");
                    false
                }
            };
            if stop {
                eprintln!("task {id}: cancellation requested; stopping it");
                if let Some(running) = shared.running.lock().expect("lock").get_mut(&id) {
                    running.cancel();
                }
                return;
            }
        }
    })
}
