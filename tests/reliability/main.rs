//! The reliability suite: what orch promises under concurrency, hostile
//! input, other tenants and crashes (README "Guarantees"), each proved over
//! a real server on SQLite and on PostgreSQL.

mod claims;
mod combined;
mod deep;
mod disk;
mod fixtures;
mod group_commit;
mod hostile;
mod input;
mod isolation;
mod limits;
mod outage;
mod raw;
mod references;
mod secrets;
mod sessions;
mod wal;
