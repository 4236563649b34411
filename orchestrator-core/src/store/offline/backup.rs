//! Backup and restore of the embedded SQLite database.
//!
//! Both write with `VACUUM INTO`: SQLite copies the database as one read
//! transaction sees it, so a backup taken while the server writes is a
//! consistent snapshot (the server's WAL readers and writer go on; the
//! checkpointer only waits to recycle the WAL until the copy ends), and the
//! copy is compacted. The output is first written beside its destination
//! under a temporary name, readable by this user only (it holds the master
//! secret and every sealed credential), synced, and then renamed into
//! place, so a destination never holds half a database.

use super::schema::SchemaStatus;
use super::{Context, OfflineError, Result, lock_exclusive, open_sqlite, parent, sqlite_only};
use serde::Serialize;
use sqlx::{Connection, SqliteConnection};
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What `orch db backup` wrote.
#[derive(Debug, Clone, Serialize)]
pub struct BackupReport {
    /// The SQLite file that was copied.
    pub database: PathBuf,
    /// The file written (put in place only once complete and synced).
    pub backup: PathBuf,
    /// Size of the backup file, in bytes (compacted, so often smaller than
    /// the database).
    pub bytes: u64,
    /// The highest migration the copied database had applied.
    pub schema_version: i64,
    /// Wall time the backup took, in milliseconds.
    pub millis: u64,
}

/// What `orch db restore` put in place.
#[derive(Debug, Clone, Serialize)]
pub struct RestoreReport {
    /// The backup file that was restored from (left as it was).
    pub backup: PathBuf,
    /// The database file now holding the backup's data.
    pub database: PathBuf,
    /// Size of the restored database file, in bytes.
    pub bytes: u64,
    /// The highest migration the backup had applied.
    pub schema_version: i64,
    /// Migrations `orch serve` applies when it next starts on it.
    pub pending_migrations: Vec<i64>,
    /// Whether a database was there before and was replaced.
    pub replaced: bool,
}

/// Copies the SQLite database of `database_url` to `to` while a server may
/// be running on it. `overwrite` allows replacing an existing `to`.
pub async fn backup(database_url: &str, to: &Path, overwrite: bool) -> Result<BackupReport> {
    let source = sqlite_only(database_url, "backup", "pg_dump")?;
    if to.exists() && !overwrite {
        return Err(OfflineError::Refused(format!(
            "{} already exists: choose another name or pass --overwrite",
            to.display()
        )));
    }
    let started = Instant::now();
    let mut conn = open_sqlite(&source).await?;
    let schema = SchemaStatus::sqlite(&mut conn).await?;
    let partial = vacuum_into(&mut conn, to).await;
    let _ = conn.close().await;
    let partial = partial?;
    let bytes = publish(&partial, to)?;
    Ok(BackupReport {
        database: source,
        backup: to.to_path_buf(),
        bytes,
        schema_version: schema.version,
        millis: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    })
}

/// Puts the backup `from` in place of the SQLite database of
/// `database_url`, with no server running on it. The backup must pass
/// SQLite's quick check and hold a schema this binary knows. `replace`
/// allows replacing a database that is there.
pub async fn restore(database_url: &str, from: &Path, replace: bool) -> Result<RestoreReport> {
    let target = sqlite_only(database_url, "restore", "pg_restore or psql")?;
    require_sqlite_file(from)?;
    let mut source = open_sqlite(from).await?;
    let verified = verify_backup(&mut source, from).await;
    let schema = match verified {
        Ok(schema) => schema,
        Err(e) => {
            let _ = source.close().await;
            return Err(e);
        }
    };
    let dir = parent(&target);
    create_private_dir(dir)?;
    let _lock = lock_exclusive(&target)?;
    let replaced = std::fs::metadata(&target).is_ok_and(|m| m.len() > 0);
    if replaced && !replace {
        let _ = source.close().await;
        return Err(OfflineError::Refused(format!(
            "{} already holds a database: pass --replace to overwrite it",
            target.display()
        )));
    }
    let partial = vacuum_into(&mut source, &target).await;
    let _ = source.close().await;
    let partial = partial?;
    // The old database's WAL and index must not be applied to the new file.
    for suffix in ["-wal", "-shm"] {
        let mut name = target.as_os_str().to_owned();
        name.push(suffix);
        match std::fs::remove_file(PathBuf::from(&name)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                let _ = std::fs::remove_file(&partial);
                return Err(e).context(|| format!("cannot remove {}", name.display()));
            }
        }
    }
    let bytes = publish(&partial, &target)?;
    Ok(RestoreReport {
        backup: from.to_path_buf(),
        database: target,
        bytes,
        schema_version: schema.version,
        pending_migrations: schema.pending,
        replaced,
    })
}

