//! The `/playbooks` routes: create, list, get, revisions, replace, patch,
//! archive, delete impact, delete and permanent delete.

use super::revisions::{create_family, fields_from_create, revise};
use super::rows::{
    PlaybookRow, current_row, delete_family_workflows, find_current, playbook_columns,
    workflow_references,
};
use crate::api::playbooks::{
    ArchivePlaybook, CreatePlaybook, DeletedPlaybook, PatchPlaybook, Playbook,
    PlaybookDeleteImpact, PlaybookSummary,
};
use crate::api::{Page, PageRequest};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Begun, Storage, begin_write};
use crate::store::on_db;
use serde_json::json;
use uuid::Uuid;

impl ControlPlane {
    /// `POST /playbooks`: version 1, active.
    pub async fn create_playbook(
        &self,
        caller: &Caller,
        request: CreatePlaybook,
    ) -> Result<Playbook> {
        let fields = fields_from_create(&request)?;
        let mut write = begin_write!(self, caller, "playbooks.create", request, Storage::Plain);
        let playbook = create_family(&mut write.tx, caller, &fields).await?;
        write.finish(playbook).await
    }

    /// `GET /playbooks`: the current revision of every family, newest family first.
    pub async fn list_playbooks(
        &self,
        caller: &Caller,
        page: PageRequest,
    ) -> Result<Page<PlaybookSummary>> {
        let mut conn = self.store().read().await?;
        let (total,): (i64,) = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT COUNT(*) FROM playbooks WHERE tenant_id = $1 AND is_current = TRUE",
        )
        .bind(caller.tenant_id)
        .fetch_one(c)
        .await)?;
        let rows: Vec<PlaybookRow> = on_db!(&mut conn, c => sqlx::query_as(concat!(
            "SELECT ", playbook_columns!(), " FROM playbooks WHERE tenant_id = $1 AND is_current = TRUE \
             ORDER BY created_at DESC, family_id DESC LIMIT $2 OFFSET $3"
        ))
        .bind(caller.tenant_id)
        .bind(i64::from(page.per_page))
        .bind(page.offset() as i64)
        .fetch_all(c)
        .await)?;
        Ok(Page::new(
            rows.iter().map(PlaybookRow::to_summary).collect(),
            total as u64,
            page,
        ))
    }

    /// `GET /playbooks/:id`: the family's current revision with its definition.
    pub async fn get_playbook(&self, caller: &Caller, id: Uuid) -> Result<Playbook> {
        let mut conn = self.store().read().await?;
        find_current(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("playbook"))
    }

    /// `GET /playbooks/:id/revisions` (beyond the contract): every revision,
    /// newest first.
    pub async fn list_playbook_revisions(
        &self,
        caller: &Caller,
        id: Uuid,
        page: PageRequest,
    ) -> Result<Page<Playbook>> {
        let mut conn = self.store().read().await?;
        let current = find_current(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("playbook"))?;
        let rows: Vec<PlaybookRow> = on_db!(&mut conn, c => sqlx::query_as(concat!(
            "SELECT ", playbook_columns!(), " FROM playbooks WHERE tenant_id = $1 AND family_id = $2 \
             ORDER BY version DESC LIMIT $3 OFFSET $4"
        ))
        .bind(caller.tenant_id)
        .bind(current.family_id)
        .bind(i64::from(page.per_page))
        .bind(page.offset() as i64)
        .fetch_all(c)
        .await)?;
        Ok(Page::new(
            rows.iter().map(PlaybookRow::to_api).collect(),
            current.version as u64,
            page,
        ))
    }

    /// `PUT /playbooks/:id`: a new active revision with exactly these fields.
    pub async fn replace_playbook(
        &self,
        caller: &Caller,
        id: Uuid,
        request: CreatePlaybook,
    ) -> Result<Playbook> {
        let fields = fields_from_create(&request)?;
        let mut write = match self
            .begin_idempotent(
                caller,
                "playbooks.replace",
                request.request_id.as_deref(),
                &(id, &request),
                Storage::Plain,
            )
            .await?
        {
            Begun::Replayed(recorded) => return Ok(recorded),
            Begun::Fresh(write) => write,
        };
        let current = find_current(&mut write.tx, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("playbook"))?;
        let playbook = revise(&mut write.tx, caller, &current, &fields).await?;
        write.finish(playbook).await
    }

    /// `PATCH /playbooks/:id`: a new active revision with the given fields
    /// changed and the rest carried over.
    pub async fn patch_playbook(
        &self,
        caller: &Caller,
        id: Uuid,
        request: PatchPlaybook,
    ) -> Result<Playbook> {
        let mut write = match self
            .begin_idempotent(
                caller,
                "playbooks.patch",
                request.request_id.as_deref(),
                &(id, &request),
                Storage::Plain,
            )
            .await?
        {
            Begun::Replayed(recorded) => return Ok(recorded),
            Begun::Fresh(write) => write,
        };
        let current = find_current(&mut write.tx, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("playbook"))?;
        let merged = CreatePlaybook {
            name: request.name.clone().unwrap_or_else(|| current.name.clone()),
            outcome: request
                .outcome
                .clone()
                .unwrap_or_else(|| current.outcome.clone()),
            definition: request
                .definition
                .clone()
                .unwrap_or_else(|| current.definition.clone()),
            slug: Some(request.slug.clone().unwrap_or_else(|| current.slug.clone())),
            description: Some(
                request
                    .description
                    .clone()
                    .unwrap_or_else(|| current.description.clone()),
            ),
            lifecycle: Some(request.lifecycle.unwrap_or(current.lifecycle)),
            request_id: None,
        };
        let mut fields = fields_from_create(&merged)?;
        fields.provenance = current.provenance.clone();
        let playbook = revise(&mut write.tx, caller, &current, &fields).await?;
        write.finish(playbook).await
    }

    /// `PATCH /playbooks/:id/archive`: archives (is_active false) or
    /// unarchives (is_active true) the current revision. Setting the state it
    /// already has answers the record unchanged.
    pub async fn archive_playbook(
        &self,
        caller: &Caller,
        id: Uuid,
        request: ArchivePlaybook,
    ) -> Result<Playbook> {
        let mut tx = self.store().begin().await?;
        let current = current_row(&mut tx, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("playbook"))?;
        if current.archived == request.archived {
            return Ok(current.to_api());
        }
        let row: PlaybookRow = on_db!(&mut tx, c => sqlx::query_as(concat!(
            "UPDATE playbooks SET archived = $1, is_active = $2, updated_at = $3 WHERE id = $4 RETURNING ",
            playbook_columns!()
        ))
        .bind(request.archived)
        .bind(!request.archived)
        .bind(self.now().as_datetime())
        .bind(current.id)
        .fetch_one(c)
        .await)?;
        let event_type = if request.archived {
            "playbook.archived"
        } else {
            "playbook.unarchived"
        };
        events::record(
            &mut tx,
            caller,
            caller.tenant_id,
            NewEvent::new(
                event_type,
                "playbook",
                row.id,
                json!({ "family_id": row.family_id }),
            ),
        )
        .await?;
        tx.commit().await?;
        Ok(row.to_api())
    }

    /// `GET /playbooks/:id/delete-impact`.
    pub async fn playbook_delete_impact(
        &self,
        caller: &Caller,
        id: Uuid,
    ) -> Result<PlaybookDeleteImpact> {
        let mut conn = self.store().read().await?;
        let current = find_current(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("playbook"))?;
        let workflows = workflow_references(&mut conn, caller.tenant_id, current.family_id).await?;
        Ok(PlaybookDeleteImpact {
            playbook_id: current.id,
            family_id: current.family_id,
            name: current.name,
            revisions: i64::from(current.version),
            can_delete: workflows.total == 0,
            workflows,
        })
    }

    /// `DELETE /playbooks/:id`: removes the family, or answers 409 while any
    /// workflow references one of its revisions.
    pub async fn delete_playbook(&self, caller: &Caller, id: Uuid) -> Result<DeletedPlaybook> {
        self.remove_playbook(caller, id, false).await
    }

    /// `DELETE /playbooks/:id/permanent`: removes the family and the
    /// workflows that reference it, and says what it removed.
    pub async fn delete_playbook_permanently(
        &self,
        caller: &Caller,
        id: Uuid,
    ) -> Result<DeletedPlaybook> {
        self.remove_playbook(caller, id, true).await
    }

    pub(crate) async fn remove_playbook(
        &self,
        caller: &Caller,
        id: Uuid,
        force: bool,
    ) -> Result<DeletedPlaybook> {
        let mut tx = self.store().begin().await?;
        let current = find_current(&mut tx, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("playbook"))?;
        let references = workflow_references(&mut tx, caller.tenant_id, current.family_id).await?;
        let workflows_deleted = if force {
            delete_family_workflows(&mut tx, caller.tenant_id, current.family_id).await?
        } else if references.total > 0 {
            return Err(Error::Conflict {
                message: format!(
                    "{} workflow(s) ({} active) still reference this playbook",
                    references.total, references.active
                ),
                hint: Some(
                    "archive the playbook instead, or use DELETE /playbooks/:id/permanent to remove it with its workflows"
                        .into(),
                ),
            });
        } else {
            0
        };
        let revisions = on_db!(&mut tx, c => sqlx::query("DELETE FROM playbooks WHERE tenant_id = $1 AND family_id = $2")
            .bind(caller.tenant_id)
            .bind(current.family_id)
            .execute(c).await.map(|r| r.rows_affected()))?;
        events::record(
            &mut tx,
            caller,
            caller.tenant_id,
            NewEvent::new(
                "playbook.deleted",
                "playbook",
                current.family_id,
                json!({ "permanent": force, "revisions_deleted": revisions, "workflows_deleted": workflows_deleted }),
            ),
        )
        .await?;
        tx.commit().await?;
        Ok(DeletedPlaybook {
            id: current.family_id,
            deleted: true,
            revisions_deleted: revisions as i64,
            workflows_deleted,
        })
    }
}
