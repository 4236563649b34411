//! Playbooks: revision families of authored process definitions.
//!
//! Storage model (migration 0002): one row per revision. `family_id` is the
//! id of revision 1; `version` counts from 1 within the family; exactly one
//! row per family is `is_current` (the newest). `is_active` is true on the
//! current revision unless the family is archived, false on older revisions.
//! PATCH and PUT insert a new current revision (history is never updated);
//! archive flips `archived`/`is_active` on the current revision only. Slugs
//! and names are unique among the current revisions of a tenant.
//!
//! Every route accepts the family id or any revision id and works on the
//! family's current revision. Editing an archived playbook is a conflict
//! (unarchive it first).
//!
//! For other modules: [`find_revision`] reads one revision by id (what a
//! workflow stores), [`find_current`] the current revision of the family any
//! id belongs to. [`workflow_references`] and [`delete_family_workflows`] are
//! the hooks the workflows module fills in.

use crate::api::playbooks::{
    ArchivePlaybook, CreatePlaybook, DeletedPlaybook, Lifecycle, PatchPlaybook, Playbook,
    PlaybookDeleteImpact, PlaybookSummary, Provenance, WorkflowReferences,
};
use crate::api::{Page, PageRequest, Timestamp};
use crate::auth::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Begun, Storage, begin_write};
use crate::store::{Access, Tx, is_unique_violation, on_db};
use crate::tenants::{slugify, validate_slug};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sqlx::types::Json;
use std::collections::HashSet;
use uuid::Uuid;

#[derive(Debug, Clone, sqlx::FromRow)]
struct PlaybookRow {
    id: Uuid,
    #[allow(dead_code)]
    tenant_id: Uuid,
    family_id: Uuid,
    version: i32,
    is_active: bool,
    archived: bool,
    slug: String,
    name: String,
    description: String,
    outcome: String,
    lifecycle: String,
    definition: Json<Value>,
    source_repository: Option<String>,
    catalog_id: Option<String>,
    catalog_version: Option<String>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

macro_rules! playbook_columns {
    () => {
        "id, tenant_id, family_id, version, is_active, archived, slug, name, description, outcome, \
         lifecycle, definition, source_repository, catalog_id, catalog_version, created_at, updated_at"
    };
}

impl PlaybookRow {
    fn provenance(&self) -> Option<Provenance> {
        self.source_repository
            .as_ref()
            .map(|source_repository| Provenance {
                source_repository: source_repository.clone(),
                catalog_id: self.catalog_id.clone(),
                catalog_version: self.catalog_version.clone(),
            })
    }

    fn lifecycle(&self) -> Lifecycle {
        self.lifecycle.parse().unwrap_or_default()
    }

