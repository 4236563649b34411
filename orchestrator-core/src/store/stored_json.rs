//! A JSON column that always reads.
//!
//! Requests are refused when they nest deeper than
//! [`crate::api::MAX_JSON_DEPTH`], but a row may hold something older or
//! written another way, and `serde_json`'s recursion limit would turn it into
//! an error for every page or export that includes the row. [`StoredJson`]
//! reads the column as raw text first (which has no depth limit) and parses
//! it into a tree only then: a value that cannot be parsed reads as a marker
//! object saying so, and the rest of the page reads as usual.

use serde_json::value::RawValue;
use serde_json::{Value, json};
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::types::Json;
use sqlx::{Database, Decode, Encode, Type};

/// A stored JSON document (a `jsonb` column on PostgreSQL, JSON text on
/// SQLite), written like `Json<Value>` and read without ever failing on
/// depth.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredJson(pub Value);

/// The key of the marker object that stands in for a value which could not
/// be read back.
pub const UNREADABLE_KEY: &str = "orch_unreadable";

impl StoredJson {
    /// The value parsed from stored text, or the marker.
    fn from_text(text: &str) -> Self {
        Self(serde_json::from_str(text).unwrap_or_else(
            |e| json!({ UNREADABLE_KEY: format!("the stored value could not be read back: {e}") }),
        ))
    }
}

impl<DB: Database> Type<DB> for StoredJson
where
    Json<Value>: Type<DB>,
{
    fn type_info() -> DB::TypeInfo {
        <Json<Value> as Type<DB>>::type_info()
    }

    fn compatible(ty: &DB::TypeInfo) -> bool {
        <Json<Value> as Type<DB>>::compatible(ty)
    }
}

impl<'q, DB: Database> Encode<'q, DB> for StoredJson
where
    for<'a> Json<&'a Value>: Encode<'q, DB>,
{
    fn encode_by_ref(
        &self,
        buf: &mut <DB as Database>::ArgumentBuffer,
    ) -> Result<IsNull, BoxDynError> {
        <Json<&Value> as Encode<'q, DB>>::encode(Json(&self.0), buf)
    }
}

impl<'r, DB: Database> Decode<'r, DB> for StoredJson
where
    Json<Box<RawValue>>: Decode<'r, DB>,
{
    fn decode(value: <DB as Database>::ValueRef<'r>) -> Result<Self, BoxDynError> {
        let raw = <Json<Box<RawValue>> as Decode<'r, DB>>::decode(value)?;
        Ok(Self::from_text(raw.0.get()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_too_deep_value_reads_as_the_marker() {
        let deep = format!("{}{}", "[".repeat(500), "]".repeat(500));
        let read = StoredJson::from_text(&deep);
        assert!(read.0[UNREADABLE_KEY].is_string(), "{read:?}");
        assert_eq!(StoredJson::from_text(r#"{"a":[1]}"#).0, json!({"a": [1]}));
    }
}
