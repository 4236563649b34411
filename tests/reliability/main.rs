//! The reliability suite: what orch promises under concurrency, hostile
//! input, other tenants and crashes (README "Guarantees"), each proved over
//! a real server on SQLite and on PostgreSQL.

mod claims;
mod combined;
mod deep;
mod disk;
mod fixtures;
mod floods;
mod give_way;
mod group_commit;
mod hostile;
mod input;
mod isolation;
mod limits;
mod open_streams;
mod outage;
mod raw;
mod references;
mod secrets;
mod sessions;
mod statistics;
mod wal;
