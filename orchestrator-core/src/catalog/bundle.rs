//! The catalog itself: the bundled files (compiled into the binary) or a
//! directory that replaces them (`ORCH_CATALOG_DIR`), read and checked once.

use crate::api::catalog::CatalogEntry;
use crate::api::playbooks::Lifecycle;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::playbooks::validate_definition;
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// The bundled catalog: every file under `catalog/`, by relative path.
pub(crate) const BUNDLED: &[(&str, &str)] = &[
    ("catalog.json", include_str!("../../catalog/catalog.json")),
    (
        "playbooks/access-review/README.md",
        include_str!("../../catalog/playbooks/access-review/README.md"),
    ),
    (
        "playbooks/access-review/playbook.json",
        include_str!("../../catalog/playbooks/access-review/playbook.json"),
    ),
    (
        "playbooks/blog-post-pipeline/README.md",
        include_str!("../../catalog/playbooks/blog-post-pipeline/README.md"),
    ),
    (
        "playbooks/blog-post-pipeline/playbook.json",
        include_str!("../../catalog/playbooks/blog-post-pipeline/playbook.json"),
    ),
    (
        "playbooks/bug-triage-and-fix/README.md",
        include_str!("../../catalog/playbooks/bug-triage-and-fix/README.md"),
    ),
    (
        "playbooks/bug-triage-and-fix/playbook.json",
        include_str!("../../catalog/playbooks/bug-triage-and-fix/playbook.json"),
    ),
    (
        "playbooks/feature-delivery/README.md",
        include_str!("../../catalog/playbooks/feature-delivery/README.md"),
    ),
    (
        "playbooks/feature-delivery/playbook.json",
        include_str!("../../catalog/playbooks/feature-delivery/playbook.json"),
    ),
    (
        "playbooks/incident-response/README.md",
        include_str!("../../catalog/playbooks/incident-response/README.md"),
    ),
    (
        "playbooks/incident-response/playbook.json",
        include_str!("../../catalog/playbooks/incident-response/playbook.json"),
    ),
    (
        "playbooks/literature-review/README.md",
        include_str!("../../catalog/playbooks/literature-review/README.md"),
    ),
    (
        "playbooks/literature-review/playbook.json",
        include_str!("../../catalog/playbooks/literature-review/playbook.json"),
    ),
    (
        "skills/blameless-postmortem.json",
        include_str!("../../catalog/skills/blameless-postmortem.json"),
    ),
    (
        "skills/code-review-checklist.json",
        include_str!("../../catalog/skills/code-review-checklist.json"),
    ),
    (
        "skills/control-mapping.json",
        include_str!("../../catalog/skills/control-mapping.json"),
    ),
    (
        "skills/evidence-collection.json",
        include_str!("../../catalog/skills/evidence-collection.json"),
    ),
    (
        "skills/reproduce-bug.json",
        include_str!("../../catalog/skills/reproduce-bug.json"),
    ),
    (
        "skills/runbook-execution.json",
        include_str!("../../catalog/skills/runbook-execution.json"),
    ),
    (
        "skills/source-evaluation.json",
        include_str!("../../catalog/skills/source-evaluation.json"),
    ),
    (
        "skills/style-guide-check.json",
        include_str!("../../catalog/skills/style-guide-check.json"),
    ),
    (
        "skills/summarize-findings.json",
        include_str!("../../catalog/skills/summarize-findings.json"),
    ),
    (
        "skills/write-design-doc.json",
        include_str!("../../catalog/skills/write-design-doc.json"),
    ),
    (
        "skills/write-tests.json",
        include_str!("../../catalog/skills/write-tests.json"),
    ),
    (
        "specialists/code-reviewer.json",
        include_str!("../../catalog/specialists/code-reviewer.json"),
    ),
    (
        "specialists/compliance-auditor.json",
        include_str!("../../catalog/specialists/compliance-auditor.json"),
    ),
    (
        "specialists/content-writer.json",
        include_str!("../../catalog/specialists/content-writer.json"),
    ),
    (
        "specialists/editor.json",
        include_str!("../../catalog/specialists/editor.json"),
    ),
    (
        "specialists/incident-commander.json",
        include_str!("../../catalog/specialists/incident-commander.json"),
    ),
    (
        "specialists/qa-engineer.json",
        include_str!("../../catalog/specialists/qa-engineer.json"),
    ),
    (
        "specialists/research-analyst.json",
        include_str!("../../catalog/specialists/research-analyst.json"),
    ),
    (
        "specialists/site-reliability-engineer.json",
        include_str!("../../catalog/specialists/site-reliability-engineer.json"),
    ),
    (
        "specialists/software-architect.json",
        include_str!("../../catalog/specialists/software-architect.json"),
    ),
    (
        "specialists/software-developer.json",
        include_str!("../../catalog/specialists/software-developer.json"),
    ),
];

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Meta {
    pub source_repository: String,
    pub catalog_version: String,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct PlaybookFile {
    pub id: String,
    pub name: String,
    pub summary: String,
    pub category: String,
    pub stability: String,
    pub version: String,
    #[serde(default)]
    pub description: Option<String>,
    pub outcome: String,
    #[serde(default)]
    pub lifecycle: Option<Lifecycle>,
    pub definition: Value,
    #[serde(default)]
    pub specialist_ids: Vec<String>,
    #[serde(default)]
    pub skill_ids: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ItemFile {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub definition: Value,
}

/// A loaded catalog.
#[derive(Debug, Clone)]
pub(crate) struct Catalog {
    pub meta: Meta,
    pub playbooks: BTreeMap<String, (PlaybookFile, String)>,
    pub specialists: BTreeMap<String, ItemFile>,
    pub skills: BTreeMap<String, ItemFile>,
}

impl Catalog {
    /// Parses the catalog from `(relative path, contents)` pairs.
    pub(crate) fn parse(files: &[(String, String)], default_source: &str) -> Result<Self> {
        let mut meta = Meta {
            source_repository: default_source.to_owned(),
            catalog_version: "unversioned".to_owned(),
        };
        let mut playbooks = BTreeMap::new();
        let mut readmes = HashMap::new();
        let mut specialists = BTreeMap::new();
        let mut skills = BTreeMap::new();
        for (path, text) in files {
            let parts: Vec<&str> = path.split('/').collect();
            match parts.as_slice() {
                ["catalog.json"] => meta = serde_json::from_str(text).map_err(|e| bad(path, e))?,
                ["playbooks", id, "playbook.json"] => {
                    let file: PlaybookFile =
                        serde_json::from_str(text).map_err(|e| bad(path, e))?;
                    if file.id != *id {
                        return Err(bad(path, "id differs from the directory name"));
                    }
                    validate_definition(&file.definition).map_err(|e| bad(path, e))?;
                    playbooks.insert(file.id.clone(), file);
                }
                ["playbooks", id, "README.md"] => {
                    readmes.insert((*id).to_owned(), text.clone());
                }
                [kind @ ("specialists" | "skills"), name] if name.ends_with(".json") => {
                    let item: ItemFile = serde_json::from_str(text).map_err(|e| bad(path, e))?;
                    if Some(item.id.as_str()) != name.strip_suffix(".json") {
                        return Err(bad(path, "id differs from the file name"));
                    }
                    let map = if *kind == "specialists" {
                        &mut specialists
                    } else {
                        &mut skills
                    };
                    map.insert(item.id.clone(), item);
                }
                _ => {}
            }
        }
        let mut with_readmes = BTreeMap::new();
        for (id, file) in playbooks {
            for s in &file.specialist_ids {
                if !specialists.contains_key(s) {
                    return Err(bad(&id, format!("unknown specialist `{s}`")));
                }
            }
            for s in &file.skill_ids {
                if !skills.contains_key(s) {
                    return Err(bad(&id, format!("unknown skill `{s}`")));
                }
            }
            let readme = readmes.remove(&id).unwrap_or_default();
            with_readmes.insert(id, (file, readme));
        }
        Ok(Self {
            meta,
            playbooks: with_readmes,
            specialists,
            skills,
        })
    }

    /// The bundled catalog, or the one in `dir`.
    pub(crate) fn load(dir: Option<&Path>) -> Result<Self> {
        match dir {
            None => {
                let files: Vec<(String, String)> = BUNDLED
                    .iter()
                    .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
                    .collect();
                Self::parse(&files, "bundled:orch-community-catalog")
            }
            Some(dir) => {
                let mut files = Vec::new();
                read_tree(dir, dir, &mut files)?;
                Self::parse(&files, &format!("file://{}", dir.display()))
            }
        }
    }

    pub(crate) fn entry(file: &PlaybookFile) -> CatalogEntry {
        CatalogEntry {
            id: file.id.clone(),
            name: file.name.clone(),
            summary: file.summary.clone(),
            category: file.category.clone(),
            stability: file.stability.clone(),
            version: file.version.clone(),
        }
    }

    pub(crate) fn playbook(&self, id: &str) -> Result<&(PlaybookFile, String)> {
        self.playbooks
            .get(id)
            .ok_or(Error::not_found("catalog playbook"))
    }
}

pub(crate) fn bad(path: &str, message: impl std::fmt::Display) -> Error {
    Error::internal(format!("community catalog: {path}: {message}"))
}

pub(crate) fn read_tree(root: &Path, dir: &Path, files: &mut Vec<(String, String)>) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        Error::internal(format!(
            "cannot read the catalog directory {}: {e}",
            dir.display()
        ))
    })?;
    for entry in entries {
        let path = entry.map_err(Error::internal)?.path();
        if path.is_dir() {
            read_tree(root, &path, files)?;
        } else if path.extension().is_some_and(|e| e == "json" || e == "md") {
            let relative = path
                .strip_prefix(root)
                .map_err(Error::internal)?
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            let text = std::fs::read_to_string(&path).map_err(Error::internal)?;
            files.push((relative, text));
        }
    }
    Ok(())
}

impl ControlPlane {
    pub(crate) fn catalog(&self) -> Result<Catalog> {
        Catalog::load(self.config().catalog_dir.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_catalog_loads_and_covers_every_category() {
        let catalog = Catalog::load(None).unwrap();
        assert!(catalog.playbooks.len() >= 6);
        for category in [
            "engineering",
            "operations",
            "research",
            "compliance",
            "content",
        ] {
            assert!(
                catalog
                    .playbooks
                    .values()
                    .any(|(f, _)| f.category == category),
                "{category}"
            );
        }
        for (file, readme) in catalog.playbooks.values() {
            assert!(readme.starts_with("# "), "{} has a README", file.id);
            assert!(!file.specialist_ids.is_empty() && !file.skill_ids.is_empty());
        }
    }
}
