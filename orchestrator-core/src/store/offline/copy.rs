//! `orch db copy`: moves an embedded SQLite database into an empty
//! PostgreSQL database.
//!
//! The table list is not kept by hand: it is read from the SQLite file and
//! from the PostgreSQL database after this binary's migrations up to the
//! source's version ran on it, and the two must name the same tables, each
//! with every SQLite column (PostgreSQL may have more, such as the `txid`
//! keyset column, when they fill themselves by default). Tables are copied parents first (by the
//! foreign keys PostgreSQL declares), rows with their ids and every value
//! as stored, so sealed secrets stay sealed under the same master key
//! (which travels in `server_secrets` unless it is configured), API keys and
//! sessions stay valid, and event and log ids stay what clients have seen.
//! Identity counters are then moved past the highest id ever used (SQLite's
//! `sqlite_sequence` remembers ids of deleted rows too).
//!
//! Everything runs in one PostgreSQL transaction: each table is read back
//! and compared (row count and [`values::Checksum`]) before the commit, and
//! any failure leaves the target as it was. The source is locked
//! ([`crate::store::DataLock`]) so no server writes to it meanwhile; the
//! target must be empty, so a server started on it by mistake (which would
//! have created its first keys) makes the copy refuse.
//!
//! A source written by an older orch is not migrated (the copy never
//! writes to it): the target is migrated to the source's version, the rows
//! copied, and the migrations the source lacks then run on the target, as
//! `orch serve` would have run them on the file.

use super::schema::SchemaStatus;
use super::values::{self, Checksum, Kind, Value};
use super::{Context, OfflineError, Result, is_postgres, lock_exclusive, open_sqlite, sqlite_path};
use crate::store::POSTGRES_MIGRATIONS;
use futures_util::TryStreamExt;
use serde::Serialize;
use sqlx::postgres::PgConnectOptions;
use sqlx::{AssertSqlSafe, Connection, PgConnection, SqliteConnection};
use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;
use std::time::Instant;

/// Rows per INSERT, and the bytes at which a batch is sent earlier.
const BATCH_ROWS: usize = 1000;
const BATCH_BYTES: usize = 8 << 20;

/// One table copied.
#[derive(Debug, Clone, Serialize)]
pub struct TableCopy {
    /// The table's name (the same on both sides).
    pub table: String,
    /// Rows copied, equal on both sides after verification.
    pub rows: u64,
    /// The checksum both sides agreed on.
    pub checksum: String,
}

/// What `orch db copy` did.
#[derive(Debug, Clone, Serialize)]
pub struct CopyReport {
    /// The SQLite file copied from.
    pub source: String,
    /// `host:port/database` of the target (no credentials).
    pub target: String,
    /// The source's schema version: the target was migrated to it before
    /// the copy.
    pub schema_version: i64,
    /// Migrations the source had not applied yet, applied to the target
    /// after the copy (the source file is left as it was).
    pub migrated_after: Vec<i64>,
    /// Every table copied, in copy order (parents before children).
    pub tables: Vec<TableCopy>,
    /// Identity counters set, as `table.column` and the last id used.
    pub sequences: BTreeMap<String, i64>,
    /// Wall time of the whole copy and its verification, in milliseconds.
    pub millis: u64,
}

/// A column both databases have, and how its values travel.
struct Column {
    name: String,
    kind: Kind,
    /// The PostgreSQL type, for the cast (`format_type`).
    pg_type: String,
    /// A counter column (identity or serial).
    counter: bool,
}

/// One table to copy.
struct Table {
    name: String,
    columns: Vec<Column>,
    identity: bool,
}

