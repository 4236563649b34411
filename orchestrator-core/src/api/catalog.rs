//! The community playbook catalog: playbooks, specialists and skills bundled
//! with the program (or read from `ORCH_CATALOG_DIR`), imported as ordinary
//! tenant-local copies that keep their provenance.

use super::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// A catalog list item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CatalogEntry {
    /// A fixed string id (`feature-delivery`).
    pub id: String,
    /// The entry's display name.
    pub name: String,
    /// One sentence on what the playbook is for.
    pub summary: String,
    /// engineering, operations, research, compliance or content.
    pub category: String,
    /// stable or experimental.
    pub stability: String,
    /// The catalog entry's version (not a tenant revision number).
    pub version: String,
}

/// A catalog detail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CatalogDetail {
    /// The list fields.
    #[serde(flatten)]
    pub entry: CatalogEntry,
    /// The entry's README, in Markdown.
    pub readme_markdown: String,
    /// The names of the playbook's stages, in order.
    pub stages: Vec<String>,
    /// The catalog ids of the specialists the playbook brings.
    pub specialist_ids: Vec<String>,
    /// The catalog ids of the skills the playbook brings.
    pub skill_ids: Vec<String>,
    /// Where the catalog entry comes from, kept as the copies' provenance.
    pub source_repository: String,
}

/// `playbook`, `specialist` or `skill`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum CatalogArtifactType {
    /// A playbook: stages and lifecycle.
    Playbook,
    /// A specialist: an agent definition a playbook relies on.
    Specialist,
    /// A skill: a reusable capability specialists use.
    Skill,
}

/// What to do with one catalog artifact on import.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ImportAction {
    /// Create a new local record (renamed `Name (2)`, `slug-2` when taken).
    CreateNew,
    /// Replace the matching local record (a playbook gets a new revision).
    OverrideExisting,
}

/// The local record an artifact collides with (by slug or name).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LocalMatch {
    /// The local record's id.
    pub id: Uuid,
    /// The local record's name.
    pub name: String,
    /// The playbook's active revision; null for specialists and skills.
    pub version: Option<i32>,
}

/// One item of an import preview. Every artifact the import would bring is
/// listed; `local_match` is null (and only `create_new` allowed) when nothing
/// collides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ImportConflict {
    /// What kind of artifact this is.
    pub artifact_type: CatalogArtifactType,
    /// The artifact's catalog id.
    pub catalog_id: String,
    /// The local record it collides with; null when none.
    pub local_match: Option<LocalMatch>,
    /// What the import may do with it: `create_new` always, `override_existing`
    /// only with a match.
    pub allowed_actions: Vec<ImportAction>,
}

/// The catalog playbook an import preview is for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CatalogPlaybookRef {
    /// The playbook's catalog id.
    pub id: String,
    /// The catalog entry's version.
    pub version: String,
}

/// `POST .../import-preview`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ImportPreview {
    /// The catalog playbook being previewed.
    pub playbook: CatalogPlaybookRef,
    /// Every artifact the import would bring, with its collisions.
    pub conflicts: Vec<ImportConflict>,
}

/// One decision of an import.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ImportDecision {
    /// What kind of artifact the decision is about.
    pub artifact_type: CatalogArtifactType,
    /// The artifact's catalog id.
    pub catalog_id: String,
    /// What to do with it.
    pub action: ImportAction,
}

/// `POST .../import`. Artifacts without a decision are created new.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ImportRequest {
    /// One decision per artifact; artifacts without one are created new.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decisions: Option<Vec<ImportDecision>>,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// The local playbook an import created or updated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ImportedPlaybook {
    /// The local playbook's id.
    pub id: Uuid,
    /// The local playbook's name.
    pub name: String,
    /// The local playbook's revision after the import.
    pub version: i32,
}

/// Where an imported copy comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CatalogProvenance {
    /// The catalog's source repository.
    pub source_repository: String,
    /// The catalog entry's version at import time.
    pub catalog_version: String,
}

/// `POST .../import` answer. `imported_specialists` and `imported_skills`
/// are the local ids.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ImportResult {
    /// Groups the records made by one import.
    pub import_batch_id: Uuid,
    /// The local playbook created or updated.
    pub playbook: ImportedPlaybook,
    /// The local ids of the imported specialists.
    pub imported_specialists: Vec<String>,
    /// The local ids of the imported skills.
    pub imported_skills: Vec<String>,
    /// Where the imported copies come from.
    pub provenance: CatalogProvenance,
}

/// A tenant-local specialist or skill (`GET /specialists`, `GET /skills`;
/// beyond the contract).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LibraryItem {
    /// The record's id.
    pub id: Uuid,
    /// The record's tenant-unique slug.
    pub slug: String,
    /// The record's display name.
    pub name: String,
    /// What the specialist or skill is for.
    pub description: String,
    /// The specialist's or skill's definition, kept as given.
    pub definition: Value,
    /// The catalog entry it was imported from; null for records made locally.
    pub provenance: Option<super::playbooks::Provenance>,
    /// When the record was created.
    pub created_at: Timestamp,
    /// When the record last changed.
    pub updated_at: Timestamp,
}
