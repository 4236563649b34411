//! What workflows need from playbooks and workspaces (their own modules):
//! lookups by id in the tenant, names for list items, the workspace packet
//! and documents of a task context, and artifacts.

use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::store::{Access, Tx, on_db};
use crate::tasks::TaskRow;
use serde_json::{Value, json};
use sqlx::types::Json;
use uuid::Uuid;

/// The playbook revision a workflow launches with.
#[derive(Debug, Clone)]
pub(crate) struct PlaybookRef {
    pub id: Uuid,
    pub lifecycle: String,
    pub definition: Value,
}

/// `workspace_name` and `playbook_name` for list items (`w` is the workflow).
pub(crate) const NAME_COLUMNS: &str = "(SELECT s.name FROM workspaces s WHERE s.id = w.workspace_id) AS workspace_name, \
     (SELECT p.name FROM playbooks p WHERE p.id = w.playbook_id) AS playbook_name";

pub(crate) async fn lookup_playbook(
    access: &mut impl Access,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<Option<PlaybookRef>> {
    let row: Option<(Uuid, String, Json<Value>)> = on_db!(access, c => sqlx::query_as(
        "SELECT id, lifecycle, definition FROM playbooks WHERE id = $1 AND tenant_id = $2",
    )
    .bind(id)
    .bind(tenant_id)
    .fetch_optional(c)
    .await)?;
    Ok(row.map(|(id, lifecycle, definition)| PlaybookRef {
        id,
        lifecycle,
        definition: definition.0,
    }))
}

pub(crate) async fn newest_active_playbook(
    access: &mut impl Access,
    tenant_id: Uuid,
) -> Result<Option<Uuid>> {
    let row: Option<(Uuid,)> = on_db!(access, c => sqlx::query_as(
        "SELECT id FROM playbooks WHERE tenant_id = $1 AND is_active ORDER BY created_at DESC, id DESC LIMIT 1",
    )
    .bind(tenant_id)
    .fetch_optional(c)
    .await)?;
    Ok(row.map(|(id,)| id))
}

/// The workspace's name, when it exists in the tenant.
pub(crate) async fn lookup_workspace(
    access: &mut impl Access,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<Option<String>> {
    let row: Option<(String,)> = on_db!(access, c => sqlx::query_as(
        "SELECT name FROM workspaces WHERE id = $1 AND tenant_id = $2",
    )
    .bind(id)
    .bind(tenant_id)
    .fetch_optional(c)
    .await)?;
    Ok(row.map(|(name,)| name))
}

/// The workspace part of a task context: id, name, slug, repository, memory.
pub(crate) async fn workspace_packet(
    access: &mut impl Access,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<Option<Value>> {
    let row: Option<(Uuid, String, Option<String>, Option<String>)> = on_db!(access, c => sqlx::query_as(
        "SELECT id, name, slug, repository_url FROM workspaces WHERE id = $1 AND tenant_id = $2",
    )
    .bind(id)
    .bind(tenant_id)
    .fetch_optional(c)
    .await)?;
    Ok(row.map(|(id, name, slug, repository_url)| json!({ "id": id, "name": name, "slug": slug, "repository_url": repository_url })))
}

/// Documents of a task context: none until workspace files are wired in.
pub(crate) async fn workspace_documents(
    _access: &mut impl Access,
    _tenant_id: Uuid,
    _id: Uuid,
) -> Result<Vec<Value>> {
    Ok(Vec::new())
}

/// Artifacts given at task completion.
pub(crate) async fn attach_artifacts(
    _tx: &mut Tx,
    _caller: &Caller,
    _task: &TaskRow,
    artifacts: &[Value],
) -> Result<()> {
    if artifacts.is_empty() {
        return Ok(());
    }
    Err(Error::validation("artifacts are not stored yet"))
}
