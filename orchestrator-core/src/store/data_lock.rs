//! Who has a SQLite database open. Every store that opens the file holds a
//! shared advisory lock on `<database>.lock` beside it for as long as it
//! lives; the offline commands that replace the file or copy it elsewhere
//! (`orch db restore`, `orch db copy`) take the same lock exclusively. So a
//! restore refuses to run while a server has the database open, and a
//! server refuses to start while a restore or a copy runs. Several stores
//! may share the database (they all take the lock shared).
//!
//! The lock is on a file of its own, not on the database: SQLite's locks
//! are POSIX record locks, which a process loses as soon as it closes any
//! descriptor of the same file, so nothing but SQLite may open and close the
//! database file in a process that has it open. The operating system drops
//! the lock when its holder exits, even by `kill -9`: a stale lock file
//! never blocks anyone.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

/// A held lock on a database's lock file; released when dropped.
#[derive(Debug)]
pub struct DataLock {
    _file: File,
}

/// Why a lock was not taken.
#[derive(Debug)]
pub enum LockFailure {
    /// Someone else holds it in the conflicting mode.
    Held,
    /// The lock file could not be created or locked.
    Io(std::io::Error),
}

impl DataLock {
    /// The lock file of the database at `database`.
    pub fn path(database: &Path) -> PathBuf {
        let mut name = database.as_os_str().to_owned();
        name.push(".lock");
        name.into()
    }

    /// The lock a store holds while it has the database open.
    pub fn shared(database: &Path) -> Result<Self, LockFailure> {
        let file = open(database)?;
        match file.try_lock_shared() {
            Ok(()) => Ok(Self { _file: file }),
            Err(TryLockError::WouldBlock) => Err(LockFailure::Held),
            Err(TryLockError::Error(e)) => Err(LockFailure::Io(e)),
        }
    }

    /// The lock of a command that must have the database to itself.
    pub fn exclusive(database: &Path) -> Result<Self, LockFailure> {
        let file = open(database)?;
        match file.try_lock() {
            Ok(()) => Ok(Self { _file: file }),
            Err(TryLockError::WouldBlock) => Err(LockFailure::Held),
            Err(TryLockError::Error(e)) => Err(LockFailure::Io(e)),
        }
    }
}

/// Opens (creating it, readable by this user only) the lock file.
fn open(database: &Path) -> Result<File, LockFailure> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
        .open(DataLock::path(database))
        .map_err(LockFailure::Io)
}

/// The store's shared lock on the SQLite file at `path` (none for an
/// in-memory database): a restore or copy in progress stops the start.
pub(super) fn for_store(path: &Path) -> crate::error::Result<Option<DataLock>> {
    if path.as_os_str().is_empty() || path.as_os_str() == ":memory:" {
        return Ok(None);
    }
    match DataLock::shared(path) {
        Ok(lock) => Ok(Some(lock)),
        Err(LockFailure::Held) => Err(crate::error::Error::internal(format!(
            "{} is being restored or copied (`orch db restore` or `orch db copy` holds {}): \
             wait for it to finish",
            path.display(),
            DataLock::path(path).display()
        ))),
        Err(LockFailure::Io(e)) => Err(crate::error::Error::internal(e)),
    }
}
