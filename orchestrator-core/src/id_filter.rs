//! The `id_prefix` and `id_suffix` list filters: what lets a client that
//! holds only the start of an id, or the short id listings show (its last
//! hex digits), find the rows it means in one request instead of paging
//! through every row of the tenant.
//!
//! A prefix becomes a range of ids (the prefix padded with `0`s up to the
//! prefix padded with `f`s): ids are UUIDs on PostgreSQL and 16-byte blobs
//! on SQLite, both ordered byte by byte, which is the order of their hex
//! digits, so the range is a primary-key range scan on both. A suffix has
//! no such order; it is compared on the id's hex text, within the tenant.

use crate::error::{Error, Result};
use crate::store::Dialect;
use uuid::Uuid;

/// Fewest hex digits a prefix or suffix may have: shorter text matches too
/// many ids to name one.
const MIN_DIGITS: usize = 4;

/// Most hex digits: a whole id.
const MAX_DIGITS: usize = 32;

/// The validated id filters of one list request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct IdMatch {
    /// The lowest and highest id starting with the prefix.
    pub(crate) range: Option<(Uuid, Uuid)>,
    /// The lower-case hex digits the id's hex text ends with.
    pub(crate) suffix: Option<String>,
}

impl IdMatch {
    /// Both filters, each checked as its own field (422 naming it).
    pub(crate) fn parse(prefix: Option<&str>, suffix: Option<&str>) -> Result<Self> {
        Ok(Self {
            range: prefix
                .map(|p| digits("id_prefix", p).map(|d| range(&d)))
                .transpose()?,
            suffix: suffix.map(|s| digits("id_suffix", s)).transpose()?,
        })
    }

    /// The lowest id of the range (bound as a parameter; `NULL` when there
    /// is no prefix filter).
    pub(crate) fn low(&self) -> Option<Uuid> {
        self.range.map(|(low, _)| low)
    }

    /// The highest id of the range.
    pub(crate) fn high(&self) -> Option<Uuid> {
        self.range.map(|(_, high)| high)
    }

    /// The condition `column` matches: `low`, `high` and `suffix` are the
    /// placeholders (`$n`) the caller binds [`IdMatch::low`],
    /// [`IdMatch::high`] and [`IdMatch::suffix`] to. An absent filter is
    /// written as its placeholder being null rather than folded into an
    /// `OR`, so the statement with a prefix is its own prepared statement,
    /// whose plan (generic or not) can be the range scan.
    pub(crate) fn condition(
        &self,
        dialect: Dialect,
        column: &str,
        low: &str,
        high: &str,
        suffix: &str,
    ) -> String {
        let range = match self.range {
            Some(_) => format!("{column} BETWEEN {low} AND {high}"),
            None => format!("{low} IS NULL AND {high} IS NULL"),
        };
        let hex = match dialect {
            Dialect::Postgres => format!("replace(CAST({column} AS TEXT), '-', '')"),
            Dialect::Sqlite => format!("lower(hex({column}))"),
        };
        let tail = match self.suffix {
            Some(_) => format!(
                "substr({hex}, {} - length({suffix})) = {suffix}",
                MAX_DIGITS + 1
            ),
            None => format!("{suffix} IS NULL"),
        };
        format!("({range}) AND ({tail})")
    }
}

/// `text` as lower-case hex digits, or the field error saying what it must be.
fn digits(field: &str, text: &str) -> Result<String> {
    let len = text.len();
    if !(MIN_DIGITS..=MAX_DIGITS).contains(&len) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::schema_field(
            field,
            format!("must be {MIN_DIGITS} to {MAX_DIGITS} hex digits"),
        ));
    }
    Ok(text.to_ascii_lowercase())
}

/// The ids starting with the hex digits `prefix` (at most 32 of them).
fn range(prefix: &str) -> (Uuid, Uuid) {
    let pad = |fill: char| {
        let mut hex = prefix.to_owned();
        hex.extend(std::iter::repeat_n(fill, MAX_DIGITS - prefix.len()));
        Uuid::from_u128(u128::from_str_radix(&hex, 16).expect("validated hex digits"))
    };
    (pad('0'), pad('f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_is_the_range_of_ids_it_starts() {
        let m = IdMatch::parse(Some("01AB2"), None).unwrap();
        assert_eq!(
            m.low().unwrap().to_string(),
            "01ab2000-0000-0000-0000-000000000000"
        );
        assert_eq!(
            m.high().unwrap().to_string(),
            "01ab2fff-ffff-ffff-ffff-ffffffffffff"
        );
        let whole = "0196a2b31c2d7e3f8a4b5c6d7e8f9a0b";
        let m = IdMatch::parse(Some(whole), Some("9A0B")).unwrap();
        assert_eq!(m.low(), m.high());
        assert_eq!(m.suffix.as_deref(), Some("9a0b"));
    }

    #[test]
    fn short_long_or_non_hex_text_is_refused() {
        for bad in ["abc", "", "0196-a2b3", "xyz12", &"a".repeat(33)] {
            assert!(IdMatch::parse(Some(bad), None).is_err(), "{bad}");
            assert!(IdMatch::parse(None, Some(bad)).is_err(), "{bad}");
        }
    }
}
