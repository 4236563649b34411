//! SQLite checkpoints off the write path.
//!
//! Why: in WAL mode the connection whose commit takes the WAL past
//! `wal_autocheckpoint` pages (1,000 by default) runs the checkpoint inside
//! that commit: it copies the WAL's pages into the database file and syncs
//! the file. With group commit that connection is the one writer, so every
//! few dozen batches one COMMIT took milliseconds while every request queued
//! behind it (COMMIT p50 176 µs against a mean of 348 µs; BENCHMARKS.md,
//! item 9).
//!
//! How: the writer runs with `wal_autocheckpoint = 0`, and this task
//! checkpoints from a connection of its own in PASSIVE mode, which neither
//! waits for the writer nor blocks it: it copies what no reader still needs
//! while the writer goes on appending, and once it has copied everything the
//! writer's next batch starts the WAL over from the beginning. It runs every
//! [`INTERVAL`] in which a batch was begun, so an idle server does no I/O.

use super::Writer;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, SqliteConnection};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// How often the WAL is checkpointed while writes go on. At the writer's
/// peak (a few thousand requests a second, a few MiB of WAL a second) this
/// keeps the WAL near the size autocheckpoint would.
const INTERVAL: Duration = Duration::from_millis(100);

/// Starts the checkpointer of the SQLite database `options` opens, written
/// by `writer`. It ends when the store closes, or when the writer is gone
/// (a store dropped without closing): it holds no strong reference, so it
/// keeps neither the writer's connection nor the file open.
pub(super) fn spawn_checkpointer(
    options: SqliteConnectOptions,
    writer: &Arc<Writer>,
) -> tokio::task::AbortHandle {
    let writer = Arc::downgrade(writer);
    tokio::spawn(async move {
        let mut conn: Option<SqliteConnection> = None;
        let begun = |writer: &Weak<Writer>| writer.upgrade().map(|w| w.batches_begun());
        let Some(mut seen) = begun(&writer) else {
            return;
        };
        loop {
            tokio::time::sleep(INTERVAL).await;
            let Some(begun) = begun(&writer) else {
                return;
            };
            if begun == seen {
                continue;
            }
            let c = match conn.as_mut() {
                Some(c) => c,
                None => match options.connect().await {
                    Ok(c) => conn.insert(c),
                    Err(e) => {
                        tracing::warn!(error = %e, "the checkpointer cannot open the database");
                        continue;
                    }
                },
            };
            // (busy, frames in the WAL, frames checkpointed): PASSIVE never
            // waits, so a pass that could not copy everything (a reader
            // still needed older frames) leaves `seen` as it was, and the
            // next interval tries again even if nothing more is written.
            match sqlx::query_as::<_, (i64, i64, i64)>("PRAGMA wal_checkpoint(PASSIVE)")
                .fetch_one(&mut *c)
                .await
            {
                Ok((_, frames, copied)) if copied >= frames => seen = begun,
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "WAL checkpoint failed; reconnecting");
                    conn = None;
                }
            }
        }
    })
    .abort_handle()
}
