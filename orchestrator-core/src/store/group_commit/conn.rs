//! A writer's dedicated connection, and how to open it (again) and begin a
//! batch on it.

use crate::store::{Access, Db};
use sqlx::postgres::PgConnectOptions;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, PgConnection, SqliteConnection};

/// How to open a writer connection again after it broke.
#[derive(Clone)]
pub(crate) enum Opener {
    Sqlite(SqliteConnectOptions),
    /// The options, and the session set-up each new connection runs
    /// ([`crate::store::StoreOptions::writer_session`]).
    Postgres(PgConnectOptions, &'static str),
}

impl Opener {
    pub(crate) async fn open(&self) -> std::result::Result<WriterConn, sqlx::Error> {
        Ok(match self {
            Self::Sqlite(options) => WriterConn::Sqlite(options.connect().await?),
            Self::Postgres(options, session) => {
                let mut conn = options.connect().await?;
                if !session.is_empty() {
                    sqlx::raw_sql(*session).execute(&mut conn).await?;
                }
                WriterConn::Postgres(conn)
            }
        })
    }

    /// Opens a batch and (`guarded`) its first request's savepoint, in one
    /// round trip.
    pub(super) fn begin_sql(&self, guarded: bool) -> &'static str {
        match (self, guarded) {
            // Take the write lock at once: a batch never starts as a reader.
            (Self::Sqlite(_), true) => "BEGIN IMMEDIATE; SAVEPOINT orch_request",
            (Self::Sqlite(_), false) => "BEGIN IMMEDIATE",
            (Self::Postgres(..), true) => "BEGIN; SAVEPOINT orch_request",
            (Self::Postgres(..), false) => "BEGIN",
        }
    }
}

/// A writer's dedicated connection.
pub(crate) enum WriterConn {
    Sqlite(SqliteConnection),
    Postgres(PgConnection),
}

impl WriterConn {
    pub(super) async fn run(&mut self, sql: &'static str) -> std::result::Result<(), sqlx::Error> {
        match self {
            Self::Sqlite(c) => sqlx::raw_sql(sql).execute(c).await.map(|_| ()),
            Self::Postgres(c) => sqlx::raw_sql(sql).execute(c).await.map(|_| ()),
        }
    }

    pub(crate) fn db(&mut self) -> Db<'_> {
        match self {
            Self::Sqlite(c) => Db::Sqlite(c),
            Self::Postgres(c) => Db::Postgres(c),
        }
    }
}

impl Access for WriterConn {
    fn db(&mut self) -> Db<'_> {
        WriterConn::db(self)
    }
}