/// Refuses anything but a SQLite database file (by its header), before
/// SQLite is asked to open it.
fn require_sqlite_file(path: &Path) -> Result<()> {
    use std::io::Read;
    let mut header = [0u8; 16];
    let read = std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut header))
        .map(|()| header == *b"SQLite format 3\0");
    match read {
        Ok(true) => Ok(()),
        Ok(false) => Err(OfflineError::Invalid(format!(
            "{} is not a SQLite database",
            path.display()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(OfflineError::Invalid(
            format!("{} is not a SQLite database", path.display()),
        )),
        Err(e) => Err(e).context(|| format!("cannot read {}", path.display())),
    }
}

/// The checks a backup passes before it replaces anything.
async fn verify_backup(conn: &mut SqliteConnection, path: &Path) -> Result<SchemaStatus> {
    let rows: Vec<(String,)> = sqlx::query_as("PRAGMA quick_check")
        .fetch_all(&mut *conn)
        .await
        .context(|| format!("{} cannot be read", path.display()))?;
    if rows.len() != 1 || rows[0].0 != "ok" {
        let found: Vec<String> = rows.into_iter().take(5).map(|r| r.0).collect();
        return Err(OfflineError::Invalid(format!(
            "{} fails SQLite's quick check: {}",
            path.display(),
            found.join("; ")
        )));
    }
    let schema = SchemaStatus::sqlite(conn).await?;
    schema.require_known()?;
    Ok(schema)
}

/// Writes the database of `conn` as one snapshot to a private temporary
/// file beside `dest`; returns the temporary file.
async fn vacuum_into(conn: &mut SqliteConnection, dest: &Path) -> Result<PathBuf> {
    let name = dest
        .file_name()
        .ok_or_else(|| OfflineError::Invalid(format!("not a file name: {}", dest.display())))?;
    let mut partial_name = std::ffi::OsString::from(".");
    partial_name.push(name);
    partial_name.push(".partial");
    let partial = parent(dest).join(partial_name);
    let _ = std::fs::remove_file(&partial);
    // VACUUM INTO accepts an existing empty file: create it private first.
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
        .open(&partial)
        .context(|| format!("cannot create {}", partial.display()))?;
    let path = partial
        .to_str()
        .ok_or_else(|| OfflineError::Invalid(format!("not a UTF-8 path: {}", partial.display())))?;
    if let Err(e) = sqlx::query("VACUUM INTO $1")
        .bind(path)
        .execute(&mut *conn)
        .await
    {
        let _ = std::fs::remove_file(&partial);
        return Err(e).context(|| format!("cannot write {}", partial.display()));
    }
    Ok(partial)
}

/// Syncs `partial` and renames it to `dest` (then syncs the directory, so
/// the rename survives a crash); returns the size.
fn publish(partial: &Path, dest: &Path) -> Result<u64> {
    let done = (|| -> std::io::Result<u64> {
        let file = std::fs::File::open(partial)?;
        file.sync_all()?;
        let bytes = file.metadata()?.len();
        std::fs::rename(partial, dest)?;
        #[cfg(unix)]
        std::fs::File::open(parent(dest))?.sync_all()?;
        Ok(bytes)
    })();
    if done.is_err() {
        let _ = std::fs::remove_file(partial);
    }
    done.context(|| format!("cannot write {}", dest.display()))
}

/// Creates the database directory, readable by this user only, when it is
/// missing (as the store does).
fn create_private_dir(dir: &Path) -> Result<()> {
    if dir.exists() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder
        .create(dir)
        .context(|| format!("cannot create {}", dir.display()))
}
