//! The community playbook catalog: playbooks, specialists and skills written
//! for orch and bundled with the program (`catalog/` in this crate, embedded
//! at build time), or read from the directory `ORCH_CATALOG_DIR` names.
//!
//! Layout (the same bundled or on disk):
//! - `catalog.json`: `{source_repository, catalog_version}`;
//! - `playbooks/<id>/playbook.json`: `{id, name, summary, category,
//!   stability, version, description, outcome, lifecycle, definition,
//!   specialist_ids, skill_ids}` and `playbooks/<id>/README.md`;
//! - `specialists/<id>.json` and `skills/<id>.json`: `{id, name,
//!   description, definition}`.
//!
//! Import makes ordinary tenant-local copies (no upstream sync): the
//! playbook as a new family (or a new revision of the matching one with
//! `override_existing`), and each specialist and skill as a local record.
//! Conflicts are matched by slug (the catalog id) or by name. Without a
//! decision an artifact is created new; when its slug or name is taken the
//! copy is renamed `Name (2)` / `slug-2`. Imported records keep their
//! provenance (`source_repository`, `catalog_id`, `catalog_version`), and the
//! imported playbook's definition gets `catalog_links` mapping catalog
//! specialist and skill ids to the local ids.

use crate::api::catalog::{
    CatalogArtifactType, CatalogDetail, CatalogEntry, CatalogPlaybookRef, CatalogProvenance,
    ImportAction, ImportConflict, ImportDecision, ImportPreview, ImportRequest, ImportResult,
    ImportedPlaybook, LibraryItem, LocalMatch,
};
use crate::api::playbooks::{Lifecycle, Provenance};
use crate::api::{Page, PageRequest, Timestamp};
use crate::auth::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Begun, Storage};
use crate::playbooks::{self, RevisionFields, validate_definition};
use crate::store::{Access, Tx, on_db};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use sqlx::types::Json;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use uuid::Uuid;

/// The bundled catalog: every file under `catalog/`, by relative path.
const BUNDLED: &[(&str, &str)] = &[
    ("catalog.json", include_str!("../catalog/catalog.json")),
    (
        "playbooks/access-review/README.md",
        include_str!("../catalog/playbooks/access-review/README.md"),
    ),
    (
        "playbooks/access-review/playbook.json",
        include_str!("../catalog/playbooks/access-review/playbook.json"),
    ),
    (
        "playbooks/blog-post-pipeline/README.md",
        include_str!("../catalog/playbooks/blog-post-pipeline/README.md"),
    ),
    (
        "playbooks/blog-post-pipeline/playbook.json",
        include_str!("../catalog/playbooks/blog-post-pipeline/playbook.json"),
    ),
    (
        "playbooks/bug-triage-and-fix/README.md",
        include_str!("../catalog/playbooks/bug-triage-and-fix/README.md"),
    ),
    (
        "playbooks/bug-triage-and-fix/playbook.json",
        include_str!("../catalog/playbooks/bug-triage-and-fix/playbook.json"),
    ),
    (
        "playbooks/feature-delivery/README.md",
        include_str!("../catalog/playbooks/feature-delivery/README.md"),
    ),
    (
        "playbooks/feature-delivery/playbook.json",
        include_str!("../catalog/playbooks/feature-delivery/playbook.json"),
    ),
    (
        "playbooks/incident-response/README.md",
        include_str!("../catalog/playbooks/incident-response/README.md"),
    ),
    (
        "playbooks/incident-response/playbook.json",
        include_str!("../catalog/playbooks/incident-response/playbook.json"),
    ),
    (
        "playbooks/literature-review/README.md",
        include_str!("../catalog/playbooks/literature-review/README.md"),
    ),
    (
        "playbooks/literature-review/playbook.json",
        include_str!("../catalog/playbooks/literature-review/playbook.json"),
    ),
    (
        "skills/blameless-postmortem.json",
        include_str!("../catalog/skills/blameless-postmortem.json"),
    ),
    (
        "skills/code-review-checklist.json",
        include_str!("../catalog/skills/code-review-checklist.json"),
    ),
    (
        "skills/control-mapping.json",
        include_str!("../catalog/skills/control-mapping.json"),
    ),
    (
        "skills/evidence-collection.json",
        include_str!("../catalog/skills/evidence-collection.json"),
    ),
    (
        "skills/reproduce-bug.json",
        include_str!("../catalog/skills/reproduce-bug.json"),
    ),
    (
        "skills/runbook-execution.json",
        include_str!("../catalog/skills/runbook-execution.json"),
    ),
    (
        "skills/source-evaluation.json",
        include_str!("../catalog/skills/source-evaluation.json"),
    ),
    (
        "skills/style-guide-check.json",
        include_str!("../catalog/skills/style-guide-check.json"),
    ),
    (
        "skills/summarize-findings.json",
        include_str!("../catalog/skills/summarize-findings.json"),
    ),
    (
        "skills/write-design-doc.json",
        include_str!("../catalog/skills/write-design-doc.json"),
    ),
    (
        "skills/write-tests.json",
        include_str!("../catalog/skills/write-tests.json"),
    ),
    (
        "specialists/code-reviewer.json",
        include_str!("../catalog/specialists/code-reviewer.json"),
    ),
    (
        "specialists/compliance-auditor.json",
        include_str!("../catalog/specialists/compliance-auditor.json"),
    ),
    (
        "specialists/content-writer.json",
        include_str!("../catalog/specialists/content-writer.json"),
    ),
    (
        "specialists/editor.json",
        include_str!("../catalog/specialists/editor.json"),
    ),
    (
        "specialists/incident-commander.json",
        include_str!("../catalog/specialists/incident-commander.json"),
    ),
    (
        "specialists/qa-engineer.json",
        include_str!("../catalog/specialists/qa-engineer.json"),
    ),
    (
        "specialists/research-analyst.json",
        include_str!("../catalog/specialists/research-analyst.json"),
    ),
    (
        "specialists/site-reliability-engineer.json",
        include_str!("../catalog/specialists/site-reliability-engineer.json"),
    ),
    (
        "specialists/software-architect.json",
        include_str!("../catalog/specialists/software-architect.json"),
    ),
    (
        "specialists/software-developer.json",
        include_str!("../catalog/specialists/software-developer.json"),
    ),
];

