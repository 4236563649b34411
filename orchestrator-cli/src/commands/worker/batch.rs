//! `orch worker run --batch`: the worker on the batched protocol instead of
//! the worker channel. It long-polls `POST /workers/:id/claim-batch` for as
//! many tasks as it has free agents (started in the same request), runs
//! each as the channel worker does ([`super::task`]), and reports the
//! completions that end together in one `POST /tasks/complete-batch`.
//! Failures go one by one, as they are rare. Without a channel the worker
//! sends its heartbeats over HTTP, and takes no signals (a task's
//! cancellation still reaches it through its lease heartbeats).

use super::Shared;
use super::task::TaskRun;
use orchestrator_client::api::{
    ClaimBatch, CompleteBatch, CompleteBatchItem, CompletedItem, WorkerHeartbeat, WorkerMessage,
};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;

/// How long one claim waits for work (the server's long poll).
const POLL_SECONDS: i64 = 5;
/// The most completions one request carries (the server's bound).
const MAX_ITEMS: usize = 256;

/// One completion waiting for the next `complete-batch`, and who waits for
/// its answer.
pub(crate) type Completion = (
    CompleteBatchItem,
    oneshot::Sender<Result<CompletedItem, String>>,
);

/// The queue a task run leaves its completion in.
pub(crate) type Completions = mpsc::UnboundedSender<Completion>;

/// Sends the queued completions: whatever has gathered while the previous
/// request was out goes in the next one.
pub(crate) fn spawn_completer(shared: Arc<Shared>, mut queue: mpsc::UnboundedReceiver<Completion>) {
    tokio::spawn(async move {
        while let Some(first) = queue.recv().await {
            let mut batch = vec![first];
            while batch.len() < MAX_ITEMS {
                match queue.try_recv() {
                    Ok(next) => batch.push(next),
                    Err(_) => break,
                }
            }
            let (items, waiting): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
            match shared
                .worker
                .tasks()
                .complete_batch(&CompleteBatch { items })
                .await
            {
                Ok(answers) => {
                    for (answer, reply) in answers.into_iter().zip(waiting) {
                        let _ = reply.send(Ok(answer));
                    }
                }
                Err(e) => {
                    for reply in waiting {
                        let _ = reply.send(Err(e.to_string()));
                    }
                }
            }
        }
    });
}

/// Claims and runs tasks until Ctrl-C; then lets the running ones finish.
pub(crate) async fn run(shared: Arc<Shared>, concurrency: usize) -> anyhow::Result<()> {
    let heartbeats = tokio::spawn(heartbeat_loop(shared.clone()));
    let mut tasks: JoinSet<()> = JoinSet::new();
    let stop = tokio::signal::ctrl_c();
    tokio::pin!(stop);
    let mut stopping = false;
    let mut backoff = Duration::from_millis(250);
    while !stopping {
        while tasks.try_join_next().is_some() {}
        let free = concurrency.saturating_sub(tasks.len());
        if free == 0 {
            tokio::select! {
                _ = tasks.join_next() => {}
                _ = &mut stop => stopping = true,
            }
            continue;
        }
        let request = ClaimBatch {
            limit: free as i64,
            start: true,
            wait_seconds: Some(POLL_SECONDS),
            ..Default::default()
        };
        let workers = shared.worker.workers();
        let claim = workers.claim_batch(shared.worker_id, &request);
        tokio::pin!(claim);
        // A claim in flight is never dropped (its tasks would be held by
        // nobody until their leases ran out): Ctrl-C waits for its answer.
        let answered = tokio::select! {
            claimed = &mut claim => Some(claimed),
            _ = &mut stop => None,
        };
        let claimed = match answered {
            Some(claimed) => claimed,
            None => {
                stopping = true;
                claim.await
            }
        };
        match claimed {
            Ok(claimed) => {
                backoff = Duration::from_millis(250);
                for c in claimed {
                    tasks.spawn(TaskRun::new(shared.clone(), c.agent_id, c.task).execute());
                }
                shared.changed.notify_one();
            }
            Err(e) => {
                if matches!(e.status(), Some(401 | 403 | 404)) {
                    heartbeats.abort();
                    anyhow::bail!("the server refused the batched claim: {e}");
                }
                eprintln!("cannot claim ({e}); retrying in {backoff:?}");
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    _ = &mut stop => stopping = true,
                }
                backoff = (backoff * 2).min(Duration::from_secs(10));
            }
        }
    }
    eprintln!("interrupted: finishing running tasks, taking no new ones");
    while tasks.join_next().await.is_some() {}
    heartbeats.abort();
    Ok(())
}

/// The worker's heartbeat over HTTP, every 30 s and whenever a task starts
/// or ends: with no channel open, this is what keeps it online.
async fn heartbeat_loop(shared: Arc<Shared>) {
    let mut every = tokio::time::interval(Duration::from_secs(30));
    loop {
        tokio::select! {
            _ = every.tick() => {}
            _ = shared.changed.notified() => {}
        }
        let WorkerMessage::Heartbeat {
            status,
            current_task_id,
            metrics,
            containers,
        } = super::heartbeat_message(&shared)
        else {
            continue;
        };
        let beat = WorkerHeartbeat {
            status,
            current_task_id,
            metrics,
            containers,
        };
        if let Err(e) = shared
            .worker
            .workers()
            .heartbeat(shared.worker_id, &beat)
            .await
        {
            eprintln!("worker heartbeat failed: {e}");
        }
    }
}
