//! How a SQLite value becomes a PostgreSQL one in `orch db copy`, and the
//! per-table checksum both sides are compared by.
//!
//! The two schemas store the same things differently (the SQLite
//! migrations' header says how): UUIDs are 16-byte BLOBs in SQLite and
//! `uuid` in PostgreSQL, timestamps RFC 3339 TEXT and `timestamptz`,
//! booleans INTEGER 0/1 and `boolean`, JSON TEXT and `jsonb`, bytes BLOB and
//! `bytea`. The PostgreSQL column type decides ([`Kind`]): every value is
//! sent as text in that type's input syntax (bytes as bytes) and cast on the
//! PostgreSQL side.
//!
//! The checksum hashes each row's values in one canonical form, computed
//! from what was read on the SQLite side and again from what PostgreSQL
//! returns after the copy: UUIDs hyphenated, timestamps RFC 3339 in UTC to
//! the microsecond (PostgreSQL's precision; finer digits are dropped by the
//! copy), JSON re-serialized with sorted keys (`jsonb` reorders keys and
//! drops insignificant spaces), floats in Rust's shortest round-trip form.
//! Row hashes are added up, so the table's checksum does not depend on the
//! order rows are read in.

use chrono::{DateTime, SecondsFormat, Timelike, Utc};
use sha2::{Digest, Sha256};
use sqlx::postgres::PgRow;
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, TypeInfo, ValueRef};
use uuid::Uuid;

/// How a column's values are carried, by its PostgreSQL type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Uuid,
    Timestamp,
    Bool,
    Int,
    Float,
    Json,
    Text,
    Bytes,
}

impl Kind {
    /// The kind of a PostgreSQL type (`pg_type.typname`); `None` for a type
    /// the copy does not know how to carry.
    pub(super) fn of(typname: &str) -> Option<Self> {
        Some(match typname {
            "uuid" => Self::Uuid,
            "timestamptz" => Self::Timestamp,
            "bool" => Self::Bool,
            "int2" | "int4" | "int8" => Self::Int,
            "float4" | "float8" => Self::Float,
            "json" | "jsonb" => Self::Json,
            "text" | "varchar" | "bpchar" => Self::Text,
            "bytea" => Self::Bytes,
            _ => return None,
        })
    }

    /// The expression that reads the column back for the checksum.
    pub(super) fn read_back(self, column: &str) -> String {
        match self {
            Self::Int => format!("{column}::int8"),
            Self::Float => format!("{column}::float8"),
            Self::Json | Self::Text => format!("{column}::text"),
            Self::Uuid | Self::Timestamp | Self::Bool | Self::Bytes => column.to_owned(),
        }
    }
}

/// One value on its way to PostgreSQL.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    Null,
    Text(String),
    Bytes(Vec<u8>),
}

impl Value {
    /// Bytes it takes in a batch (for the batch size bound).
    pub(super) fn size(&self) -> usize {
        match self {
            Self::Null => 1,
            Self::Text(s) => s.len() + 1,
            Self::Bytes(b) => b.len() + 1,
        }
    }
}

/// Column `i` of a SQLite row as `kind`.
pub(super) fn from_sqlite(row: &SqliteRow, i: usize, kind: Kind) -> Result<Value, String> {
    let raw = row.try_get_raw(i).map_err(|e| e.to_string())?;
    if raw.is_null() {
        return Ok(Value::Null);
    }
    let stored = raw.type_info().name().to_owned();
    let text = |v: String| Ok(Value::Text(v));
    let err = |e: sqlx::Error| e.to_string();
    match kind {
        Kind::Uuid => {
            let id = if stored == "TEXT" {
                let s: String = row.try_get_unchecked(i).map_err(err)?;
                Uuid::parse_str(&s).map_err(|e| format!("not a UUID ({e}): {s}"))?
            } else {
                let b: Vec<u8> = row.try_get_unchecked(i).map_err(err)?;
                Uuid::from_slice(&b).map_err(|e| format!("not a UUID: {e}"))?
            };
            text(id.hyphenated().to_string())
        }
        Kind::Timestamp => {
            let at: DateTime<Utc> = row.try_get(i).map_err(err)?;
            text(timestamp(at))
        }
        Kind::Bool => {
            let b: i64 = row.try_get_unchecked(i).map_err(err)?;
            text((b != 0).to_string())
        }
        Kind::Int => {
            let n: i64 = row.try_get_unchecked(i).map_err(err)?;
            text(n.to_string())
        }
        Kind::Float => {
            let f: f64 = row.try_get_unchecked(i).map_err(err)?;
            text(f.to_string())
        }
        Kind::Json | Kind::Text => text(row.try_get_unchecked(i).map_err(err)?),
        Kind::Bytes => Ok(Value::Bytes(row.try_get_unchecked(i).map_err(err)?)),
    }
}

