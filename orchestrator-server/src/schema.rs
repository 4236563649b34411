//! Strict JSON bodies with field-level errors.
//!
//! A body that does not match its type is answered with 422
//! `SCHEMA_VALIDATION_FAILED` naming every field at fault, not only the first
//! one serde stops at. The fast path is one plain `serde_json` parse; only a
//! body that fails it is examined further: each failing field is recorded and
//! neutralised (unknown fields removed, bad or missing ones replaced by
//! placeholders) and the parse repeated, a bounded number of times.

use orchestrator_core::Error;
use orchestrator_core::api::Issues;
use orchestrator_core::api::depth::{MAX_JSON_DEPTH, too_deep};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use serde_path_to_error::Segment;
use std::collections::{BTreeSet, HashMap};

/// Re-parses allowed while collecting errors.
const MAX_PASSES: usize = 64;

/// Parses `bytes` as `T`. An empty body counts as `{}`.
///
/// Every body is a JSON object: serde would otherwise map an array onto a
/// struct's fields by position. No string may hold the NUL character
/// (`\u0000`): PostgreSQL cannot store it in `text` or `jsonb`, so it is
/// refused here for both backends alike, naming the field.
pub(crate) fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Error> {
    let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        bytes
    };
    refuse_deep(bytes)?;
    let is_object = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    let may_hold_nul = may_hold_nul(bytes);
    if is_object
        && !may_hold_nul
        && let Ok(value) = serde_json::from_slice::<T>(bytes)
    {
        return Ok(value);
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        Error::schema(
            "request body is not valid JSON",
            Issues::form(format!("malformed JSON: {e}")),
        )
    })?;
    let Value::Object(object) = value else {
        return Err(Error::schema(
            "request body must be a JSON object",
            Issues::form("expected a JSON object"),
        ));
    };
    if let Some(path) = nul_path(&object, "") {
        return Err(Error::schema(
            "request body holds a NUL character",
            Issues::field(&path, NUL_MESSAGE),
        ));
    }
    if may_hold_nul && let Ok(value) = serde_json::from_slice::<T>(bytes) {
        return Ok(value);
    }
    Err(Error::schema(
        "request body does not match the schema",
        collect_issues::<T>(object),
    ))
}

/// Refuses JSON text nested deeper than stored JSON may be
/// ([`MAX_JSON_DEPTH`]), naming the field, so that whatever is stored reads
/// back (a payload the body keeps as raw text is not parsed, so the parser's
/// own limit would not catch it).
pub(crate) fn refuse_deep(bytes: &[u8]) -> Result<(), Error> {
    match too_deep(bytes, MAX_JSON_DEPTH) {
        None => Ok(()),
        Some(field) => Err(Error::schema_field(
            &field,
            format!(
                "nests deeper than {MAX_JSON_DEPTH} levels of objects and arrays (counting the request body)"
            ),
        )),
    }
}

/// The field error of a string holding NUL.
pub(crate) const NUL_MESSAGE: &str = "must not contain the NUL character (\\u0000)";

/// Whether the JSON text may encode a NUL character: JSON can only spell it
/// as the escape `\u0000` (a raw control character is malformed), so a body
/// without that escape needs no further look. A false positive (an escaped
/// backslash followed by `u0000`) only costs the slow path.
fn may_hold_nul(bytes: &[u8]) -> bool {
    bytes.windows(6).any(|w| w == b"\\u0000")
}

/// The path of the first key or string holding NUL, if any.
fn nul_path(object: &Map<String, Value>, prefix: &str) -> Option<String> {
    object.iter().find_map(|(key, value)| {
        let path = join(&[prefix.to_owned()], Some(key));
        let path = path.trim_start_matches('.').replace('\0', "\\u0000");
        if key.contains('\0') {
            return Some(path);
        }
        nul_in(value, &path)
    })
}

fn nul_in(value: &Value, path: &str) -> Option<String> {
    match value {
        Value::String(s) if s.contains('\0') => Some(path.to_owned()),
        Value::Object(map) => nul_path(map, path),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| nul_in(item, &format!("{path}[{i}]"))),
        _ => None,
    }
}

fn placeholder(attempt: usize) -> Option<Value> {
    Some(match attempt {
        0 => Value::String(String::new()),
        1 => Value::from(0),
        2 => Value::Bool(false),
        3 => Value::Object(Map::new()),
        4 => Value::Array(Vec::new()),
        5 => Value::Null,
        _ => return None,
    })
}

