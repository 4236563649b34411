//! Wake-ups across PostgreSQL replicas: each replica sends a NOTIFY after
//! commits that wrote events or log rows, and listens for the others', so a
//! stream on any replica wakes for rows written through another.

use super::Topic;
use sqlx::PgPool;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;

/// PostgreSQL NOTIFY channels that wake the streams of every replica.
const NOTIFY_LOGS: &str = "orch_logs";
const NOTIFY_EVENTS: &str = "orch_events";

/// NOTIFYs requested by committed transactions, sent by one background task.
///
/// A NOTIFY inside a transaction makes PostgreSQL take a cluster-wide lock
/// on the notification queue from pre-commit until the commit is flushed, so
/// every transaction that notifies commits one after the other (seen as
/// `Lock:object` waits; it capped the task lifecycle at one WAL flush per
/// request). Wake-ups carry no data and streams re-read the table by cursor,
/// so a NOTIFY sent just after the commit, by one task that folds every
/// request made while its previous NOTIFY was in flight into the next, says
/// the same thing without serialising the writers.
#[derive(Debug, Default)]
pub(crate) struct PgNotifier {
    events: std::sync::atomic::AtomicBool,
    logs: std::sync::atomic::AtomicBool,
    kick: tokio::sync::Notify,
}

impl PgNotifier {
    pub(crate) fn request(&self, events: bool, logs: bool) {
        use std::sync::atomic::Ordering::SeqCst;
        if events {
            self.events.store(true, SeqCst);
        }
        if logs {
            self.logs.store(true, SeqCst);
        }
        if events || logs {
            self.kick.notify_one();
        }
    }
}

impl super::Store {
    /// Wakes whatever waits to claim (the worker channels, streams) on this
    /// replica and, on PostgreSQL, on every other through the events
    /// NOTIFY: for work that became claimable without a write, as a delayed
    /// task at its `run_at` (run control §3). Waiters re-read, so an extra
    /// wake-up is harmless.
    pub(crate) fn wake_claimers(&self) {
        let _ = self.wake.send(Topic::Events);
        if let Some(notifier) = &self.notifier {
            notifier.request(true, false);
        }
    }
}

/// The task that sends the NOTIFYs [`PgNotifier`] collects.
pub(super) fn spawn_notifier(pool: PgPool, notifier: Arc<PgNotifier>) -> tokio::task::AbortHandle {
    use std::sync::atomic::Ordering::SeqCst;
    tokio::spawn(async move {
        loop {
            notifier.kick.notified().await;
            for (flag, channel) in [
                (&notifier.events, NOTIFY_EVENTS),
                (&notifier.logs, NOTIFY_LOGS),
            ] {
                if !flag.swap(false, SeqCst) {
                    continue;
                }
                if let Err(e) = sqlx::query("SELECT pg_notify($1, '')")
                    .bind(channel)
                    .execute(&pool)
                    .await
                {
                    tracing::warn!(error = %e, "NOTIFY failed; retrying");
                    flag.store(true, SeqCst);
                    notifier.kick.notify_one();
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }
    })
    .abort_handle()
}

/// Listens for other replicas' NOTIFYs and turns them into local wake-ups.
/// A lost connection wakes every stream (notifications may have been missed
/// while it was down) and the listener reconnects.
pub(super) fn spawn_listener(
    pool: PgPool,
    wake: broadcast::Sender<Topic>,
) -> tokio::task::AbortHandle {
    tokio::spawn(async move {
        loop {
            let mut listener = match sqlx::postgres::PgListener::connect_with(&pool).await {
                Ok(listener) => listener,
                Err(e) => {
                    tracing::warn!(error = %e, "LISTEN connection failed; retrying");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            if let Err(e) = listener.listen_all([NOTIFY_LOGS, NOTIFY_EVENTS]).await {
                tracing::warn!(error = %e, "LISTEN failed; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            loop {
                match listener.try_recv().await {
                    Ok(Some(notification)) => {
                        let topic = if notification.channel() == NOTIFY_LOGS {
                            Topic::Logs
                        } else {
                            Topic::Events
                        };
                        let _ = wake.send(topic);
                    }
                    Ok(None) => {
                        let _ = wake.send(Topic::Logs);
                        let _ = wake.send(Topic::Events);
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "LISTEN connection lost; reconnecting");
                        let _ = wake.send(Topic::Logs);
                        let _ = wake.send(Topic::Events);
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        break;
                    }
                }
            }
        }
    })
    .abort_handle()
}
