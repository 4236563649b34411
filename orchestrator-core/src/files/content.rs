//! Uploaded content: base64 decoding with size limits, keys derived from
//! file names, name/key/content-type checks, how a type previews, and an
//! upload decoded and checked once ([`Prepared`]) for files and artifacts.

use crate::api::workspaces::{FileUpload, MAX_FILE_BYTES};
use crate::error::{Error, Result};
use base64::Engine;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

pub(crate) const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Decodes standard base64 (whitespace and missing padding tolerated),
/// refusing more than [`MAX_FILE_BYTES`] decoded. Messages name the file
/// (`file_name`): that is what the person uploading knows, not the field.
pub(crate) fn decode_content(field: &str, file_name: &str, encoded: &str) -> Result<Vec<u8>> {
    let compact: String = encoded
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    if compact.len() / 4 * 3 > MAX_FILE_BYTES + 3 {
        return Err(too_large(field, file_name, compact.len() / 4 * 3));
    }
    let bytes = BASE64.decode(compact.as_bytes()).map_err(|e| {
        Error::invalid_field(
            field,
            format!("the content of `{file_name}` is not valid base64: {e}"),
        )
    })?;
    if bytes.len() > MAX_FILE_BYTES {
        return Err(too_large(field, file_name, bytes.len()));
    }
    Ok(bytes)
}

/// "`big.bin` is 11.3 MiB; files may be up to 10 MiB each".
pub(crate) fn too_large(field: &str, file_name: &str, size: usize) -> Error {
    Error::invalid_field(
        field,
        format!(
            "`{file_name}` is {:.1} MiB; files may be up to 10 MiB each (16 MiB per request)",
            size as f64 / (1024.0 * 1024.0)
        ),
    )
}

/// A key from a file name: lower-case letters, digits, `.`, `_` and `-`,
/// other runs becoming one `-` (`Design Notes.md` → `design-notes.md`).
pub fn derive_key(file_name: &str) -> Option<String> {
    let mut key = String::new();
    for c in file_name.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
            key.push(c);
        } else if !key.ends_with('-') {
            key.push('-');
        }
    }
    let key: String = key
        .trim_matches(|c| c == '-' || c == '.')
        .chars()
        .take(200)
        .collect();
    (!key.is_empty()).then_some(key)
}

pub(crate) fn validate_file_name(field: &str, name: &str) -> Result<()> {
    if name.trim().is_empty()
        || name.len() > 255
        || name
            .chars()
            .any(|c| c.is_control() || c == '/' || c == '\\')
    {
        return Err(Error::invalid_field(
            field,
            "must be 1 to 255 characters without slashes or control characters",
        ));
    }
    Ok(())
}

pub(crate) fn validate_key(field: &str, key: &str) -> Result<()> {
    if key.is_empty() || key.len() > 200 || key.chars().any(char::is_control) {
        return Err(Error::invalid_field(field, "must be 1 to 200 characters"));
    }
    Ok(())
}

pub(crate) fn validate_content_type(field: &str, content_type: &str) -> Result<()> {
    let ok = content_type.len() <= 200
        && content_type
            .split_once('/')
            .is_some_and(|(t, s)| !t.is_empty() && !s.is_empty())
        && content_type
            .chars()
            .all(|c| c.is_ascii_graphic() || c == ' ');
    if ok {
        Ok(())
    } else {
        Err(Error::invalid_field(
            field,
            "must be a MIME type such as text/plain",
        ))
    }
}

/// The content type of a file name's extension (`application/octet-stream`
/// when unknown).
pub fn guess_content_type(file_name: &str) -> &'static str {
    let ext = file_name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("txt" | "log") => "text/plain",
        Some("md" | "markdown") => "text/markdown",
        Some("csv") => "text/csv",
        Some("html" | "htm") => "text/html",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("xml") => "application/xml",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("svg") => "image/svg+xml",
        Some("pdf") => "application/pdf",
        Some("zip") => "application/zip",
        Some("gz" | "tgz") => "application/gzip",
        _ => "application/octet-stream",
    }
}

/// `text`, `image` or `download` for a content type.
pub fn preview_mode(content_type: &str) -> &'static str {
    let base = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if base.starts_with("image/") {
        "image"
    } else if base.starts_with("text/")
        || matches!(
            base.as_str(),
            "application/json"
                | "application/yaml"
                | "application/x-yaml"
                | "application/xml"
                | "application/javascript"
                | "application/toml"
        )
        || base.ends_with("+json")
        || base.ends_with("+xml")
    {
        "text"
    } else {
        "download"
    }
}

/// A checked upload item.
pub(crate) struct Prepared {
    pub key: String,
    pub file_name: String,
    pub description: Option<String>,
    pub content_type: String,
    pub bytes: Vec<u8>,
}

pub(crate) fn prepare(prefix: &str, item: &FileUpload) -> Result<Prepared> {
    prepare_parts(
        prefix,
        &item.file_name,
        &item.content_base64,
        item.content_type.as_deref(),
        item.description.as_deref(),
        item.key.as_deref(),
    )
}

pub(crate) fn prepare_parts(
    prefix: &str,
    file_name: &str,
    content_base64: &str,
    content_type: Option<&str>,
    description: Option<&str>,
    key: Option<&str>,
) -> Result<Prepared> {
    let field = |name: &str| format!("{prefix}{name}");
    validate_file_name(&field("file_name"), file_name)?;
    let key = match key {
        Some(key) => {
            validate_key(&field("key"), key)?;
            key.to_owned()
        }
        None => derive_key(file_name).ok_or_else(|| {
            Error::invalid_field(
                &field("key"),
                "cannot be derived from the file name; give one",
            )
        })?,
    };
    let content_type = match content_type {
        Some(ct) => {
            validate_content_type(&field("content_type"), ct)?;
            ct.to_owned()
        }
        None => guess_content_type(file_name).to_owned(),
    };
    if description.is_some_and(|d| d.len() > 10_000) {
        return Err(Error::invalid_field(
            &field("description"),
            "must be at most 10000 characters",
        ));
    }
    Ok(Prepared {
        key,
        file_name: file_name.to_owned(),
        description: description.map(str::to_owned),
        content_type,
        bytes: decode_content(&field("content_base64"), file_name, content_base64)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_types_and_preview_modes() {
        assert_eq!(
            derive_key("Design Notes.md").as_deref(),
            Some("design-notes.md")
        );
        assert_eq!(
            derive_key("  Report (final).PDF").as_deref(),
            Some("report-final-.pdf")
        );
        assert_eq!(derive_key("***"), None);
        assert_eq!(guess_content_type("x.PNG"), "image/png");
        assert_eq!(preview_mode("text/markdown; charset=utf-8"), "text");
        assert_eq!(preview_mode("application/vnd.api+json"), "text");
        assert_eq!(preview_mode("image/png"), "image");
        assert_eq!(preview_mode("application/octet-stream"), "download");
        assert!(decode_content("c", "f", "aGVsbG8").unwrap() == b"hello");
        assert!(decode_content("c", "f", "aGVs\nbG8=").unwrap() == b"hello");
        assert!(decode_content("c", "f", "!!!").is_err());
    }
}
