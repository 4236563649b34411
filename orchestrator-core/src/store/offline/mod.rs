//! Work on a database file or server directly, outside the control plane:
//! online backup and restore of the embedded SQLite database
//! ([`backup()`], [`restore()`]), the integrity check ([`check()`]), and the
//! move from SQLite to PostgreSQL ([`copy()`]). `orch db` calls these; they
//! open their own connections instead of a [`super::Store`], since a store
//! migrates the database it opens and these must look at it as it is.

mod backup;
mod check;
mod copy;
mod schema;
mod values;

pub use backup::{BackupReport, RestoreReport, backup, restore};
pub use check::{Check, CheckReport, check};
pub use copy::{CopyReport, TableCopy, copy};
pub use schema::SchemaStatus;

use super::{DataLock, LockFailure};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, SqliteConnection};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why an offline operation did not run or did not finish.
#[derive(Debug, thiserror::Error)]
pub enum OfflineError {
    /// Running would harm data as it stands: a server holds the database,
    /// the target is not empty, the output exists. Nothing was changed.
    #[error("{0}")]
    Refused(String),
    /// The input is not what the operation needs (not an orch database, a
    /// schema this binary does not know, the wrong kind of URL).
    #[error("{0}")]
    Invalid(String),
    /// The operation ran and found its result wrong (copy verification).
    #[error("{0}")]
    Failed(String),
    /// A database statement or connection failed.
    #[error("{context}: {source}")]
    Database {
        /// What was being done, for the operator ("cannot read the
        /// schema").
        context: String,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
    /// A file operation failed (open, sync, rename, remove).
    #[error("{context}: {source}")]
    Io {
        /// What was being done, naming the file.
        context: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

/// The result of an offline operation.
pub type Result<T> = std::result::Result<T, OfflineError>;

/// Adds what was being done to a database or file error.
pub(crate) trait Context<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> Context<T> for std::result::Result<T, sqlx::Error> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| OfflineError::Database {
            context: what(),
            source,
        })
    }
}

impl<T> Context<T> for std::result::Result<T, std::io::Error> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| OfflineError::Io {
            context: what(),
            source,
        })
    }
}

/// Whether `url` names a PostgreSQL database.
pub fn is_postgres(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

/// The file of a `sqlite://PATH` URL.
pub fn sqlite_path(url: &str) -> Option<PathBuf> {
    let path = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = path.split('?').next().unwrap_or(path);
    (!path.is_empty() && path != ":memory:").then(|| PathBuf::from(path))
}

/// The SQLite file of `url` for an operation that only exists on SQLite;
/// on PostgreSQL the error names the tool to use instead (`instead`).
fn sqlite_only(url: &str, what: &str, instead: &str) -> Result<PathBuf> {
    if is_postgres(url) {
        return Err(OfflineError::Invalid(format!(
            "orch db {what} works on the embedded SQLite database; for PostgreSQL use {instead} \
             (docs/deployment.md, \"Backups\")"
        )));
    }
    sqlite_path(url).ok_or_else(|| {
        OfflineError::Invalid(format!(
            "not a database URL orch can {what}: {url} (expected sqlite://PATH)"
        ))
    })
}

/// Opens an existing SQLite file as it is: never creates it, never changes
/// its journal mode.
async fn open_sqlite(path: &Path) -> Result<SqliteConnection> {
    if !path.is_file() {
        return Err(OfflineError::Invalid(format!(
            "no database file at {}",
            path.display()
        )));
    }
    SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(false)
        .busy_timeout(Duration::from_secs(30))
        .connect()
        .await
        .context(|| format!("cannot open {}", path.display()))
}

/// The exclusive lock on the SQLite database at `path` ([`DataLock`]).
fn lock_exclusive(path: &Path) -> Result<DataLock> {
    match DataLock::exclusive(path) {
        Ok(lock) => Ok(lock),
        Err(LockFailure::Held) => Err(OfflineError::Refused(format!(
            "{} is open in a running orch (a server, or another orch db or orch admin \
             command): stop it first",
            path.display()
        ))),
        Err(LockFailure::Io(source)) => Err(OfflineError::Io {
            context: format!("cannot lock {}", DataLock::path(path).display()),
            source,
        }),
    }
}

/// The directory of `path`, for the file's neighbours and for `fsync`.
fn parent(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}