#[derive(Debug, Clone, Deserialize)]
struct Meta {
    source_repository: String,
    catalog_version: String,
}

#[derive(Debug, Clone, Deserialize)]
struct PlaybookFile {
    id: String,
    name: String,
    summary: String,
    category: String,
    stability: String,
    version: String,
    #[serde(default)]
    description: Option<String>,
    outcome: String,
    #[serde(default)]
    lifecycle: Option<Lifecycle>,
    definition: Value,
    #[serde(default)]
    specialist_ids: Vec<String>,
    #[serde(default)]
    skill_ids: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct ItemFile {
    id: String,
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    definition: Value,
}

/// A loaded catalog.
#[derive(Debug, Clone)]
pub(crate) struct Catalog {
    meta: Meta,
    playbooks: BTreeMap<String, (PlaybookFile, String)>,
    specialists: BTreeMap<String, ItemFile>,
    skills: BTreeMap<String, ItemFile>,
}

fn bad(path: &str, message: impl std::fmt::Display) -> Error {
    Error::internal(format!("community catalog: {path}: {message}"))
}

impl Catalog {
    /// Parses the catalog from `(relative path, contents)` pairs.
    fn parse(files: &[(String, String)], default_source: &str) -> Result<Self> {
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

    fn entry(file: &PlaybookFile) -> CatalogEntry {
        CatalogEntry {
            id: file.id.clone(),
            name: file.name.clone(),
            summary: file.summary.clone(),
            category: file.category.clone(),
            stability: file.stability.clone(),
            version: file.version.clone(),
        }
    }

    fn playbook(&self, id: &str) -> Result<&(PlaybookFile, String)> {
        self.playbooks
            .get(id)
            .ok_or(Error::not_found("catalog playbook"))
    }
}

fn read_tree(root: &Path, dir: &Path, files: &mut Vec<(String, String)>) -> Result<()> {
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

#[derive(Debug, Clone, sqlx::FromRow)]
struct LibraryRow {
    id: Uuid,
    slug: String,
    name: String,
    description: String,
    definition: Json<Value>,
    source_repository: Option<String>,
    catalog_id: Option<String>,
    catalog_version: Option<String>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl LibraryRow {
    fn to_api(&self) -> LibraryItem {
        LibraryItem {
            id: self.id,
            slug: self.slug.clone(),
            name: self.name.clone(),
            description: self.description.clone(),
            definition: self.definition.0.clone(),
            provenance: self.source_repository.as_ref().map(|s| Provenance {
                source_repository: s.clone(),
                catalog_id: self.catalog_id.clone(),
                catalog_version: self.catalog_version.clone(),
            }),
            created_at: self.created_at.into(),
            updated_at: self.updated_at.into(),
        }
    }
}

macro_rules! library_columns {
    () => {
        "id, slug, name, description, definition, source_repository, catalog_id, catalog_version, created_at, updated_at"
    };
}

/// The local record of `kind` whose slug or name matches.
async fn local_match(
    access: &mut impl Access,
    tenant_id: Uuid,
    kind: CatalogArtifactType,
    slug: &str,
    name: &str,
) -> Result<Option<LocalMatch>> {
    let found: Option<(Uuid, String, Option<i32>)> = match kind {
        CatalogArtifactType::Playbook => on_db!(access, c => sqlx::query_as(
            "SELECT family_id, name, version FROM playbooks WHERE tenant_id = $1 AND is_current = TRUE \
             AND (slug = $2 OR name = $3) ORDER BY (slug = $2) DESC LIMIT 1",
        ).bind(tenant_id).bind(slug).bind(name).fetch_optional(c).await)?,
        CatalogArtifactType::Specialist => on_db!(access, c => sqlx::query_as(
            "SELECT id, name, NULL FROM specialists WHERE tenant_id = $1 AND (slug = $2 OR name = $3) \
             ORDER BY (slug = $2) DESC LIMIT 1",
        ).bind(tenant_id).bind(slug).bind(name).fetch_optional(c).await)?,
        CatalogArtifactType::Skill => on_db!(access, c => sqlx::query_as(
            "SELECT id, name, NULL FROM skills WHERE tenant_id = $1 AND (slug = $2 OR name = $3) \
             ORDER BY (slug = $2) DESC LIMIT 1",
        ).bind(tenant_id).bind(slug).bind(name).fetch_optional(c).await)?,
    };
    Ok(found.map(|(id, name, version)| LocalMatch { id, name, version }))
}

/// A slug and name not yet used by any local record of `kind`.
async fn free_slug_and_name(
    access: &mut impl Access,
    tenant_id: Uuid,
    kind: CatalogArtifactType,
    slug: &str,
    name: &str,
) -> Result<(String, String)> {
    for n in 1..1000 {
        let (s, nm) = if n == 1 {
            (slug.to_owned(), name.to_owned())
        } else {
            let suffix = format!("-{n}");
            let base: String = slug.chars().take(63 - suffix.len()).collect();
            (
                format!("{}{suffix}", base.trim_end_matches('-')),
                format!("{name} ({n})"),
            )
        };
        if local_match(access, tenant_id, kind, &s, &nm)
            .await?
            .is_none()
        {
            return Ok((s, nm));
        }
    }
    Err(Error::conflict("no free slug for the imported copy"))
}

/// Creates or overrides one specialist or skill; answers its local id.
#[allow(clippy::too_many_arguments)]
async fn import_item(
    tx: &mut Tx,
    tenant_id: Uuid,
    kind: CatalogArtifactType,
    item: &ItemFile,
    action: ImportAction,
    existing: Option<&LocalMatch>,
    meta: &Meta,
) -> Result<Uuid> {
    let now = Timestamp::now().as_datetime();
    if let (ImportAction::OverrideExisting, Some(existing)) = (action, existing) {
        match kind {
            CatalogArtifactType::Specialist => on_db!(tx, c => sqlx::query(
                "UPDATE specialists SET description = $1, definition = $2, source_repository = $3, catalog_id = $4, \
                 catalog_version = $5, updated_at = $6 WHERE tenant_id = $7 AND id = $8",
            ).bind(&item.description).bind(Json(&item.definition)).bind(&meta.source_repository).bind(&item.id)
             .bind(&meta.catalog_version).bind(now).bind(tenant_id).bind(existing.id)
             .execute(c).await.map(|r| r.rows_affected()))?,
            _ => on_db!(tx, c => sqlx::query(
                "UPDATE skills SET description = $1, definition = $2, source_repository = $3, catalog_id = $4, \
                 catalog_version = $5, updated_at = $6 WHERE tenant_id = $7 AND id = $8",
            ).bind(&item.description).bind(Json(&item.definition)).bind(&meta.source_repository).bind(&item.id)
             .bind(&meta.catalog_version).bind(now).bind(tenant_id).bind(existing.id)
             .execute(c).await.map(|r| r.rows_affected()))?,
        };
        return Ok(existing.id);
    }
    let (slug, name) = free_slug_and_name(tx, tenant_id, kind, &item.id, &item.name).await?;
    let id = Uuid::new_v4();
    match kind {
        CatalogArtifactType::Specialist => on_db!(tx, c => sqlx::query(
            "INSERT INTO specialists (id, tenant_id, slug, name, description, definition, source_repository, catalog_id, \
             catalog_version, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)",
        ).bind(id).bind(tenant_id).bind(&slug).bind(&name).bind(&item.description).bind(Json(&item.definition))
         .bind(&meta.source_repository).bind(&item.id).bind(&meta.catalog_version).bind(now)
         .execute(c).await.map(|r| r.rows_affected()))?,
        _ => on_db!(tx, c => sqlx::query(
            "INSERT INTO skills (id, tenant_id, slug, name, description, definition, source_repository, catalog_id, \
             catalog_version, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)",
        ).bind(id).bind(tenant_id).bind(&slug).bind(&name).bind(&item.description).bind(Json(&item.definition))
         .bind(&meta.source_repository).bind(&item.id).bind(&meta.catalog_version).bind(now)
         .execute(c).await.map(|r| r.rows_affected()))?,
    };
    Ok(id)
}

impl ControlPlane {
    fn catalog(&self) -> Result<Catalog> {
        Catalog::load(self.config().catalog_dir.as_deref())
    }

    /// `GET /community-catalog/playbooks`.
    pub async fn list_catalog_playbooks(&self, _caller: &Caller) -> Result<Vec<CatalogEntry>> {
        let catalog = self.catalog()?;
        Ok(catalog
            .playbooks
            .values()
            .map(|(f, _)| Catalog::entry(f))
            .collect())
    }

    /// `GET /community-catalog/playbooks/:id`.
    pub async fn get_catalog_playbook(&self, _caller: &Caller, id: &str) -> Result<CatalogDetail> {
        let catalog = self.catalog()?;
        let (file, readme) = catalog.playbook(id)?;
        let stages = file.definition["stages"]
            .as_array()
            .map(|s| {
                s.iter()
                    .filter_map(|s| s["name"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        Ok(CatalogDetail {
            entry: Catalog::entry(file),
            readme_markdown: readme.clone(),
            stages,
            specialist_ids: file.specialist_ids.clone(),
            skill_ids: file.skill_ids.clone(),
            source_repository: catalog.meta.source_repository.clone(),
        })
    }

    async fn conflicts(
        &self,
        access: &mut impl Access,
        caller: &Caller,
        catalog: &Catalog,
        file: &PlaybookFile,
    ) -> Result<Vec<ImportConflict>> {
        let mut items: Vec<(CatalogArtifactType, &str, &str)> = vec![(
            CatalogArtifactType::Playbook,
            file.id.as_str(),
            file.name.as_str(),
        )];
        for id in &file.specialist_ids {
            items.push((
                CatalogArtifactType::Specialist,
                id,
                &catalog.specialists[id].name,
            ));
        }
        for id in &file.skill_ids {
            items.push((CatalogArtifactType::Skill, id, &catalog.skills[id].name));
        }
        let mut conflicts = Vec::with_capacity(items.len());
        for (kind, id, name) in items {
            let found = local_match(access, caller.tenant_id, kind, id, name).await?;
            let allowed_actions = if found.is_some() {
                vec![ImportAction::CreateNew, ImportAction::OverrideExisting]
            } else {
                vec![ImportAction::CreateNew]
            };
            conflicts.push(ImportConflict {
                artifact_type: kind,
                catalog_id: id.to_owned(),
                local_match: found,
                allowed_actions,
            });
        }
        Ok(conflicts)
    }

    /// `POST /community-catalog/playbooks/:id/import-preview`: what the
    /// import would bring and what collides (every artifact is listed;
    /// `local_match` null means no collision).
    pub async fn preview_catalog_import(&self, caller: &Caller, id: &str) -> Result<ImportPreview> {
        let catalog = self.catalog()?;
        let (file, _) = catalog.playbook(id)?;
        let mut conn = self.store().read().await?;
        let conflicts = self.conflicts(&mut conn, caller, &catalog, file).await?;
        Ok(ImportPreview {
            playbook: CatalogPlaybookRef {
                id: file.id.clone(),
                version: file.version.clone(),
            },
            conflicts,
        })
    }

    /// `POST /community-catalog/playbooks/:id/import`.
    pub async fn import_catalog_playbook(
        &self,
        caller: &Caller,
        id: &str,
        request: ImportRequest,
    ) -> Result<ImportResult> {
        let catalog = self.catalog()?;
        let (file, _) = catalog.playbook(id)?;
        let mut decided: HashMap<(CatalogArtifactType, String), ImportAction> = HashMap::new();
        for (
            index,
            ImportDecision {
                artifact_type,
                catalog_id,
                action,
            },
        ) in request.decisions.iter().flatten().enumerate()
        {
            let known = match artifact_type {
                CatalogArtifactType::Playbook => catalog_id == &file.id,
                CatalogArtifactType::Specialist => file.specialist_ids.contains(catalog_id),
                CatalogArtifactType::Skill => file.skill_ids.contains(catalog_id),
            };
            if !known {
                return Err(Error::invalid_field(
                    &format!("decisions.{index}.catalog_id"),
                    format!("`{catalog_id}` is not part of this import"),
                ));
            }
            decided.insert((*artifact_type, catalog_id.clone()), *action);
        }
        let mut write = match self
            .begin_idempotent(
                caller,
                "catalog.import",
                request.request_id.as_deref(),
                &(id, &request),
                Storage::Plain,
            )
            .await?
        {
            Begun::Replayed(recorded) => return Ok(recorded),
            Begun::Fresh(write) => write,
        };
        let conflicts = self
            .conflicts(&mut write.tx, caller, &catalog, file)
            .await?;
        let mut matches = HashMap::new();
        for conflict in &conflicts {
            let action = decided
                .get(&(conflict.artifact_type, conflict.catalog_id.clone()))
                .copied()
                .unwrap_or(ImportAction::CreateNew);
            if !conflict.allowed_actions.contains(&action) {
                return Err(Error::validation(format!(
                    "override_existing needs a local match; {} `{}` has none",
                    serde_json::to_value(conflict.artifact_type)?
                        .as_str()
                        .unwrap_or(""),
                    conflict.catalog_id
                )));
            }
            matches.insert(
                (conflict.artifact_type, conflict.catalog_id.clone()),
                (action, conflict.local_match.clone()),
            );
        }
        let mut specialist_links = Map::new();
        let mut imported_specialists = Vec::new();
        for sid in &file.specialist_ids {
            let (action, existing) = &matches[&(CatalogArtifactType::Specialist, sid.clone())];
            let local = import_item(
                &mut write.tx,
                caller.tenant_id,
                CatalogArtifactType::Specialist,
                &catalog.specialists[sid],
                *action,
                existing.as_ref(),
                &catalog.meta,
            )
            .await?;
            specialist_links.insert(sid.clone(), json!(local));
            imported_specialists.push(local.to_string());
        }
        let mut skill_links = Map::new();
        let mut imported_skills = Vec::new();
        for kid in &file.skill_ids {
            let (action, existing) = &matches[&(CatalogArtifactType::Skill, kid.clone())];
            let local = import_item(
                &mut write.tx,
                caller.tenant_id,
                CatalogArtifactType::Skill,
                &catalog.skills[kid],
                *action,
                existing.as_ref(),
                &catalog.meta,
            )
            .await?;
            skill_links.insert(kid.clone(), json!(local));
            imported_skills.push(local.to_string());
        }
        let mut definition = file.definition.clone();
        if let Some(object) = definition.as_object_mut() {
            object.insert(
                "catalog_links".into(),
                json!({ "specialists": specialist_links, "skills": skill_links }),
            );
        }
        let provenance = Provenance {
            source_repository: catalog.meta.source_repository.clone(),
            catalog_id: Some(file.id.clone()),
            catalog_version: Some(file.version.clone()),
        };
        let (action, existing) = &matches[&(CatalogArtifactType::Playbook, file.id.clone())];
        let playbook = match (action, existing) {
            (ImportAction::OverrideExisting, Some(existing)) => {
                let current = playbooks::find_current(&mut write.tx, caller.tenant_id, existing.id)
                    .await?
                    .ok_or(Error::not_found("playbook"))?;
                let fields = RevisionFields {
                    name: current.name.clone(),
                    slug: current.slug.clone(),
                    description: file
                        .description
                        .clone()
                        .unwrap_or_else(|| file.summary.clone()),
                    outcome: file.outcome.clone(),
                    lifecycle: file.lifecycle.unwrap_or_default(),
                    definition,
                    provenance: Some(provenance),
                };
                playbooks::revise(&mut write.tx, caller, &current, &fields).await?
            }
            _ => {
                let (slug, name) = free_slug_and_name(
                    &mut write.tx,
                    caller.tenant_id,
                    CatalogArtifactType::Playbook,
                    &file.id,
                    &file.name,
                )
                .await?;
                let fields = RevisionFields {
                    name,
                    slug,
                    description: file
                        .description
                        .clone()
                        .unwrap_or_else(|| file.summary.clone()),
                    outcome: file.outcome.clone(),
                    lifecycle: file.lifecycle.unwrap_or_default(),
                    definition,
                    provenance: Some(provenance),
                };
                playbooks::create_family(&mut write.tx, caller, &fields).await?
            }
        };
        let batch_id = Uuid::new_v4();
        let result = ImportResult {
            import_batch_id: batch_id,
            playbook: ImportedPlaybook {
                id: playbook.id,
                name: playbook.name.clone(),
                version: playbook.version,
            },
            imported_specialists,
            imported_skills,
            provenance: CatalogProvenance {
                source_repository: catalog.meta.source_repository.clone(),
                catalog_version: catalog.meta.catalog_version.clone(),
            },
        };
        on_db!(&mut write.tx, c => sqlx::query(
            "INSERT INTO catalog_imports (id, tenant_id, catalog_id, catalog_version, source_repository, playbook_id, result, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(batch_id)
        .bind(caller.tenant_id)
        .bind(&file.id)
        .bind(&catalog.meta.catalog_version)
        .bind(&catalog.meta.source_repository)
        .bind(playbook.id)
        .bind(Json(serde_json::to_value(&result)?))
        .bind(Timestamp::now().as_datetime())
        .execute(c).await.map(|r| r.rows_affected()))?;
        events::record(
            &mut write.tx,
            caller,
            caller.tenant_id,
            NewEvent::new(
                "catalog.imported",
                "catalog_import",
                batch_id,
                json!({ "catalog_id": file.id, "playbook_id": playbook.id, "catalog_version": catalog.meta.catalog_version }),
            ),
        )
        .await?;
        write.finish(result).await
    }

    /// `GET /specialists` or `GET /skills` (beyond the contract): the
    /// tenant's local records, by name.
    pub async fn list_library(
        &self,
        caller: &Caller,
        kind: CatalogArtifactType,
        page: PageRequest,
    ) -> Result<Page<LibraryItem>> {
        let mut conn = self.store().read().await?;
        let (total, rows): ((i64,), Vec<LibraryRow>) = match kind {
            CatalogArtifactType::Skill => (
                on_db!(&mut conn, c => sqlx::query_as("SELECT COUNT(*) FROM skills WHERE tenant_id = $1")
                    .bind(caller.tenant_id).fetch_one(c).await)?,
                on_db!(&mut conn, c => sqlx::query_as(concat!("SELECT ", library_columns!(),
                    " FROM skills WHERE tenant_id = $1 ORDER BY name, id LIMIT $2 OFFSET $3"))
                    .bind(caller.tenant_id).bind(i64::from(page.per_page)).bind(page.offset() as i64)
                    .fetch_all(c).await)?,
            ),
            _ => (
                on_db!(&mut conn, c => sqlx::query_as("SELECT COUNT(*) FROM specialists WHERE tenant_id = $1")
                    .bind(caller.tenant_id).fetch_one(c).await)?,
                on_db!(&mut conn, c => sqlx::query_as(concat!("SELECT ", library_columns!(),
                    " FROM specialists WHERE tenant_id = $1 ORDER BY name, id LIMIT $2 OFFSET $3"))
                    .bind(caller.tenant_id).bind(i64::from(page.per_page)).bind(page.offset() as i64)
                    .fetch_all(c).await)?,
            ),
        };
        Ok(Page::new(
            rows.iter().map(LibraryRow::to_api).collect(),
            total.0 as u64,
            page,
        ))
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