/// Copies the SQLite database `from` into the empty PostgreSQL database
/// `to`. Nothing is written to `to` unless every table copied and verified.
pub async fn copy(from: &str, to: &str) -> Result<CopyReport> {
    let started = Instant::now();
    let source_path = match sqlite_path(from) {
        Some(path) if !is_postgres(from) => path,
        _ => {
            return Err(OfflineError::Invalid(format!(
                "--from must be a sqlite:// URL (the embedded database), not {}",
                redact(from)
            )));
        }
    };
    if !is_postgres(to) {
        return Err(OfflineError::Invalid(
            "--to must be a postgres:// URL (an empty database)".into(),
        ));
    }
    let target = PgConnectOptions::from_str(to)
        .map(|o| {
            format!(
                "{}:{}/{}",
                o.get_host(),
                o.get_port(),
                o.get_database().unwrap_or("")
            )
        })
        .map_err(|e| OfflineError::Invalid(format!("invalid PostgreSQL URL: {e}")))?;
    let _lock = lock_exclusive(&source_path)?;
    let mut sqlite = open_sqlite(&source_path).await?;
    let schema = SchemaStatus::sqlite(&mut sqlite).await?;
    schema.require_known()?;
    let mut pg = PgConnection::connect(to)
        .await
        .context(|| format!("cannot connect to {target}"))?;
    prepare_target(&mut pg, &target, &schema).await?;
    let tables = plan(&mut sqlite, &mut pg).await?;
    let mut tx = pg.begin().await.context(|| "cannot begin".into())?;
    let mut copied = Vec::new();
    for table in &tables {
        let sent = copy_table(&mut sqlite, &mut tx, table).await?;
        let read = read_back(&mut tx, table).await?;
        if sent != read {
            return Err(OfflineError::Failed(format!(
                "table {}: {} rows with checksum {} sent, {} rows with checksum {} read back; \
                 nothing was committed",
                table.name,
                sent.rows,
                sent.hex(),
                read.rows,
                read.hex()
            )));
        }
        copied.push(TableCopy {
            table: table.name.clone(),
            rows: sent.rows,
            checksum: sent.hex(),
        });
    }
    let sequences = advance_counters(&mut sqlite, &mut tx, &tables).await?;
    tx.commit().await.context(|| "cannot commit".into())?;
    let migrated_after = schema.pending.clone();
    if !migrated_after.is_empty() {
        POSTGRES_MIGRATIONS.run(&mut pg).await.map_err(|e| {
            OfflineError::Failed(format!(
                "the tables were copied into {target} at migration {}, but the migrations \
                 after it failed there: {e} (orch serve applies them at start, or copy into \
                 a new database)",
                schema.version
            ))
        })?;
    }
    sqlx::raw_sql("ANALYZE")
        .execute(&mut pg)
        .await
        .context(|| "cannot analyze the copied tables".into())?;
    let _ = pg.close().await;
    let _ = sqlite.close().await;
    Ok(CopyReport {
        source: source_path.display().to_string(),
        target,
        schema_version: schema.version,
        migrated_after,
        tables: copied,
        sequences,
        millis: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    })
}

