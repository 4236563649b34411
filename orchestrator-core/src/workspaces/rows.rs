//! The `workspaces` table: the row and its columns, reads by id (and the
//! locked read for a change), the shared row update, and the workflow
//! summary the workflows module shows beside a workspace.

use crate::api::workspaces::{Workspace, WorkspaceSummary};
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::store::StoredJson;
use crate::store::{Access, Tx, is_unique_violation, on_db};
use chrono::{DateTime, Utc};
use sqlx::types::Json;
use uuid::Uuid;

#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct WorkspaceRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub name: String,
    pub slug: String,
    pub description: String,
    pub repository_url: Option<String>,
    pub default_branch: Option<String>,
    pub settings: StoredJson,
    pub memory: StoredJson,
    pub is_active: bool,
    pub git_token_encrypted: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl WorkspaceRow {
    pub(crate) fn to_api(&self, summary: WorkspaceSummary) -> Workspace {
        Workspace {
            id: self.id,
            name: self.name.clone(),
            slug: self.slug.clone(),
            description: self.description.clone(),
            repository_url: self.repository_url.clone(),
            default_branch: self.default_branch.clone(),
            settings: self.settings.0.clone(),
            memory: self.memory.0.clone(),
            is_active: self.is_active,
            git_token_configured: self.git_token_encrypted.is_some(),
            summary,
            created_at: self.created_at.into(),
            updated_at: self.updated_at.into(),
        }
    }
}

macro_rules! workspace_columns {
    () => {
        "id, tenant_id, name, slug, description, repository_url, default_branch, settings, memory, \
         is_active, git_token_encrypted, created_at, updated_at"
    };
}

/// A workspace of `tenant_id` by id (with its encrypted token column, which
/// only [`ControlPlane::workspace_git_token`] decrypts).
pub(crate) async fn find_workspace(
    access: &mut impl Access,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<Option<WorkspaceRow>> {
    Ok(on_db!(access, c => sqlx::query_as(concat!(
        "SELECT ", workspace_columns!(), " FROM workspaces WHERE tenant_id = $1 AND id = $2"
    ))
    .bind(tenant_id)
    .bind(id)
    .fetch_optional(c)
    .await)?)
}

/// [`find_workspace`] or 404.
pub(crate) async fn require_workspace(
    access: &mut impl Access,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<WorkspaceRow> {
    find_workspace(access, tenant_id, id)
        .await?
        .ok_or(Error::not_found("workspace"))
}

/// Workflow counts of a workspace (`open`: not completed, failed or
/// cancelled).
pub(crate) async fn workflow_summary(
    access: &mut impl Access,
    tenant_id: Uuid,
    workspace_id: Uuid,
) -> Result<WorkspaceSummary> {
    let (total, open): (i64, Option<i64>) = on_db!(access, c => sqlx::query_as(
        "SELECT COUNT(*), SUM(CASE WHEN state IN ('completed', 'failed', 'cancelled') THEN 0 ELSE 1 END) \
         FROM workflows WHERE tenant_id = $1 AND workspace_id = $2",
    )
    .bind(tenant_id)
    .bind(workspace_id)
    .fetch_one(c)
    .await)?;
    Ok(WorkspaceSummary {
        workflow_count: total,
        open_workflow_count: open.unwrap_or(0),
    })
}

/// Writes `row` back (every mutable column) and answers the stored row.
pub(crate) async fn update_row(tx: &mut Tx, row: &WorkspaceRow) -> Result<WorkspaceRow> {
    let now = tx.now().as_datetime();
    let updated = on_db!(tx, c => sqlx::query_as::<_, WorkspaceRow>(concat!(
        "UPDATE workspaces SET name = $1, slug = $2, description = $3, repository_url = $4, default_branch = $5, \
         settings = $6, memory = $7, is_active = $8, git_token_encrypted = $9, \
         git_token_set_at = CASE WHEN $9 IS NULL THEN NULL ELSE COALESCE(git_token_set_at, $10) END, \
         updated_at = $10 WHERE tenant_id = $11 AND id = $12 RETURNING ", workspace_columns!()
    ))
    .bind(&row.name)
    .bind(&row.slug)
    .bind(&row.description)
    .bind(&row.repository_url)
    .bind(&row.default_branch)
    .bind(Json(&row.settings.0))
    .bind(Json(&row.memory.0))
    .bind(row.is_active)
    .bind(&row.git_token_encrypted)
    .bind(now)
    .bind(row.tenant_id)
    .bind(row.id)
    .fetch_one(c)
    .await);
    match updated {
        Ok(row) => Ok(row),
        Err(e) if is_unique_violation(&e) => Err(slug_conflict(&row.slug)),
        Err(e) => Err(e.into()),
    }
}

/// Reads a workspace for a write, locking its row on PostgreSQL so
/// read-modify-write (memory) cannot lose a concurrent update. (SQLite has one
/// writer, so the transaction already serializes.)
pub(crate) async fn lock_workspace(tx: &mut Tx, tenant_id: Uuid, id: Uuid) -> Result<WorkspaceRow> {
    let row: Option<WorkspaceRow> = on_db!(tx, c =>
        sqlite: sqlx::query_as(concat!(
            "SELECT ", workspace_columns!(), " FROM workspaces WHERE tenant_id = $1 AND id = $2"
        )).bind(tenant_id).bind(id).fetch_optional(c).await,
        postgres: sqlx::query_as(concat!(
            "SELECT ", workspace_columns!(), " FROM workspaces WHERE tenant_id = $1 AND id = $2 FOR UPDATE"
        )).bind(tenant_id).bind(id).fetch_optional(c).await,
    )?;
    row.ok_or(Error::not_found("workspace"))
}

impl ControlPlane {
    pub(crate) async fn workspace_record(
        &self,
        access: &mut impl Access,
        row: &WorkspaceRow,
    ) -> Result<Workspace> {
        let summary = workflow_summary(access, row.tenant_id, row.id).await?;
        Ok(row.to_api(summary))
    }
}

pub(crate) use workspace_columns;

pub(crate) fn slug_conflict(slug: &str) -> Error {
    Error::Conflict {
        message: format!("a workspace with slug `{slug}` already exists"),
        hint: Some("choose another slug".into()),
    }
}
