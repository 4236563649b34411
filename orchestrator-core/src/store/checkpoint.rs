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
//!
//! Why the RESTART: under continuous group commits the writer's next batch
//! almost never finds the WAL fully copied, so the WAL never starts over and
//! grows without bound (20 GB in a 12-minute soak at 300 tasks/s). Once the
//! WAL holds more than the restart threshold ([`DEFAULT_WAL_RESTART_BYTES`]
//! unless configured: `StoreOptions::wal_restart_bytes`), a `RESTART`
//! checkpoint (at most every [`RESTART_EVERY`]) copies everything and makes
//! the next batch start the WAL over; it waits for the writer's current
//! batch, a few milliseconds (`TRUNCATE` would block writes for hundreds).
//! So the WAL file stays near the threshold plus what [`RESTART_EVERY`] of
//! writes add, and a burst's WAL file is truncated once writes stop.
//!
//! Why the file is not cut back at every restart: SQLite shrinks the WAL
//! file to `journal_size_limit` in the first commit after the WAL starts
//! over, on the writer's thread. With the limit at the threshold, every
//! restart under load cut away the two seconds of writes past it, which
//! the writer then wrote again into newly allocated blocks, and the
//! `ftruncate` itself took 77 ms (`perf trace`) while every request waited:
//! the claim p99 at half the maximum rate was 81 ms, against 9 ms without
//! the cut-back and 6 ms with no restart at all (bench/HISTORY.md, item
//! 29). So the limit is [`journal_size_limit`], well past what two seconds
//! of writes add: the file is reused from its start instead, and only a WAL
//! grown far beyond the threshold (a restart held off by a long reader) is
//! cut back while writes go on.
//!
//! Why the restarts run on the writer's connection: a connection that begins
//! a transaction and finds that another connection restarted the WAL
//! discards its whole page cache. With the `RESTART` (and the idle
//! `TRUNCATE`) run here, the writer started cold every two seconds under
//! load, and on a large database, whose hot pages lie beyond what
//! `mmap_size` maps, reading them back cost the lifecycle a quarter of its
//! rate at a million finished tasks (bench/HISTORY.md, item 25). So the
//! PASSIVE copies run here, and the restarts run on the writer's own
//! connection between two of its batches ([`Writer::between_batches`]):
//! they block writes exactly as long as before (a `RESTART` holds the write
//! lock either way), and the writer's cache stays warm.

use super::Writer;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, SqliteConnection};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// How often the WAL is checkpointed while writes go on. At the writer's
/// peak (a few thousand requests a second, a few MiB of WAL a second) this
/// keeps the WAL near the size autocheckpoint would.
const INTERVAL: Duration = Duration::from_millis(100);

/// WAL content (bytes) above which a `RESTART` checkpoint runs, unless
/// configured otherwise. 64 MiB kept the WAL under 163 MB at 300 tasks/s
/// plus 2,000 log rows/s.
pub const DEFAULT_WAL_RESTART_BYTES: u64 = 64 * 1024 * 1024;
/// The least restart threshold a store accepts: below it the RESTART
/// checkpoints (each waits for the writer's batch) would come every
/// `RESTART_EVERY` under any load.
pub const MIN_WAL_RESTART_BYTES: u64 = 64 * 1024;
/// Least time between two `RESTART` checkpoints.
const RESTART_EVERY: Duration = Duration::from_secs(2);

/// How many times the restart threshold the WAL file may reach before the
/// commit after a restart cuts it back ([`journal_size_limit`]). The file
/// peaked at 330 MiB (about five times the default threshold) in
/// `orch bench claim-latency` on a 2-core host, whose calibration writes
/// as fast as the writer can.
const SHRINK_PAST_THRESHOLDS: u64 = 8;

/// The `journal_size_limit` every connection sets for a restart threshold
/// of `restart_above` bytes: the size past which SQLite cuts the WAL file
/// back when the WAL starts over (module docs).
pub(super) fn journal_size_limit(restart_above: u64) -> u64 {
    // SQLite reads the pragma's value as a signed 64-bit integer.
    restart_above
        .saturating_mul(SHRINK_PAST_THRESHOLDS)
        .min(i64::MAX as u64)
}

/// Starts the checkpointer of the SQLite database `options` opens, written
/// by `writer`, restarting the WAL once it holds more than `restart_above`
/// bytes. It ends when the store closes, or when the writer is gone
/// (a store dropped without closing): it holds no strong reference, so it
/// keeps neither the writer's connection nor the file open.
pub(super) fn spawn_checkpointer(
    options: SqliteConnectOptions,
    writer: &Arc<Writer>,
    restart_above: u64,
) -> tokio::task::AbortHandle {
    let writer = Arc::downgrade(writer);
    let restart_above = restart_above.max(MIN_WAL_RESTART_BYTES);
    tokio::spawn(async move {
        let mut conn: Option<SqliteConnection> = None;
        let begun = |writer: &Weak<Writer>| writer.upgrade().map(|w| w.batches_begun());
        let Some(mut seen) = begun(&writer) else {
            return;
        };
        let wal = options.get_filename().as_os_str().to_owned();
        let wal = std::path::PathBuf::from({
            let mut name = wal;
            name.push("-wal");
            name
        });
        let mut last_restart = Instant::now();
        let mut trimmed = true;
        loop {
            tokio::time::sleep(INTERVAL).await;
            let Some(begun) = begun(&writer) else {
                return;
            };
            if begun == seen {
                // Writes stopped: a WAL file left large by a burst is cut
                // back once (nothing waits on the writer now).
                let large = std::fs::metadata(&wal).is_ok_and(|m| m.len() > restart_above);
                if !trimmed
                    && large
                    && let Some(writer) = writer.upgrade()
                {
                    let _ = writer
                        .between_batches("PRAGMA wal_checkpoint(TRUNCATE)")
                        .await;
                    trimmed = true;
                }
                continue;
            }
            trimmed = false;
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
                Ok((_, frames, copied)) => {
                    if copied >= frames {
                        seen = begun;
                    }
                    if u64::try_from(frames.saturating_mul(page_size(c).await))
                        .is_ok_and(|bytes| bytes > restart_above)
                        && last_restart.elapsed() >= RESTART_EVERY
                    {
                        last_restart = Instant::now();
                        let Some(writer) = writer.upgrade() else {
                            return;
                        };
                        if let Some(Err(e)) = writer
                            .between_batches("PRAGMA wal_checkpoint(RESTART)")
                            .await
                        {
                            tracing::warn!(error = %e, "RESTART checkpoint failed");
                        }
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "WAL checkpoint failed; reconnecting");
                    conn = None;
                }
            }
        }
    })
    .abort_handle()
}

/// The database's page size (the unit of the WAL's frame counts).
async fn page_size(conn: &mut SqliteConnection) -> i64 {
    sqlx::query_scalar::<_, i64>("PRAGMA page_size")
        .fetch_one(conn)
        .await
        .unwrap_or(4096)
}
