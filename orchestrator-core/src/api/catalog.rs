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
    pub name: String,
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
    #[serde(flatten)]
    pub entry: CatalogEntry,
    pub readme_markdown: String,
    pub stages: Vec<String>,
    pub specialist_ids: Vec<String>,
    pub skill_ids: Vec<String>,
    pub source_repository: String,
}

/// `playbook`, `specialist` or `skill`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum CatalogArtifactType {
    Playbook,
    Specialist,
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
    pub id: Uuid,
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
    pub artifact_type: CatalogArtifactType,
    pub catalog_id: String,
    pub local_match: Option<LocalMatch>,
    pub allowed_actions: Vec<ImportAction>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CatalogPlaybookRef {
    pub id: String,
    pub version: String,
}

/// `POST .../import-preview`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ImportPreview {
    pub playbook: CatalogPlaybookRef,
    pub conflicts: Vec<ImportConflict>,
}

/// One decision of an import.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ImportDecision {
    pub artifact_type: CatalogArtifactType,
    pub catalog_id: String,
    pub action: ImportAction,
}

/// `POST .../import`. Artifacts without a decision are created new.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ImportRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decisions: Option<Vec<ImportDecision>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ImportedPlaybook {
    pub id: Uuid,
    pub name: String,
    pub version: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CatalogProvenance {
    pub source_repository: String,
    pub catalog_version: String,
}

/// `POST .../import` answer. `imported_specialists` and `imported_skills`
/// are the local ids.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ImportResult {
    pub import_batch_id: Uuid,
    pub playbook: ImportedPlaybook,
    pub imported_specialists: Vec<String>,
    pub imported_skills: Vec<String>,
    pub provenance: CatalogProvenance,
}

/// A tenant-local specialist or skill (`GET /specialists`, `GET /skills`;
/// beyond the contract).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LibraryItem {
    pub id: Uuid,
    pub slug: String,
    pub name: String,
    pub description: String,
    pub definition: Value,
    pub provenance: Option<super::playbooks::Provenance>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}
