//! What this replica knows about its database's health: a circuit breaker
//! for an unreachable PostgreSQL server, and a full disk.
//!
//! Why the breaker: while PostgreSQL is down, every request would otherwise
//! wait out a connection attempt (the pool's acquire timeout) before its
//! 503, holding its client and a task of ours the whole time. A failed
//! connection attempt (or a request that met a lost connection) starts a
//! background probe; when the probe cannot connect either, the breaker
//! opens and requests answer 503 at once, until the probe gets through.
//!
//! Why the disk flag: a full disk fails writes while reads (and so a plain
//! `SELECT 1`) still work; `/readyz` must report the replica unfit while
//! writes fail for lack of space ([`Health::disk_full`]).

use super::on_db;
use crate::error::{DbFault, Error, RememberedDiskFull, Result, db_fault};
use sqlx::postgres::PgConnectOptions;
use sqlx::{ConnectOptions, Connection};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

/// How often the probe tries to connect while the database is down.
const PROBE_EVERY: Duration = Duration::from_millis(250);
/// How long one probe (connect and `SELECT 1`) may take.
pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long `/readyz` waits for `SELECT 1`: it must report an outage within
/// 2 s, the connection attempt included.
pub(crate) const PING_TIMEOUT: Duration = Duration::from_millis(1500);
/// How long `/readyz` keeps failing after the last write refused for lack
/// of space, when no write has committed since.
const DISK_FULL_MEMORY: Duration = Duration::from_secs(10);

/// The health of one store's database.
pub(crate) struct Health {
    /// PostgreSQL: where the probe connects. Unset (SQLite): a local file,
    /// nothing to probe and the breaker never opens.
    probe: OnceLock<PgConnectOptions>,
    /// The breaker is open: the probe could not connect.
    down: AtomicBool,
    /// A probe task is running.
    probing: AtomicBool,
    /// Milliseconds after `started` of the last write that failed for lack
    /// of space; 0 when none since the last commit.
    disk_full_at: AtomicU64,
    started: Instant,
}

impl Health {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            probe: OnceLock::new(),
            down: AtomicBool::new(false),
            probing: AtomicBool::new(false),
            disk_full_at: AtomicU64::new(0),
            started: Instant::now(),
        })
    }

    /// Sets where the probe connects (PostgreSQL).
    pub(crate) fn probe_with(&self, options: PgConnectOptions) {
        let _ = self.probe.set(options);
    }

    /// Refuses at once while the breaker is open.
    pub(crate) fn check(&self) -> Result<()> {
        if self.down.load(SeqCst) {
            return Err(Error::Unavailable(
                "the database is down: requests are refused until a background probe reaches it again"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Whether writes are failing for lack of space.
    pub(crate) fn disk_full(&self) -> bool {
        match self.disk_full_at.load(SeqCst) {
            0 => false,
            at => self.elapsed_ms().saturating_sub(at) < DISK_FULL_MEMORY.as_millis() as u64,
        }
    }

    /// A batch committed: the disk has room again.
    pub(crate) fn committed(&self) {
        if self.disk_full_at.load(SeqCst) != 0 {
            self.disk_full_at.store(0, SeqCst);
        }
    }

    /// Takes note of a database error met anywhere: a full disk marks the
    /// store so, a lost connection makes sure the probe runs.
    pub(crate) fn saw(self: &Arc<Self>, fault: Option<DbFault>) {
        match fault {
            Some(DbFault::DiskFull) => self.disk_full_at.store(self.elapsed_ms().max(1), SeqCst),
            Some(DbFault::Unreachable) => self.start_probe(),
            None => {}
        }
    }

    /// [`Health::saw`] for a sqlx error.
    pub(crate) fn saw_sqlx(self: &Arc<Self>, error: &sqlx::Error) {
        self.saw(db_fault(error));
    }

    fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Starts the background probe unless one runs: it connects right
    /// away; while it cannot, the breaker stays open and it tries again
    /// every [`PROBE_EVERY`].
    fn start_probe(self: &Arc<Self>) {
        let Some(options) = self.probe.get().cloned() else {
            return;
        };
        if self.probing.swap(true, SeqCst) {
            return;
        }
        let weak: Weak<Self> = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                let reached = tokio::time::timeout(PROBE_TIMEOUT, async {
                    let mut conn = options.connect().await?;
                    sqlx::query("SELECT 1").execute(&mut conn).await?;
                    let _ = conn.close().await;
                    Ok::<(), sqlx::Error>(())
                })
                .await;
                let Some(health) = weak.upgrade() else { return };
                if matches!(reached, Ok(Ok(()))) {
                    if health.down.swap(false, SeqCst) {
                        tracing::warn!("the database answers again: circuit breaker closed");
                    }
                    health.probing.store(false, SeqCst);
                    return;
                }
                if !health.down.swap(true, SeqCst) {
                    tracing::error!(
                        "the database cannot be reached: circuit breaker open, requests answer 503 until a probe gets through"
                    );
                }
                drop(health);
                tokio::time::sleep(PROBE_EVERY).await;
            }
        });
    }
}

impl super::Store {
    /// Takes note of a database fault a request met (module docs): a lost
    /// connection starts the probe of the circuit breaker, a full disk
    /// fails `/readyz` for a while.
    pub fn saw_fault(&self, fault: Option<DbFault>) {
        self.health.saw(fault);
    }

    /// Checks that the database answers (`/readyz`).
    /// Fails at once while the breaker is open, within 1.5 s otherwise, and
    /// while writes fail for lack of space.
    pub async fn ping(&self) -> Result<()> {
        if self.health.disk_full() {
            return Err(Error::StorageFull(Box::new(RememberedDiskFull)));
        }
        let answered = tokio::time::timeout(PING_TIMEOUT, async {
            let mut conn = self.read().await?;
            on_db!(&mut conn, c => sqlx::query("SELECT 1").execute(c).await.map(|_| ()))
                .map_err(|e| Error::Unavailable(Box::new(e)))
        })
        .await;
        answered.unwrap_or_else(|_| {
            self.health.saw(Some(DbFault::Unreachable));
            Err(Error::Unavailable(
                "the database did not answer within 1.5 s".into(),
            ))
        })
    }
}
