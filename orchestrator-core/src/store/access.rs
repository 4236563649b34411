//! The connections repository functions run on: [`Access`], implemented by
//! a read [`Conn`] and a write [`super::Tx`], and the [`Db`] that `on_db!`
//! matches on.

use sqlx::{PgConnection, SqliteConnection};

/// A borrowed connection of either backend; what `on_db!` matches on.
pub enum Db<'c> {
    Sqlite(&'c mut SqliteConnection),
    Postgres(&'c mut PgConnection),
}

/// Anything a repository function can run queries on.
pub trait Access: Send {
    fn db(&mut self) -> Db<'_>;
}

/// A pooled connection for reads.
pub enum Conn {
    Sqlite(sqlx::pool::PoolConnection<sqlx::Sqlite>),
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