fn collect_issues<T: DeserializeOwned>(mut object: Map<String, Value>) -> Issues {
    let mut issues = Issues::default();
    let mut reported: BTreeSet<String> = BTreeSet::new();
    let mut attempts: HashMap<String, usize> = HashMap::new();
    for _ in 0..MAX_PASSES {
        let error = match serde_path_to_error::deserialize::<_, T>(&Value::Object(object.clone())) {
            Ok(_) => break,
            Err(error) => error,
        };
        let message = error.inner().to_string();
        let mut segments: Vec<String> = error.path().iter().map(segment_name).collect();
        // Errors about a missing or unknown field name the field in the
        // message; the path is its container (or, for an unknown field, may
        // already end with it).
        let named = backticked(&message);
        if named.is_some() && segments.last().map(String::as_str) == named {
            segments.pop();
        }
        let (kind, full_path) =
            if let Some(field) = named.filter(|_| message.starts_with("missing field")) {
                (Kind::Missing, join(&segments, Some(field)))
            } else if let Some(field) = named.filter(|_| message.starts_with("unknown field")) {
                (Kind::Unknown, join(&segments, Some(field)))
            } else {
                (Kind::Invalid, join(&segments, None))
            };
        let top = full_path
            .split(['.', '['])
            .next()
            .unwrap_or_default()
            .to_owned();
        if top.is_empty() {
            issues.form_errors.push(message);
            break;
        }
        if kind == Kind::Unknown && segments.is_empty() {
            issues.add_field(top.clone(), "Unrecognized field");
            object.remove(&top);
            continue;
        }
        if reported.insert(top.clone()) {
            let text = match kind {
                Kind::Missing => "Required".to_owned(),
                Kind::Unknown => "Unrecognized field".to_owned(),
                Kind::Invalid => humanize(&message),
            };
            issues.add_field(full_path, text);
        }
        // An enum is satisfied by one of the variants its message lists.
        if segments.len() <= 1
            && let Some(variant) = expected_variant(&message)
            && object.get(&top) != Some(&Value::String(variant.to_owned()))
        {
            object.insert(top, Value::String(variant.to_owned()));
            continue;
        }
        let attempt = attempts.entry(top.clone()).or_default();
        match placeholder(*attempt) {
            Some(value) => {
                *attempt += 1;
                object.insert(top, value);
            }
            None => break,
        }
    }
    if issues.is_empty() {
        issues
            .form_errors
            .push("request body does not match the schema".into());
    }
    issues
}

#[derive(PartialEq, Eq)]
enum Kind {
    Missing,
    Unknown,
    Invalid,
}

fn segment_name(segment: &Segment) -> String {
    match segment {
        Segment::Seq { index } => format!("[{index}]"),
        Segment::Map { key } => key.clone(),
        Segment::Enum { variant } => variant.clone(),
        Segment::Unknown => "?".into(),
    }
}

fn join(segments: &[String], last: Option<&str>) -> String {
    let mut path = String::new();
    for part in segments.iter().map(String::as_str).chain(last) {
        if !path.is_empty() && !part.starts_with('[') {
            path.push('.');
        }
        path.push_str(part);
    }
    path
}

/// The first `` `name` `` in a serde message.
fn backticked(message: &str) -> Option<&str> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(&message[start..start + len])
}

/// The first variant of "unknown variant `x`, expected one of `a`, `b`" or
/// "expected `a` or `b`".
fn expected_variant(message: &str) -> Option<&str> {
    let rest = &message[message.find("expected")?..];
    backticked(rest)
}

/// serde's messages, minus the Rust type names that mean nothing to clients.
fn humanize(message: &str) -> String {
    message
        .replace("expected u32", "expected a non-negative integer")
        .replace("expected u64", "expected a non-negative integer")
        .replace("expected i64", "expected an integer")
        .replace("expected f64", "expected a number")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Sample {
        title: String,
        kind: Kind2,
        count: Option<u32>,
        nested: Option<Nested>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Kind2 {
        Code,
        Docs,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Nested {
        size: u32,
    }

    fn issues(body: &str) -> Issues {
        match parse::<Sample>(body.as_bytes()) {
            Err(Error::Schema { issues, .. }) => issues,
            other => panic!("expected a schema error, got {other:?}"),
        }
    }

    #[test]
    fn reports_every_field_at_fault() {
        let found = issues(r#"{"kind": "poetry", "count": "three", "extra": 1}"#);
        let fields: Vec<&str> = found.field_errors.keys().map(String::as_str).collect();
        assert_eq!(fields, vec!["count", "extra", "kind", "title"]);
        assert_eq!(found.field_errors["title"], vec!["Required"]);
        assert_eq!(found.field_errors["extra"], vec!["Unrecognized field"]);
        assert!(found.field_errors["kind"][0].contains("unknown variant"));
    }

    #[test]
    fn nested_paths_and_malformed_json() {
        let found = issues(r#"{"title": "t", "kind": "code", "nested": {"size": -1}}"#);
        assert!(found.field_errors.contains_key("nested.size"), "{found:?}");
        let malformed = issues("{not json");
        assert!(malformed.field_errors.is_empty());
        assert!(malformed.form_errors[0].starts_with("malformed JSON"));
        assert_eq!(issues("[1]").form_errors, vec!["expected a JSON object"]);
    }

    #[test]
    fn arrays_and_nul_are_refused() {
        assert_eq!(
            issues(r#"["t", "code"]"#).form_errors,
            vec!["expected a JSON object"]
        );
        let found = issues(r#"{"title": "a\u0000b", "kind": "code"}"#);
        assert_eq!(found.field_errors["title"], vec![NUL_MESSAGE]);
        let found = issues(r#"{"title": "t", "kind": "code", "nested": {"x": ["", "\u0000"]}}"#);
        assert!(found.field_errors.contains_key("nested.x[1]"), "{found:?}");
        // An escaped backslash before `u0000` is no NUL.
        let ok: Sample = parse(br#"{"title": "\\u0000", "kind": "docs"}"#).unwrap();
        assert_eq!(ok.title, "\\u0000");
    }

    #[test]
    fn a_valid_body_parses() {
        let ok: Sample = parse(br#"{"title": "t", "kind": "docs"}"#).unwrap();
        assert_eq!(ok.title, "t");
    }
}
