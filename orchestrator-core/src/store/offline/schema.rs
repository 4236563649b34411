//! Which schema a database holds, compared with the migrations built into
//! this binary: what `orch db check` reports and what restore and copy
//! require before they touch anything.

use super::{Context, OfflineError, Result};
use crate::store::{POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS};
use serde::Serialize;
use sqlx::migrate::Migrator;
use sqlx::{PgConnection, SqliteConnection};

/// The migrations a database has applied, against this binary's.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SchemaStatus {
    /// The highest migration applied (0: none).
    pub version: i64,
    /// The highest migration this binary has.
    pub latest_known: i64,
    /// This binary's migrations the database has not applied yet: `orch
    /// serve` applies them when it starts.
    pub pending: Vec<i64>,
    /// Applied migrations this binary does not have: the database was
    /// written by a newer orch.
    pub unknown: Vec<i64>,
    /// Applied migrations whose text differs from this binary's.
    pub modified: Vec<i64>,
    /// Migrations that started and did not finish.
    pub failed: Vec<i64>,
}

/// One row of `_sqlx_migrations`.
type Applied = (i64, bool, Vec<u8>);

impl SchemaStatus {
    /// The schema of a SQLite database; `Invalid` when it is not orch's.
    pub async fn sqlite(conn: &mut SqliteConnection) -> Result<Self> {
        let (found,): (i64,) = sqlx::query_as(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'",
        )
        .fetch_one(&mut *conn)
        .await
        .context(|| "cannot read the schema".into())?;
        if found == 0 {
            return Err(not_orch());
        }
        let applied: Vec<Applied> = sqlx::query_as(
            "SELECT version, success, checksum FROM _sqlx_migrations ORDER BY version",
        )
        .fetch_all(&mut *conn)
        .await
        .context(|| "cannot read the applied migrations".into())?;
        Ok(Self::compare(&SQLITE_MIGRATIONS, &applied))
    }

    /// The schema of a PostgreSQL database (its current schema); `None`
    /// when it has no migrations table at all (a new, empty database).
    pub async fn postgres(conn: &mut PgConnection) -> Result<Option<Self>> {
        let (found,): (bool,) = sqlx::query_as(
            "SELECT EXISTS (SELECT 1 FROM information_schema.tables \
             WHERE table_schema = current_schema() AND table_name = '_sqlx_migrations')",
        )
        .fetch_one(&mut *conn)
        .await
        .context(|| "cannot read the schema".into())?;
        if !found {
            return Ok(None);
        }
        let applied: Vec<Applied> = sqlx::query_as(
            "SELECT version, success, checksum FROM _sqlx_migrations ORDER BY version",
        )
        .fetch_all(&mut *conn)
        .await
        .context(|| "cannot read the applied migrations".into())?;
        Ok(Some(Self::compare(&POSTGRES_MIGRATIONS, &applied)))
    }

    fn compare(known: &Migrator, applied: &[Applied]) -> Self {
        let mut status = Self {
            version: applied.iter().map(|a| a.0).max().unwrap_or(0),
            latest_known: known.iter().map(|m| m.version).max().unwrap_or(0),
            ..Self::default()
        };
        for (version, success, checksum) in applied {
            match known.iter().find(|m| m.version == *version) {
                None => status.unknown.push(*version),
                Some(m) if m.checksum.as_ref() != checksum.as_slice() => {
                    status.modified.push(*version);
                }
                Some(_) => {}
            }
            if !success {
                status.failed.push(*version);
            }
        }
        status.pending = known
            .iter()
            .map(|m| m.version)
            .filter(|v| !applied.iter().any(|a| a.0 == *v))
            .collect();
        status
    }

    /// What keeps this binary from using the database, if anything.
    pub fn problem(&self) -> Option<String> {
        if !self.unknown.is_empty() {
            return Some(format!(
                "the database has migrations this orch does not know ({}): it was written by a \
                 newer orch (this one knows up to {})",
                list(&self.unknown),
                self.latest_known
            ));
        }
        if !self.modified.is_empty() {
            return Some(format!(
                "applied migrations differ from this orch's ({})",
                list(&self.modified)
            ));
        }
        if !self.failed.is_empty() {
            return Some(format!(
                "migrations did not finish ({})",
                list(&self.failed)
            ));
        }
        None
    }

    /// [`Self::problem`] as an error.
    pub fn require_known(&self) -> Result<()> {
        match self.problem() {
            Some(problem) => Err(OfflineError::Invalid(problem)),
            None => Ok(()),
        }
    }

    /// One line: the version and what is pending.
    pub fn summary(&self) -> String {
        let mut line = format!(
            "version {} (this orch: {})",
            self.version, self.latest_known
        );
        if !self.pending.is_empty() {
            line.push_str(&format!(
                "; pending migrations {} (orch serve applies them at start)",
                list(&self.pending)
            ));
        }
        line
    }
}

fn list(versions: &[i64]) -> String {
    versions
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn not_orch() -> OfflineError {
    OfflineError::Invalid("not an orch database (it has no migrations table)".into())
}