    fn to_api(&self) -> Playbook {
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

    fn to_summary(&self) -> PlaybookSummary {
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

async fn current_row(
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

/// Removes the workflows (and their stages, work items, activations and
/// tasks, by cascade) of a family before a permanent delete; answers how
/// many it removed.
pub(crate) async fn delete_family_workflows(
    tx: &mut Tx,
    tenant_id: Uuid,
    family_id: Uuid,
) -> Result<i64> {
    let removed = on_db!(tx, c => sqlx::query(
        "DELETE FROM workflows WHERE tenant_id = $1 \
         AND playbook_id IN (SELECT id FROM playbooks WHERE family_id = $2)",
    )
    .bind(tenant_id)
    .bind(family_id)
    .execute(c).await.map(|r| r.rows_affected()))?;
    Ok(removed as i64)
}

/// The fields of a revision to insert.
pub(crate) struct RevisionFields {
    pub name: String,
    pub slug: String,
    pub description: String,
    pub outcome: String,
    pub lifecycle: Lifecycle,
    pub definition: Value,
    pub provenance: Option<Provenance>,
}

/// Checks a playbook definition: an object whose `stages` (at least one) and
/// optional `roles` are arrays of objects with unique non-empty `name`s.
pub fn validate_definition(definition: &Value) -> Result<()> {
    let fail = |message: &str| Err(Error::invalid_field("definition", message.to_owned()));
    let Some(object) = definition.as_object() else {
        return fail("must be an object with `stages` (and optional `roles`)");
    };
    for (key, required) in [("stages", true), ("roles", false)] {
        let list = match object.get(key) {
            None | Some(Value::Null) if !required => continue,
            None | Some(Value::Null) => return fail("needs `stages`: at least one stage"),
            Some(Value::Array(list)) => list,
            Some(_) => return fail(&format!("`{key}` must be an array of objects with `name`")),
        };
        if required && list.is_empty() {
            return fail("needs `stages`: at least one stage");
        }
        let mut seen = HashSet::new();
        for item in list {
            let name = item
                .get("name")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|n| !n.is_empty());
            let Some(name) = name else {
                return fail(&format!(
                    "every entry of `{key}` needs a non-empty string `name`"
                ));
            };
            if !seen.insert(name.to_owned()) {
                return fail(&format!("`{key}` names must be unique; `{name}` repeats"));
            }
        }
    }
    Ok(())
}

fn validate_text(field: &str, value: &str, max: usize, required: bool) -> Result<()> {
    if required && value.trim().is_empty() {
        return Err(Error::invalid_field(field, "must not be empty"));
    }
    if value.len() > max {
        return Err(Error::invalid_field(
            field,
            format!("must be at most {max} characters"),
        ));
    }
    Ok(())
}

/// Validates and normalizes create/PUT fields.
fn fields_from_create(request: &CreatePlaybook) -> Result<RevisionFields> {
    let name = request.name.trim().to_owned();
    validate_text("name", &name, 200, true)?;
    validate_text("outcome", &request.outcome, 10_000, true)?;
    let description = request.description.clone().unwrap_or_default();
    validate_text("description", &description, 10_000, false)?;
    let slug = match &request.slug {
        Some(slug) => {
            validate_slug(slug)?;
            slug.clone()
        }
        None => slugify(&name).ok_or_else(|| {
            Error::invalid_field("slug", "cannot be derived from the name; give one")
        })?,
    };
    validate_definition(&request.definition)?;
    Ok(RevisionFields {
        name,
        slug,
        description,
        outcome: request.outcome.clone(),
        lifecycle: request.lifecycle.unwrap_or_default(),
        definition: request.definition.clone(),
        provenance: None,
    })
}

/// Refuses a slug or name another family of the tenant already uses.
async fn check_unique(
    access: &mut impl Access,
    tenant_id: Uuid,
    family_id: Uuid,
    fields: &RevisionFields,
) -> Result<()> {
    let taken: Option<(String, String)> = on_db!(access, c => sqlx::query_as(
        "SELECT slug, name FROM playbooks WHERE tenant_id = $1 AND is_current = TRUE \
         AND family_id <> $2 AND (slug = $3 OR name = $4) LIMIT 1",
    )
    .bind(tenant_id)
    .bind(family_id)
    .bind(&fields.slug)
    .bind(&fields.name)
    .fetch_optional(c)
    .await)?;
    if let Some((slug, _)) = taken {
        let what = if slug == fields.slug {
            format!("slug `{}`", fields.slug)
        } else {
            format!("name `{}`", fields.name)
        };
        return Err(Error::Conflict {
            message: format!("another playbook already uses the {what}"),
            hint: Some("choose another slug and name, or update that playbook".into()),
        });
    }
    Ok(())
}

/// Inserts revision `version` of `family_id` (a new family when `version`
/// is 1 and `family_id` is the new id) as the current one, demoting the
/// previous current revision.
pub(crate) async fn insert_revision(
    tx: &mut Tx,
    tenant_id: Uuid,
    family_id: Uuid,
    version: i32,
    created_at: DateTime<Utc>,
    fields: &RevisionFields,
) -> Result<Playbook> {
    check_unique(tx, tenant_id, family_id, fields).await?;
    on_db!(tx, c => sqlx::query(
        "UPDATE playbooks SET is_current = FALSE, is_active = FALSE WHERE family_id = $1 AND is_current = TRUE",
    )
    .bind(family_id)
    .execute(c).await.map(|r| r.rows_affected()))?;
    let id = if version == 1 {
        family_id
    } else {
        Uuid::new_v4()
    };
    let now = Timestamp::now().as_datetime();
    let provenance = fields.provenance.as_ref();
    let inserted = on_db!(tx, c => sqlx::query_as::<_, PlaybookRow>(concat!(
        "INSERT INTO playbooks (id, tenant_id, family_id, version, is_current, is_active, archived, slug, name, \
         description, outcome, lifecycle, definition, source_repository, catalog_id, catalog_version, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, TRUE, TRUE, FALSE, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING ",
        playbook_columns!()
    ))
    .bind(id)
    .bind(tenant_id)
    .bind(family_id)
    .bind(version)
    .bind(&fields.slug)
    .bind(&fields.name)
    .bind(&fields.description)
    .bind(&fields.outcome)
    .bind(fields.lifecycle.as_str())
    .bind(Json(&fields.definition))
    .bind(provenance.map(|p| p.source_repository.clone()))
    .bind(provenance.and_then(|p| p.catalog_id.clone()))
    .bind(provenance.and_then(|p| p.catalog_version.clone()))
    .bind(created_at.min(now))
    .bind(now)
    .fetch_one(c)
    .await);
    match inserted {
        Ok(row) => Ok(row.to_api()),
        Err(e) if is_unique_violation(&e) => Err(Error::conflict(
            "another playbook already uses this slug or name (or the playbook changed concurrently)",
        )),
        Err(e) => Err(e.into()),
    }
}

/// A new family (revision 1) inside `tx`; for create and catalog import.
pub(crate) async fn create_family(
    tx: &mut Tx,
    caller: &Caller,
    fields: &RevisionFields,
) -> Result<Playbook> {
    let family_id = Uuid::new_v4();
    let now = Timestamp::now().as_datetime();
    let playbook = insert_revision(tx, caller.tenant_id, family_id, 1, now, fields).await?;
    events::record(
        tx,
        caller,
        caller.tenant_id,
        NewEvent::new(
            "playbook.created",
            "playbook",
            playbook.id,
            json!({ "family_id": family_id, "version": 1, "slug": playbook.slug }),
        ),
    )
    .await?;
    Ok(playbook)
}

/// A new revision of `current`'s family inside `tx`; for PATCH, PUT and
/// catalog import with `override_existing`.
pub(crate) async fn revise(
    tx: &mut Tx,
    caller: &Caller,
    current: &Playbook,
    fields: &RevisionFields,
) -> Result<Playbook> {
    if current.archived {
        return Err(Error::Conflict {
            message: "the playbook is archived".into(),
            hint: Some(
                "unarchive it (PATCH /playbooks/:id/archive with archived false) first".into(),
            ),
        });
    }
    let playbook = insert_revision(
        tx,
        caller.tenant_id,
        current.family_id,
        current.version + 1,
        current.created_at.as_datetime(),
        fields,
    )
    .await?;
    events::record(
        tx,
        caller,
        caller.tenant_id,
        NewEvent::new(
            "playbook.revised",
            "playbook",
            playbook.id,
            json!({ "family_id": playbook.family_id, "version": playbook.version, "previous_id": current.id }),
        ),
    )
    .await?;
    Ok(playbook)
}

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
        .bind(Timestamp::now().as_datetime())
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

    async fn remove_playbook(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_need_unique_named_stages() {
        assert!(validate_definition(&json!({"stages": [{"name": "plan"}]})).is_ok());
        assert!(validate_definition(&json!({"stages": []})).is_err());
        assert!(validate_definition(&json!({"roles": [{"name": "dev"}]})).is_err());
        assert!(validate_definition(&json!({"stages": [{"name": "a"}, {"name": "a"}]})).is_err());
        assert!(
            validate_definition(&json!({"stages": [{"name": "a"}], "roles": [{"x": 1}]})).is_err()
        );
        assert!(validate_definition(&json!([1])).is_err());
    }
}
