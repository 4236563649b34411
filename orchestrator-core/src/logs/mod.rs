//! Logs: the structured execution log. One file per part: `ingest`,
//! `query`, `filter`, `rows`, `cursor`, `stats`.
//!
//! Runtimes ingest rows in batches (`ControlPlane::ingest_logs`, one
//! multi-row INSERT per batch inside one transaction: all or nothing); the
//! platform writes its own rows (source `platform`) through
//! `write_platform_log` inside the transaction of the operation it
//! describes (auth events today, task lifecycle operations when tasks land).
//!
//! ## Keyset order and cursors
//!
//! Rows are read by an increasing key. On SQLite the key is the row id: the
//! single writer makes ids commit in order. On PostgreSQL identity values
//! commit out of order, so the key is `(txid, id)`, where `txid` is the
//! writing transaction's id, and readers that follow the log forwards
//! (streams) only read rows with
//! `txid < pg_snapshot_xmin(pg_current_snapshot())`: those transactions have
//! all finished, and any later write gets a larger txid, so nothing can ever
//! appear behind a reader's position. (A transaction held open anywhere in the
//! cluster therefore delays streams until it ends; sessions close idle
//! transactions after 60 s.) `GET /logs` pages backwards (newest first) over
//! the same key, so a row committed after the first page was read is newer
//! than everything already paged and never shows up out of turn.
//!
//! The list cursor is opaque (`base64url("v1:<txid>:<id>")`). A row's public
//! `id` is its integer id as a string; streams use it as the SSE `id:`, and
//! resuming after it looks up that row's `txid`.

mod cursor;
mod filter;
mod ingest;
mod query;
mod rows;
mod stats;

pub use cursor::{Direction, LogKey, StreamStart};
pub use filter::ResolvedFilter;
pub(crate) use ingest::{PlatformLog, write_platform_log};
