//! The `playbooks` table: one row per revision, the reads of a family's
//! current or any revision, and the workflows that reference a family.

use crate::api::playbooks::{Lifecycle, Playbook, PlaybookSummary, Provenance, WorkflowReferences};
use crate::error::Result;
use crate::store::StoredJson;
use crate::store::{Access, Tx, on_db};
use chrono::{DateTime, Utc};
use uuid::Uuid;

#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct PlaybookRow {
    pub id: Uuid,
    #[allow(dead_code)]
    pub tenant_id: Uuid,
    pub family_id: Uuid,
    pub version: i32,
    pub is_active: bool,
    pub archived: bool,
    pub slug: String,
    pub name: String,
    pub description: String,
    pub outcome: String,
    pub lifecycle: String,
    pub definition: StoredJson,
    pub source_repository: Option<String>,
    pub catalog_id: Option<String>,
    pub catalog_version: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl PlaybookRow {
    pub(crate) fn provenance(&self) -> Option<Provenance> {
        self.source_repository
            .as_ref()
            .map(|source_repository| Provenance {
                source_repository: source_repository.clone(),
                catalog_id: self.catalog_id.clone(),
                catalog_version: self.catalog_version.clone(),
            })
    }

    pub(crate) fn lifecycle(&self) -> Lifecycle {
        self.lifecycle.parse().unwrap_or_default()
    }

    pub(crate) fn to_api(&self) -> Playbook {
        Playbook {
            id: self.id,
            family_id: self.family_id,
            name: self.name.clone(),
            slug: self.slug.clone(),
            description: self.description.clone(),
            outcome: self.outcome.clone(),
            lifecycle: self.lifecycle(),
            version: self.version,
            is_active: self.is_active,
            archived: self.archived,
            definition: self.definition.0.clone(),
            provenance: self.provenance(),
            created_at: self.created_at.into(),
            updated_at: self.updated_at.into(),
        }
    }

    pub(crate) fn to_summary(&self) -> PlaybookSummary {
        PlaybookSummary {
            id: self.id,
            family_id: self.family_id,
            name: self.name.clone(),
            slug: self.slug.clone(),
            description: self.description.clone(),
            lifecycle: self.lifecycle(),
            version: self.version,
            is_active: self.is_active,
            archived: self.archived,
            provenance: self.provenance(),
            created_at: self.created_at.into(),
            updated_at: self.updated_at.into(),
        }
    }
}

macro_rules! playbook_columns {
    () => {
        "id, tenant_id, family_id, version, is_active, archived, slug, name, description, outcome, \
         lifecycle, definition, source_repository, catalog_id, catalog_version, created_at, updated_at"
    };
}

/// One revision by its own id (what a workflow stores), in `tenant_id`.
#[allow(dead_code)] // for the workflows module
pub(crate) async fn find_revision(
    access: &mut impl Access,
    tenant_id: Uuid,
    revision_id: Uuid,
) -> Result<Option<Playbook>> {
    let row: Option<PlaybookRow> = on_db!(access, c => sqlx::query_as(concat!(
        "SELECT ", playbook_columns!(), " FROM playbooks WHERE tenant_id = $1 AND id = $2"
    ))
    .bind(tenant_id)
    .bind(revision_id)
    .fetch_optional(c)
    .await)?;
    Ok(row.map(|r| r.to_api()))
}

/// The current revision of the family that `id` (a family id or any revision
/// id) belongs to, in `tenant_id`.
pub(crate) async fn find_current(
    access: &mut impl Access,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<Option<Playbook>> {
    Ok(current_row(access, tenant_id, id)
        .await?
        .map(|r| r.to_api()))
}

pub(crate) async fn current_row(
    access: &mut impl Access,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<Option<PlaybookRow>> {
    Ok(on_db!(access, c => sqlx::query_as(concat!(
        "SELECT ", playbook_columns!(), " FROM playbooks WHERE tenant_id = $1 AND is_current = TRUE \
         AND family_id = (SELECT family_id FROM playbooks WHERE tenant_id = $1 AND id = $2)"
    ))
    .bind(tenant_id)
    .bind(id)
    .fetch_optional(c)
    .await)?)
}

/// Workflows that reference any revision of the family (`active`: not
/// completed, failed or cancelled).
pub(crate) async fn workflow_references(
    access: &mut impl Access,
    tenant_id: Uuid,
    family_id: Uuid,
) -> Result<WorkflowReferences> {
    let rows: Vec<(Uuid, String)> = on_db!(access, c => sqlx::query_as(
        "SELECT id, state FROM workflows WHERE tenant_id = $1 \
         AND playbook_id IN (SELECT id FROM playbooks WHERE family_id = $2) ORDER BY created_at, id",
    )
    .bind(tenant_id)
    .bind(family_id)
    .fetch_all(c)
    .await)?;
    Ok(WorkflowReferences {
        total: rows.len() as i64,
        active: rows
            .iter()
            .filter(|(_, state)| !matches!(state.as_str(), "completed" | "failed" | "cancelled"))
            .count() as i64,
        workflow_ids: rows.into_iter().map(|(id, _)| id).collect(),
    })
}

/// Workflows a statement of [`delete_family_workflows`] removes at most.
/// A statement keeps the pages it changes until it ends, so that it alone
/// can be undone, and on SQLite the writer keeps them in memory
/// (`store/connect.rs`): a family with a long history goes in steps, each
/// journalling its own workflows' cascade, within the one transaction.
const WORKFLOWS_PER_STATEMENT: i64 = 100;

/// Removes the workflows (and their stages, work items, activations and
/// tasks, by cascade) of a family before a permanent delete; answers how
/// many it removed.
pub(crate) async fn delete_family_workflows(
    tx: &mut Tx,
    tenant_id: Uuid,
    family_id: Uuid,
) -> Result<i64> {
    let mut removed = 0;
    loop {
        let step = on_db!(tx, c => sqlx::query(
            "DELETE FROM workflows WHERE id IN (SELECT id FROM workflows WHERE tenant_id = $1 \
             AND playbook_id IN (SELECT id FROM playbooks WHERE family_id = $2) LIMIT $3)",
        )
        .bind(tenant_id)
        .bind(family_id)
        .bind(WORKFLOWS_PER_STATEMENT)
        .execute(c).await.map(|r| r.rows_affected()))?;
        removed += step as i64;
        if (step as i64) < WORKFLOWS_PER_STATEMENT {
            return Ok(removed);
        }
    }
}

pub(crate) use playbook_columns;
