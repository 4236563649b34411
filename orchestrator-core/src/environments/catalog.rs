//! The catalog of base environments: bundled with the program (files under
//! `orchestrator-core/environments/`, one `<key>.v<version>.json` per entry)
//! or, when `ORCH_ENV_CATALOG_DIR` is set, every `*.json` file of that
//! directory instead. Entries are versioned by integer; a key may have many
//! versions.

use crate::api::environments::EnvironmentCatalogEntry;
use crate::error::{Error, Result};
use std::path::Path;

const BUNDLED: &[(&str, &str)] = &[
    (
        "debian-shell.v1.json",
        include_str!("../../environments/debian-shell.v1.json"),
    ),
    (
        "python.v1.json",
        include_str!("../../environments/python.v1.json"),
    ),
    (
        "node.v1.json",
        include_str!("../../environments/node.v1.json"),
    ),
    (
        "rust.v1.json",
        include_str!("../../environments/rust.v1.json"),
    ),
];

/// Every entry, sorted by key then version.
pub(crate) fn load(dir: Option<&Path>) -> Result<Vec<EnvironmentCatalogEntry>> {
    let files: Vec<(String, String)> = match dir {
        None => BUNDLED
            .iter()
            .map(|(name, text)| ((*name).to_owned(), (*text).to_owned()))
            .collect(),
        Some(dir) => read_dir(dir)?,
    };
    let mut entries = Vec::with_capacity(files.len());
    for (name, text) in files {
        let entry: EnvironmentCatalogEntry = serde_json::from_str(&text).map_err(|e| {
            Error::internal(format!("environment catalog file {name} is invalid: {e}"))
        })?;
        if entry.key.is_empty() || entry.version < 1 || entry.image.is_empty() {
            return Err(Error::internal(format!(
                "environment catalog file {name} needs a key, a version of at least 1 and an image"
            )));
        }
        entries.push(entry);
    }
    entries.sort_by(|a, b| (&a.key, a.version).cmp(&(&b.key, b.version)));
    if entries
        .windows(2)
        .any(|w| w[0].key == w[1].key && w[0].version == w[1].version)
    {
        return Err(Error::internal(
            "the environment catalog lists a key and version twice",
        ));
    }
    Ok(entries)
}

fn read_dir(dir: &Path) -> Result<Vec<(String, String)>> {
    let unreadable =
        |e: std::io::Error| Error::internal(format!("cannot read {}: {e}", dir.display()));
    let mut files = Vec::new();
    for item in std::fs::read_dir(dir).map_err(unreadable)? {
        let path = item.map_err(unreadable)?.path();
        if path.extension().is_some_and(|ext| ext == "json") {
            let text = std::fs::read_to_string(&path).map_err(unreadable)?;
            files.push((path.display().to_string(), text));
        }
    }
    Ok(files)
}

/// The entry of `key` at `version` (the newest when `None`), or 404.
pub(crate) fn find(
    entries: Vec<EnvironmentCatalogEntry>,
    key: &str,
    version: Option<i64>,
) -> Result<EnvironmentCatalogEntry> {
    entries
        .into_iter()
        .filter(|e| e.key == key && version.is_none_or(|v| v == e.version))
        .max_by_key(|e| e.version)
        .ok_or(Error::not_found("catalog environment"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_catalog_has_the_four_base_environments() {
        let entries = load(None).unwrap();
        let keys: Vec<&str> = entries.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["debian-shell", "node", "python", "rust"]);
        assert!(entries.iter().all(|e| !e.tools.is_empty()));
        assert!(find(entries.clone(), "python", Some(2)).is_err());
        assert_eq!(find(entries, "rust", None).unwrap().version, 1);
    }
}
