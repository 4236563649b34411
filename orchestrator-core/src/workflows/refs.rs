//! What workflows need from playbooks and workspaces (their own modules):
//! lookups by id in the tenant, names for list items, the workspace packet
//! and documents of a task context, and artifacts.

use crate::error::{Error, Result};
use crate::store::{Access, on_db};
use serde_json::Value;
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

/// The current revision of the playbook family `id` names (family or
/// revision id). An archived playbook cannot be launched (409).
pub(crate) async fn lookup_playbook(
    access: &mut impl Access,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<Option<PlaybookRef>> {
    let Some(playbook) = crate::playbooks::find_current(access, tenant_id, id).await? else {
        return Ok(None);
    };
    if !playbook.is_active {
        return Err(Error::conflict(
            "the playbook is archived; unarchive it to launch workflows",
        ));
    }
    Ok(Some(PlaybookRef {
        id: playbook.id,
        lifecycle: playbook.lifecycle.as_str().to_owned(),
        definition: playbook.definition,
    }))
}

/// The revision a workflow launched with (for redrives), even if the family
/// moved on.
pub(crate) async fn launched_revision(
    access: &mut impl Access,
    tenant_id: Uuid,
    revision_id: Uuid,
) -> Result<Option<PlaybookRef>> {
    Ok(
        crate::playbooks::find_revision(access, tenant_id, revision_id)
            .await?
            .map(|p| PlaybookRef {
                id: p.id,
                lifecycle: p.lifecycle.as_str().to_owned(),
                definition: p.definition,
            }),
    )
}

/// The newest active playbook of the tenant (current revisions only).
pub(crate) async fn newest_active_playbook(
    access: &mut impl Access,
    tenant_id: Uuid,
) -> Result<Option<Uuid>> {
    let row: Option<(Uuid,)> = on_db!(access, c => sqlx::query_as(
        "SELECT id FROM playbooks WHERE tenant_id = $1 AND is_current = TRUE AND is_active = TRUE \
         ORDER BY created_at DESC, id DESC LIMIT 1",
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
    Ok(crate::workspaces::find_workspace(access, tenant_id, id)
        .await?
        .map(|w| w.name))
}

/// The workspace part of a task context: id, name, slug, repository, memory.
pub(crate) async fn workspace_packet(
    access: &mut impl Access,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<Option<Value>> {
    let Some(row) = crate::workspaces::find_workspace(access, tenant_id, id).await? else {
        return Ok(None);
    };
    let summary = crate::workspaces::workflow_summary(access, tenant_id, id).await?;
    Ok(Some(serde_json::to_value(row.to_api(summary))?))
}
