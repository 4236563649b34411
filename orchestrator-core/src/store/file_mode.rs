//! Who may read the SQLite database: it holds the generated master secret,
//! key hashes and every stored credential, so its directory is created
//! readable by this user only (0700) and its file 0600 (SQLite gives the
//! `-wal` and `-shm` files the database file's mode). A database found
//! with looser modes still opens, with a warning saying how to fix it.

use crate::error::{Error, Result};
use std::path::Path;

/// Creates the directory and the empty database file with private modes
/// when they are missing, and warns about looser existing ones.
pub(crate) fn prepare(path: &Path) -> Result<()> {
    if path.as_os_str().is_empty() || path.as_os_str() == ":memory:" {
        return Ok(());
    }
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        if let Some(dir) = parent
            && !dir.exists()
        {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(Error::internal)?;
        }
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
        {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::internal(e)),
        }
        let mut files = vec![path.to_path_buf()];
        for suffix in ["-wal", "-shm"] {
            let mut name = path.as_os_str().to_owned();
            name.push(suffix);
            files.push(name.into());
        }
        if let Some(dir) = parent {
            warn_if_open(dir, 0o700);
        }
        for file in &files {
            warn_if_open(file, 0o600);
        }
    }
    #[cfg(not(unix))]
    if let Some(dir) = parent {
        std::fs::create_dir_all(dir).map_err(Error::internal)?;
    }
    Ok(())
}

/// Warns when `path` (if it exists) lets its group or others in.
#[cfg(unix)]
fn warn_if_open(path: &Path, wanted: u32) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return;
    };
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        tracing::warn!(
            path = %path.display(),
            mode = format!("{mode:o}"),
            "the database holds secrets but others may read {}: chmod {wanted:o} {}",
            path.display(),
            path.display()
        );
    }
}
