//! Housekeeping that keeps tables from growing without bound: idempotency
//! records past their retention, and refresh sessions that can no longer be
//! used. The background runner ([`crate::background`]) runs
//! [`ControlPlane::purge_expired`] every
//! [`crate::CoreConfig::retention_interval`]; embedding programs may call it
//! themselves. Finished runs, events and logs are [`crate::retention`]'s.

use crate::control_plane::ControlPlane;
use crate::error::Result;
use crate::store::on_db;
use std::time::Duration;

/// How long a `request_id` can be replayed (a day, like most payment APIs).
pub const IDEMPOTENCY_RETENTION: Duration = Duration::from_secs(24 * 3600);
/// How long a dead refresh session is kept after it expired or was revoked,
/// so reuse of a rotated token is still recognised for a while.
pub const SESSION_RETENTION: Duration = Duration::from_secs(24 * 3600);

/// Idempotency records deleted per transaction: a day of records at a
/// thousand writes a second is millions of rows, which one statement would
/// delete while holding the writer for seconds.
const RECORD_CHUNK: i64 = 5_000;

/// Oldest first on `idempotency_records_created`; the next chunk starts at
/// the newest instant the previous one deleted.
const RECORDS: &str = "DELETE FROM idempotency_records \
     WHERE (tenant_id, operation, request_id) IN (SELECT tenant_id, operation, request_id \
     FROM idempotency_records WHERE created_at >= $1 AND created_at < $2 \
     ORDER BY created_at LIMIT $3) RETURNING created_at";

/// What one purge removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Purged {
    /// Recorded results of idempotent writes past their retention.
    pub idempotency_records: u64,
    /// Refresh tokens expired or revoked longer than
    /// [`SESSION_RETENTION`] ago.
    pub refresh_sessions: u64,
    /// Sessions (refresh families) with no refresh token left.
    pub sessions: u64,
}

impl ControlPlane {
    /// Deletes idempotency records older than `idempotency_retention` (in
    /// chunks of a few thousand, one transaction each),
    /// refresh sessions expired or revoked more than [`SESSION_RETENTION`]
    /// ago, and the sessions left without any refresh session.
    pub async fn purge_expired(&self, idempotency_retention: Duration) -> Result<Purged> {
        let now = self.now().as_datetime();
        let records_before = now
            - chrono::Duration::from_std(idempotency_retention).unwrap_or(chrono::Duration::MAX);
        let sessions_before =
            now - chrono::Duration::from_std(SESSION_RETENTION).unwrap_or(chrono::Duration::MAX);
        // No deadline: what is due is deleted now, a chunk at a time.
        let (idempotency_records, _) = self
            .delete_oldest_first(RECORDS, None, records_before, RECORD_CHUNK, None)
            .await?;
        let mut tx = self.store().begin().await?;
        let refresh_sessions = on_db!(&mut tx, c => sqlx::query(
            "DELETE FROM refresh_sessions WHERE expires_at < $1 OR revoked_at < $1",
        )
        .bind(sessions_before)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
        // A session whose refresh tokens are all gone can issue no access
        // token, and its last one expired long ago; an access token naming a
        // session that no longer exists is refused like a revoked one.
        let sessions = on_db!(&mut tx, c => sqlx::query(
            "DELETE FROM auth_sessions WHERE created_at < $1 \
             AND NOT EXISTS (SELECT 1 FROM refresh_sessions r WHERE r.family_id = auth_sessions.id)",
        )
        .bind(sessions_before)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
        tx.commit().await?;
        Ok(Purged {
            idempotency_records,
            refresh_sessions,
            sessions,
        })
    }
}