/// Column `i` of a PostgreSQL row read with [`Kind::read_back`], in the
/// canonical form.
pub(super) fn from_postgres(row: &PgRow, i: usize, kind: Kind) -> Result<Value, sqlx::Error> {
    let text = |v: Option<String>| v.map_or(Value::Null, Value::Text);
    Ok(match kind {
        Kind::Uuid => text(
            row.try_get::<Option<Uuid>, _>(i)?
                .map(|u| u.hyphenated().to_string()),
        ),
        Kind::Timestamp => text(row.try_get::<Option<DateTime<Utc>>, _>(i)?.map(timestamp)),
        Kind::Bool => text(row.try_get::<Option<bool>, _>(i)?.map(|b| b.to_string())),
        Kind::Int => text(row.try_get::<Option<i64>, _>(i)?.map(|n| n.to_string())),
        Kind::Float => text(row.try_get::<Option<f64>, _>(i)?.map(|f| f.to_string())),
        Kind::Json => text(row.try_get::<Option<String>, _>(i)?.map(|j| json(&j))),
        Kind::Text => text(row.try_get::<Option<String>, _>(i)?),
        Kind::Bytes => row
            .try_get::<Option<Vec<u8>>, _>(i)?
            .map_or(Value::Null, Value::Bytes),
    })
}

/// The canonical form of a value read from SQLite (only JSON changes).
pub(super) fn canonical(kind: Kind, value: &Value) -> Value {
    match (kind, value) {
        (Kind::Json, Value::Text(j)) => Value::Text(json(j)),
        _ => value.clone(),
    }
}

/// RFC 3339 in UTC to the microsecond.
fn timestamp(at: DateTime<Utc>) -> String {
    let micros = at.nanosecond() / 1_000 * 1_000;
    at.with_nanosecond(micros)
        .unwrap_or(at)
        .to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// JSON with sorted keys and no spaces. A document too deep for the parser
/// hashes as a marker on both sides (its rows are still counted).
fn json(text: &str) -> String {
    serde_json::from_str::<serde_json::Value>(text)
        .map_or_else(|_| "\u{1}unparsed json".to_owned(), |v| v.to_string())
}

/// The order-independent checksum of a table: the sum of its rows' hashes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Checksum {
    pub rows: u64,
    sum: u128,
}

impl Checksum {
    /// Adds one row (its values in canonical form).
    pub(super) fn add(&mut self, row: &[Value]) {
        let mut hash = Sha256::new();
        for value in row {
            let (tag, bytes): (u8, &[u8]) = match value {
                Value::Null => (0, &[]),
                Value::Text(s) => (1, s.as_bytes()),
                Value::Bytes(b) => (2, b),
            };
            hash.update([tag]);
            hash.update((bytes.len() as u64).to_le_bytes());
            hash.update(bytes);
        }
        let digest = hash.finalize();
        let mut first = [0u8; 16];
        first.copy_from_slice(&digest[..16]);
        self.sum = self.sum.wrapping_add(u128::from_le_bytes(first));
        self.rows += 1;
    }

    pub(super) fn hex(&self) -> String {
        format!("{:032x}", self.sum)
    }
}