/// Migrates the target to the source's schema version (`source.version`),
/// after making sure it holds nothing: no tables but orch's, and none of
/// those with a row. A source with pending migrations is copied as it is,
/// and the target gets the rest afterwards ([`copy`]): the copy never
/// writes to the source, so it works on a backup or a read-only file too.
async fn prepare_target(pg: &mut PgConnection, target: &str, source: &SchemaStatus) -> Result<()> {
    let existing = pg_tables(pg).await?;
    let status = SchemaStatus::postgres(pg).await?;
    if status.is_none() && !existing.is_empty() {
        return Err(OfflineError::Refused(format!(
            "{target} is not empty: it has tables that are not orch's ({})",
            existing
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    if let Some(status) = status {
        status.require_known()?;
        if status.version > source.version {
            return Err(OfflineError::Refused(format!(
                "{target} is at migration {}, past the source's {}: copy into a new database",
                status.version, source.version
            )));
        }
    }
    POSTGRES_MIGRATIONS
        .run_to(source.version, &mut *pg)
        .await
        .map_err(|e| OfflineError::Failed(format!("cannot migrate {target}: {e}")))?;
    for table in pg_tables(pg).await? {
        let sql = format!("SELECT EXISTS (SELECT 1 FROM {})", quote(&table));
        let (any,): (bool,) = sqlx::query_as(AssertSqlSafe(sql))
            .fetch_one(&mut *pg)
            .await
            .context(|| format!("cannot read {table}"))?;
        if any {
            return Err(OfflineError::Refused(format!(
                "{target} is not empty (table {table} has rows): copy into a new database"
            )));
        }
    }
    Ok(())
}

/// orch's tables of the current PostgreSQL schema.
async fn pg_tables(pg: &mut PgConnection) -> Result<BTreeSet<String>> {
    let rows: Vec<(String,)> = sqlx::query_as(
        "SELECT table_name::text FROM information_schema.tables \
         WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' \
         AND table_name <> '_sqlx_migrations'",
    )
    .fetch_all(&mut *pg)
    .await
    .context(|| "cannot list the target's tables".into())?;
    Ok(rows.into_iter().map(|r| r.0).collect())
}

/// The tables to copy, parents first, with their common columns.
async fn plan(sqlite: &mut SqliteConnection, pg: &mut PgConnection) -> Result<Vec<Table>> {
    let rows: Vec<(String,)> = sqlx::query_as(
        "SELECT name FROM sqlite_master WHERE type = 'table' \
         AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name <> '_sqlx_migrations'",
    )
    .fetch_all(&mut *sqlite)
    .await
    .context(|| "cannot list the source's tables".into())?;
    let source: BTreeSet<String> = rows.into_iter().map(|r| r.0).collect();
    let target = pg_tables(pg).await?;
    if source != target {
        let only = |a: &BTreeSet<String>, b: &BTreeSet<String>| {
            a.difference(b).cloned().collect::<Vec<_>>().join(", ")
        };
        return Err(OfflineError::Failed(format!(
            "the two schemas have different tables (only in SQLite: [{}]; only in \
             PostgreSQL: [{}])",
            only(&source, &target),
            only(&target, &source)
        )));
    }
    let mut tables = Vec::new();
    for name in order_by_references(pg, &source).await? {
        tables.push(table_plan(sqlite, pg, name).await?);
    }
    Ok(tables)
}

/// The columns of one table on both sides.
async fn table_plan(
    sqlite: &mut SqliteConnection,
    pg: &mut PgConnection,
    name: String,
) -> Result<Table> {
    let lite: Vec<(String,)> = sqlx::query_as("SELECT name FROM pragma_table_xinfo($1)")
        .bind(&name)
        .fetch_all(&mut *sqlite)
        .await
        .context(|| format!("cannot read the columns of {name}"))?;
    let theirs: Vec<(String, String, String, bool, bool, String, String)> = sqlx::query_as(
        "SELECT a.attname::text, t.typname::text, format_type(a.atttypid, a.atttypmod), \
                a.attnotnull, a.atthasdef, a.attidentity::text, a.attgenerated::text \
         FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid \
         WHERE a.attrelid = (SELECT c.oid FROM pg_class c WHERE c.relname = $1 \
                             AND c.relnamespace = current_schema()::regnamespace) \
           AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
    )
    .bind(&name)
    .fetch_all(&mut *pg)
    .await
    .context(|| format!("cannot read the columns of {name} in PostgreSQL"))?;
    let mut columns = Vec::new();
    let mut identity = false;
    for (column, typname, pg_type, not_null, has_default, ident, generated) in theirs {
        let in_sqlite = lite.iter().any(|(c,)| *c == column);
        if !in_sqlite || !generated.is_empty() {
            if not_null && !has_default && ident.is_empty() && generated.is_empty() {
                return Err(OfflineError::Failed(format!(
                    "{name}.{column} is required in PostgreSQL but SQLite has no such column"
                )));
            }
            continue;
        }
        let kind = Kind::of(&typname).ok_or_else(|| {
            OfflineError::Failed(format!(
                "{name}.{column}: copy does not know how to carry PostgreSQL type {pg_type}"
            ))
        })?;
        identity |= !ident.is_empty();
        columns.push(Column {
            counter: !ident.is_empty(),
            name: column,
            kind,
            pg_type,
        });
    }
    if let Some((missing,)) = lite
        .iter()
        .find(|(c,)| !columns.iter().any(|k| k.name == *c))
    {
        return Err(OfflineError::Failed(format!(
            "{name}.{missing} exists in SQLite but not in PostgreSQL: its values would be lost"
        )));
    }
    Ok(Table {
        name,
        columns,
        identity,
    })
}

/// `tables` ordered so every table comes after the tables it references.
async fn order_by_references(
    pg: &mut PgConnection,
    tables: &BTreeSet<String>,
) -> Result<Vec<String>> {
    let edges: Vec<(String, String)> = sqlx::query_as(
        "SELECT (SELECT relname::text FROM pg_class WHERE oid = c.conrelid), \
                (SELECT relname::text FROM pg_class WHERE oid = c.confrelid) \
         FROM pg_constraint c \
         WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace",
    )
    .fetch_all(&mut *pg)
    .await
    .context(|| "cannot read the foreign keys".into())?;
    let mut waiting: BTreeMap<&str, BTreeSet<&str>> = tables
        .iter()
        .map(|t| (t.as_str(), BTreeSet::new()))
        .collect();
    for (child, parent) in &edges {
        if child == parent {
            return Err(OfflineError::Failed(format!(
                "table {child} references itself: copy cannot order its rows"
            )));
        }
        if let Some(parents) = waiting.get_mut(child.as_str()) {
            parents.insert(parent.as_str());
        }
    }
    let mut ordered: Vec<String> = Vec::new();
    while !waiting.is_empty() {
        let ready: Vec<&str> = waiting
            .iter()
            .filter(|(_, parents)| parents.iter().all(|p| !waiting.contains_key(p)))
            .map(|(t, _)| *t)
            .collect();
        if ready.is_empty() {
            return Err(OfflineError::Failed(format!(
                "the foreign keys between {} form a cycle: copy cannot order them",
                waiting.keys().copied().collect::<Vec<_>>().join(", ")
            )));
        }
        for table in ready {
            waiting.remove(table);
            ordered.push(table.to_owned());
        }
    }
    Ok(ordered)
}

/// Streams one table from SQLite into PostgreSQL in batches; returns the
/// checksum of what was sent.
async fn copy_table(
    sqlite: &mut SqliteConnection,
    pg: &mut PgConnection,
    table: &Table,
) -> Result<Checksum> {
    let names: Vec<String> = table.columns.iter().map(|c| quote(&c.name)).collect();
    let select = format!("SELECT {} FROM {}", names.join(", "), quote(&table.name));
    let mut rows = sqlx::query(AssertSqlSafe(select)).fetch(&mut *sqlite);
    let mut checksum = Checksum::default();
    let mut batch: Vec<Vec<Value>> = vec![Vec::new(); table.columns.len()];
    let (mut count, mut bytes) = (0usize, 0usize);
    while let Some(row) = rows
        .try_next()
        .await
        .context(|| format!("cannot read {}", table.name))?
    {
        let mut canonical = Vec::with_capacity(table.columns.len());
        for (i, column) in table.columns.iter().enumerate() {
            let value = values::from_sqlite(&row, i, column.kind).map_err(|e| {
                OfflineError::Failed(format!("{}.{}: {e}", table.name, column.name))
            })?;
            canonical.push(values::canonical(column.kind, &value));
            bytes += value.size();
            batch[i].push(value);
        }
        checksum.add(&canonical);
        count += 1;
        if count >= BATCH_ROWS || bytes >= BATCH_BYTES {
            insert(pg, table, &mut batch).await?;
            (count, bytes) = (0, 0);
        }
    }
    if count > 0 {
        insert(pg, table, &mut batch).await?;
    }
    Ok(checksum)
}

/// One INSERT of the rows in `batch` (column-wise), which it empties.
async fn insert(pg: &mut PgConnection, table: &Table, batch: &mut [Vec<Value>]) -> Result<()> {
    let mut arrays = Vec::new();
    let mut casts = Vec::new();
    for (i, column) in table.columns.iter().enumerate() {
        let array = if column.kind == Kind::Bytes {
            "bytea[]"
        } else {
            "text[]"
        };
        arrays.push(format!("${}::{array}", i + 1));
        casts.push(format!("u.c{i}::{}", column.pg_type));
    }
    let aliases: Vec<String> = (0..table.columns.len()).map(|i| format!("c{i}")).collect();
    let names: Vec<String> = table.columns.iter().map(|c| quote(&c.name)).collect();
    let sql = format!(
        "INSERT INTO {} ({}) {} SELECT {} FROM UNNEST({}) AS u({})",
        quote(&table.name),
        names.join(", "),
        if table.identity {
            "OVERRIDING SYSTEM VALUE"
        } else {
            ""
        },
        casts.join(", "),
        arrays.join(", "),
        aliases.join(", ")
    );
    let mut query = sqlx::query(AssertSqlSafe(sql));
    for (column, values) in table.columns.iter().zip(batch.iter_mut()) {
        let values = std::mem::take(values);
        if column.kind == Kind::Bytes {
            let bytes: Vec<Option<Vec<u8>>> = values
                .into_iter()
                .map(|v| match v {
                    Value::Bytes(b) => Some(b),
                    Value::Text(s) => Some(s.into_bytes()),
                    Value::Null => None,
                })
                .collect();
            query = query.bind(bytes);
        } else {
            let texts: Vec<Option<String>> = values
                .into_iter()
                .map(|v| match v {
                    Value::Text(s) => Some(s),
                    Value::Bytes(b) => Some(String::from_utf8_lossy(&b).into_owned()),
                    Value::Null => None,
                })
                .collect();
            query = query.bind(texts);
        }
    }
    query
        .execute(&mut *pg)
        .await
        .context(|| format!("cannot write into {}", table.name))?;
    Ok(())
}

/// The checksum of a table as PostgreSQL now holds it.
async fn read_back(pg: &mut PgConnection, table: &Table) -> Result<Checksum> {
    let exprs: Vec<String> = table
        .columns
        .iter()
        .map(|c| c.kind.read_back(&quote(&c.name)))
        .collect();
    let sql = format!("SELECT {} FROM {}", exprs.join(", "), quote(&table.name));
    let mut rows = sqlx::query(AssertSqlSafe(sql)).fetch(&mut *pg);
    let mut checksum = Checksum::default();
    while let Some(row) = rows
        .try_next()
        .await
        .context(|| format!("cannot read back {}", table.name))?
    {
        let mut values = Vec::with_capacity(table.columns.len());
        for (i, column) in table.columns.iter().enumerate() {
            values.push(
                values::from_postgres(&row, i, column.kind)
                    .context(|| format!("cannot read back {}.{}", table.name, column.name))?,
            );
        }
        checksum.add(&values);
    }
    Ok(checksum)
}

/// Sets each identity counter past the highest id the table has, or ever
/// had in SQLite.
async fn advance_counters(
    sqlite: &mut SqliteConnection,
    pg: &mut PgConnection,
    tables: &[Table],
) -> Result<BTreeMap<String, i64>> {
    let mut set = BTreeMap::new();
    for table in tables {
        for column in table.columns.iter().filter(|c| c.counter) {
            // A database with no AUTOINCREMENT table has no sqlite_sequence.
            let used: Option<(i64,)> =
                sqlx::query_as("SELECT seq FROM sqlite_sequence WHERE name = $1")
                    .bind(&table.name)
                    .fetch_optional(&mut *sqlite)
                    .await
                    .unwrap_or(None);
            let sql = format!(
                "SELECT COALESCE(MAX({})::int8, 0) FROM {}",
                quote(&column.name),
                quote(&table.name)
            );
            let (max,): (i64,) = sqlx::query_as(AssertSqlSafe(sql))
                .fetch_one(&mut *pg)
                .await
                .context(|| format!("cannot read the last id of {}", table.name))?;
            let last = max.max(used.map_or(0, |u| u.0));
            if last > 0 {
                sqlx::query("SELECT setval(pg_get_serial_sequence($1, $2), $3)")
                    .bind(quote(&table.name))
                    .bind(&column.name)
                    .bind(last)
                    .execute(&mut *pg)
                    .await
                    .context(|| format!("cannot set the counter of {}", table.name))?;
            }
            set.insert(format!("{}.{}", table.name, column.name), last);
        }
    }
    Ok(set)
}

/// An identifier, quoted for SQL (both dialects).
pub(super) fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A URL without its password.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}***{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}
