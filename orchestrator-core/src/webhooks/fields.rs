//! Checking a webhook's fields, and its secrets at rest (sealed with the
//! deployment's key, bound to the webhook).

use crate::error::{Error, Result};
use crate::secrets::Secrets;
use uuid::Uuid;

/// Most event types one webhook lists.
const MAX_EVENT_TYPES: usize = 100;
/// Longest URL accepted.
const MAX_URL_CHARS: usize = 2048;
/// Longest description accepted.
const MAX_DESCRIPTION_CHARS: usize = 1000;

/// A parsed `http(s)` URL, or 400 naming `url`.
pub(crate) fn url(text: &str) -> Result<reqwest::Url> {
    let text = text.trim();
    if text.is_empty() || text.chars().count() > MAX_URL_CHARS {
        return Err(Error::invalid_field(
            "url",
            format!("must be 1 to {MAX_URL_CHARS} characters"),
        ));
    }
    let parsed = reqwest::Url::parse(text)
        .map_err(|e| Error::invalid_field("url", format!("is not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(Error::invalid_field("url", "must be an http or https URL"));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(Error::invalid_field("url", "names no host"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(Error::invalid_field(
            "url",
            "must not carry credentials (receivers verify the signature)",
        ));
    }
    Ok(parsed)
}

/// `event_types`, trimmed and without repeats: each an exact type
/// (`task.failed`) or a prefix ending in `.*` (`task.*`).
pub(crate) fn event_types(types: &[String]) -> Result<Vec<String>> {
    if types.is_empty() || types.len() > MAX_EVENT_TYPES {
        return Err(Error::invalid_field(
            "event_types",
            format!("must list 1 to {MAX_EVENT_TYPES} event types"),
        ));
    }
    let mut out: Vec<String> = Vec::with_capacity(types.len());
    for raw in types {
        let t = raw.trim();
        let body = t.strip_suffix(".*").unwrap_or(t);
        let ok = !body.is_empty()
            && body.len() <= 200
            && body.split('.').all(|part| {
                !part.is_empty()
                    && part
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            });
        if !ok {
            return Err(Error::invalid_field(
                "event_types",
                format!(
                    "`{raw}` is neither an event type (`task.failed`) nor a prefix ending in `.*` (`task.*`)"
                ),
            ));
        }
        if !out.iter().any(|o| o == t) {
            out.push(t.to_owned());
        }
    }
    Ok(out)
}

/// A description, trimmed (`None` when empty).
pub(crate) fn description(text: Option<&str>) -> Result<Option<String>> {
    let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    if text.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(Error::invalid_field(
            "description",
            format!("must be at most {MAX_DESCRIPTION_CHARS} characters"),
        ));
    }
    Ok(Some(text.to_owned()))
}

fn context(webhook_id: Uuid) -> String {
    format!("webhook-secret:{webhook_id}")
}

/// `secret` sealed for storage.
pub(crate) fn seal(secrets: &Secrets, webhook_id: Uuid, secret: &str) -> String {
    secrets.encrypt(secret.as_bytes(), context(webhook_id).as_bytes())
}

/// A stored secret in clear, to sign with.
pub(crate) fn open(secrets: &Secrets, webhook_id: Uuid, sealed: &str) -> Result<String> {
    let bytes = secrets.decrypt(sealed, context(webhook_id).as_bytes())?;
    String::from_utf8(bytes).map_err(Error::internal)
}
