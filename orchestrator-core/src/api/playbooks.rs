//! Playbooks: reusable, revisioned process definitions.
//!
//! A playbook is a *family* of revisions. Create makes version 1; every PATCH
//! or PUT makes a new revision (version + 1) that becomes the active one,
//! leaving earlier revisions untouched. The id a create answers is the
//! family's id (it is also the id of revision 1), and every route under
//! `/playbooks/:id` accepts the family id or any revision id and works on the
//! family's current revision. Records carry the revision's own `id` and the
//! `family_id`; workflows store the revision id they were launched with.

use super::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// `planned` playbooks run to completion; `ongoing` ones never complete by themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Lifecycle {
    /// Runs to completion (the default).
    #[default]
    Planned,
    /// Never completes by itself: work keeps arriving.
    Ongoing,
}

impl Lifecycle {
    /// The wire name (`planned`, `ongoing`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Planned => "planned",
            Self::Ongoing => "ongoing",
        }
    }
}

impl std::str::FromStr for Lifecycle {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "planned" => Ok(Self::Planned),
            "ongoing" => Ok(Self::Ongoing),
            other => Err(format!("unknown lifecycle `{other}`")),
        }
    }
}

/// Where an imported playbook came from (null for playbooks authored here).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Provenance {
    /// The catalog's source repository.
    pub source_repository: String,
    /// The catalog entry's id; null when it came from elsewhere.
    pub catalog_id: Option<String>,
    /// The catalog entry's version at import time.
    pub catalog_version: Option<String>,
}

/// A playbook revision with its definition (`GET /playbooks/:id`, writes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Playbook {
    /// This revision's id.
    pub id: Uuid,
    /// The family's id (= the id of revision 1).
    pub family_id: Uuid,
    /// The playbook's name.
    pub name: String,
    /// The playbook's slug, unique in the tenant.
    pub slug: String,
    /// What the playbook is for (empty when not given).
    pub description: String,
    /// What a workflow of the playbook delivers when it completes.
    pub outcome: String,
    /// `planned` (runs to completion) or `ongoing` (never completes by itself).
    pub lifecycle: Lifecycle,
    /// The revision number (the active revision's on reads).
    pub version: i32,
    /// True on the current revision of a family that is not archived.
    pub is_active: bool,
    /// Whether the family is archived: it cannot be launched (`409`).
    pub archived: bool,
    /// The authored definition: `roles` and `stages` (objects with a unique
    /// `name`, at least one stage) plus anything else the author keeps.
    pub definition: Value,
    /// The catalog entry it was imported from; null for playbooks authored
    /// here.
    pub provenance: Option<Provenance>,
    /// When this revision was created.
    pub created_at: Timestamp,
    /// When this revision last changed.
    pub updated_at: Timestamp,
}

/// A list item of `GET /playbooks` (no definition).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PlaybookSummary {
    /// This revision's id.
    pub id: Uuid,
    /// The family's id (= the id of revision 1).
    pub family_id: Uuid,
    /// The playbook's name.
    pub name: String,
    /// The playbook's slug, unique in the tenant.
    pub slug: String,
    /// What the playbook is for (empty when not given).
    pub description: String,
    /// `planned` (runs to completion) or `ongoing` (never completes by itself).
    pub lifecycle: Lifecycle,
    /// The revision number (the active revision's on reads).
    pub version: i32,
    /// True on the current revision of a family that is not archived.
    pub is_active: bool,
    /// Whether the family is archived: it cannot be launched (`409`).
    pub archived: bool,
    /// The catalog entry it was imported from; null for playbooks authored
    /// here.
    pub provenance: Option<Provenance>,
    /// When this revision was created.
    pub created_at: Timestamp,
    /// When this revision last changed.
    pub updated_at: Timestamp,
}

