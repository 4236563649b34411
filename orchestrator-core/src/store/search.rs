//! Substring search in list filters: the `LIKE` pattern and its length
//! bound.

use crate::error::{Error, Result};

/// The longest search string a list filter takes, in characters. Longer ones
/// are refused (400) rather than handed to `LIKE` (SQLite refuses patterns
/// past 50,000 bytes, and no one searches by a page of text).
pub const MAX_SEARCH_CHARS: usize = 512;

/// The `LIKE` pattern of a "contains" search for `text` (trimmed; `None`
/// when empty), with `\`, `%` and `_` escaped so the search is a literal
/// substring: use it as `column LIKE $n ESCAPE '\'` (lowercase the pattern
/// for `LOWER(column)`). Text longer than [`MAX_SEARCH_CHARS`] is a 400
/// naming `field`.
pub(crate) fn contains_pattern(field: &str, text: Option<&str>) -> Result<Option<String>> {
    let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    if text.chars().count() > MAX_SEARCH_CHARS {
        return Err(Error::invalid_field(
            field,
            format!("must be at most {MAX_SEARCH_CHARS} characters"),
        ));
    }
    let escaped = text
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    Ok(Some(format!("%{escaped}%")))
}
