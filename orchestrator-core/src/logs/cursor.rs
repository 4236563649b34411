//! Positions in the log's keyset order: the key, its opaque cursor form,
//! the head of the log and where a stream starts.

use crate::error::{Error, Result};
use crate::store::{Access, Dialect, on_db};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use uuid::Uuid;

/// A position in the keyset order: `(txid, id)`; `txid` is 0 on SQLite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct LogKey {
    /// The PostgreSQL transaction id that wrote the row; 0 on SQLite,
    /// where ids commit in order.
    pub txid: i64,
    /// The log row's id.
    pub id: i64,
}

impl LogKey {
    /// The opaque cursor text.
    pub fn encode(self) -> String {
        URL_SAFE_NO_PAD.encode(format!("v1:{}:{}", self.txid, self.id))
    }

    /// Parses a cursor; `400 VALIDATION_ERROR` when it is not one of ours.
    pub fn decode(text: &str) -> Result<Self> {
        let bad = || Error::invalid_field("cursor", "is not a cursor this server issued");
        let raw = URL_SAFE_NO_PAD.decode(text.trim()).map_err(|_| bad())?;
        let raw = String::from_utf8(raw).map_err(|_| bad())?;
        let mut parts = raw.split(':');
        match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some("v1"), Some(txid), Some(id), None) => Ok(Self {
                txid: txid.parse().map_err(|_| bad())?,
                id: id.parse().map_err(|_| bad())?,
            }),
            _ => Err(bad()),
        }
    }
}

/// Which way a read walks the keyset order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Oldest first; on PostgreSQL only rows below the safe high-water mark
    /// (for followers, which must never miss a row).
    Forward,
    /// Oldest first over every committed row (one-shot reads: exports).
    ForwardCommitted,
    /// Newest first.
    Backward,
}

/// Where a stream or tail starts.
#[derive(Debug, Clone)]
pub enum StreamStart {
    /// After this cursor (from `cursor`).
    Cursor(LogKey),
    /// After this row id (from `Last-Event-ID` or `after`).
    AfterRow(i64),
    /// At the oldest row matching the filter (`since` given).
    Beginning,
    /// Only rows written from now on.
    Now,
}

/// The key of row `id` in the tenant (for resuming after a row id). A row
/// that no longer exists resumes after the newest row at or below its id.
pub(crate) async fn key_of_row(
    access: &mut impl Access,
    dialect: Dialect,
    tenant_id: Uuid,
    id: i64,
) -> Result<LogKey> {
    if dialect == Dialect::Sqlite {
        return Ok(LogKey { txid: 0, id });
    }
    let found: Option<(i64,)> = on_db!(access, c => sqlx::query_as(
        "SELECT txid FROM logs WHERE tenant_id = $1 AND id <= $2 ORDER BY id DESC LIMIT 1"
    )
    .bind(tenant_id)
    .bind(id)
    .fetch_optional(c)
    .await)?;
    Ok(LogKey {
        txid: found.map_or(0, |(t,)| t),
        id,
    })
}

/// The newest committed key now: where a live stream without a resume point
/// starts ("rows committed from now on"; rows of transactions that were
/// already running and commit later with a smaller txid are not part of it).
pub(crate) async fn head_key(access: &mut impl Access, tenant_id: Uuid) -> Result<LogKey> {
    let found: Option<(i64, i64)> = on_db!(access, c => sqlite: sqlx::query_as(
        "SELECT 0, id FROM logs WHERE tenant_id = $1 ORDER BY id DESC LIMIT 1"
    )
    .bind(tenant_id)
    .fetch_optional(c)
    .await,
    postgres: sqlx::query_as(
        "SELECT txid, id FROM logs WHERE tenant_id = $1 \
         ORDER BY txid DESC, id DESC LIMIT 1"
    )
    .bind(tenant_id)
    .fetch_optional(c)
    .await)?;
    Ok(found.map_or(LogKey { txid: 0, id: 0 }, |(txid, id)| LogKey { txid, id }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_garbage() {
        let key = LogKey { txid: 77, id: 12 };
        assert_eq!(LogKey::decode(&key.encode()).unwrap(), key);
        assert!(LogKey::decode("nope").is_err());
        assert!(LogKey::decode(&URL_SAFE_NO_PAD.encode("v1:x:1")).is_err());
    }
}
