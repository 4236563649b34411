//! The connections repository functions run on: [`Access`], implemented by
//! a read [`Conn`] and a write [`super::Tx`], and the [`Db`] that `on_db!`
//! matches on.

use sqlx::{PgConnection, SqliteConnection};

/// A borrowed connection of either backend; what `on_db!` matches on.
pub enum Db<'c> {
    /// A connection of the embedded SQLite database.
    Sqlite(&'c mut SqliteConnection),
    /// A connection of the PostgreSQL server.
    Postgres(&'c mut PgConnection),
}

/// Anything a repository function can run queries on.
pub trait Access: Send {
    /// The connection to run the next statement on, borrowed for as long
    /// as the statement runs.
    fn db(&mut self) -> Db<'_>;
}

/// A pooled connection for reads.
pub enum Conn {
    /// A read-only connection of the SQLite read pool.
    Sqlite(sqlx::pool::PoolConnection<sqlx::Sqlite>),
    /// A connection of the PostgreSQL pool; runs each statement in its own
    /// implicit transaction.
    Postgres(sqlx::pool::PoolConnection<sqlx::Postgres>),
}

impl Access for Conn {
    fn db(&mut self) -> Db<'_> {
        match self {
            Conn::Sqlite(c) => Db::Sqlite(c),
            Conn::Postgres(c) => Db::Postgres(c),
        }
    }
}