/// What a playbook's `definition` may hold: typed, so a typo (`stagse`,
/// `gaol`) is a 422 naming its path instead of a key nobody reads. Stored
/// as the JSON it was given.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PlaybookDefinition {
    /// The stages a workflow goes through, in order (at least one; unique
    /// names). A workflow's first stage starts `active`.
    pub stages: Vec<StageDefinition>,
    /// The roles its tasks are routed by (unique names); a stage's `role`
    /// must name one of them (400 `VALIDATION_ERROR` otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roles: Option<Vec<RoleDefinition>>,
    /// Set by a catalog import: the local ids of the catalog specialists
    /// and skills the playbook uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog_links: Option<CatalogLinks>,
    /// The retry policy of every task of its workflows that names none
    /// (run control §2): checked when the playbook is saved, by the same
    /// rules as a task's `retry_policy` (422 naming
    /// `definition.retry_policy.<field>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_policy: Option<super::RetryPolicy>,
    /// The concurrency key (run control §6) of every task of its workflows
    /// that names none, the orchestrator tasks of activations included:
    /// how a playbook bounds its workflows' orchestration turns, which no
    /// caller creates and so no request can key. 1 to 200 characters (422
    /// naming `definition.concurrency_key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency_key: Option<String>,
    /// The rate key of every task of its workflows that names none, as
    /// [`Self::concurrency_key`]. A key with no rate limit set does not
    /// fail the workflow's tasks: they carry it and are not held back until
    /// a limit is set with `PUT /api/v1/rate-limits/:key`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit_key: Option<String>,
}

/// [`PlaybookDefinition::catalog_links`]: catalog id → local id.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CatalogLinks {
    /// Catalog specialist id to the local specialist's id.
    #[serde(default)]
    pub specialists: std::collections::BTreeMap<String, Uuid>,
    /// Catalog skill id to the local skill's id.
    #[serde(default)]
    pub skills: std::collections::BTreeMap<String, Uuid>,
}

/// One stage of a [`PlaybookDefinition`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct StageDefinition {
    /// The stage's name, unique in the definition; work items and tasks name it
    /// as `stage_name`.
    pub name: String,
    /// What the stage is done for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// The role that does its work: one of the definition's `roles`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Free text about the stage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// One role of a [`PlaybookDefinition`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RoleDefinition {
    /// The role's name, unique in the definition; tasks carry it as `role` and
    /// require the routing tag `role:<name>`.
    pub name: String,
    /// The catalog specialist that plays it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub specialist_id: Option<String>,
    /// Free text about the role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// `POST /playbooks` and `PUT /playbooks/:id`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CreatePlaybook {
    /// The playbook's name.
    pub name: String,
    /// What a workflow of the playbook delivers when it completes.
    pub outcome: String,
    /// Checked against [`PlaybookDefinition`]; stored as given.
    #[cfg_attr(feature = "schema", schemars(with = "PlaybookDefinition"))]
    pub definition: Value,
    /// Derived from the name when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slug: Option<String>,
    /// What the playbook is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `planned` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Lifecycle>,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// `PATCH /playbooks/:id`: any subset of the create fields.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PatchPlaybook {
    /// A new name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A new outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// Checked against [`PlaybookDefinition`]; stored as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<PlaybookDefinition>"))]
    pub definition: Option<Value>,
    /// A new slug, unique in the tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slug: Option<String>,
    /// A new description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A new lifecycle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Lifecycle>,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// `PATCH /playbooks/:id/archive`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ArchivePlaybook {
    /// True archives the family (it can no longer be launched); false restores
    /// it.
    pub archived: bool,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// Workflows that reference a playbook family (any of its revisions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkflowReferences {
    /// Every referencing workflow.
    pub total: i64,
    /// Those not yet completed, failed or cancelled.
    pub active: i64,
    /// The ids of the referencing workflows.
    pub workflow_ids: Vec<Uuid>,
}

/// `GET /playbooks/:id/delete-impact`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PlaybookDeleteImpact {
    /// The revision the route was called with.
    pub playbook_id: Uuid,
    /// The family's id.
    pub family_id: Uuid,
    /// The playbook's name.
    pub name: String,
    /// How many revisions the family has.
    pub revisions: i64,
    /// The workflows that reference the family.
    pub workflows: WorkflowReferences,
    /// Whether `DELETE /playbooks/:id` would succeed (no workflow references it).
    pub can_delete: bool,
}

/// `DELETE /playbooks/:id` and `DELETE /playbooks/:id/permanent`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeletedPlaybook {
    /// The id the route was called with.
    pub id: Uuid,
    /// Always true: the family is gone.
    pub deleted: bool,
    /// Revisions removed.
    pub revisions_deleted: i64,
    /// Workflows of the family removed with it (permanent delete only; a
    /// plain delete refuses while any exist).
    pub workflows_deleted: i64,
}
