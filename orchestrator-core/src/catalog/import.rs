//! Importing a catalog playbook: the preview (conflicts and allowed
//! actions) and the import with its conflict decisions.

use super::bundle::{Catalog, ItemFile, Meta, PlaybookFile};
use super::library::{free_slug_and_name, local_match};
use crate::api::catalog::{
    CatalogArtifactType, CatalogPlaybookRef, CatalogProvenance, ImportAction, ImportConflict,
    ImportDecision, ImportPreview, ImportRequest, ImportResult, ImportedPlaybook, LocalMatch,
};
use crate::api::playbooks::Provenance;
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Begun, Storage};
use crate::playbooks::{self, RevisionFields};
use crate::store::{Access, Tx, on_db};
use serde_json::{Map, json};
use sqlx::types::Json;
use std::collections::HashMap;
use uuid::Uuid;

/// Creates or overrides one specialist or skill; answers its local id.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn import_item(
    tx: &mut Tx,
    tenant_id: Uuid,
    kind: CatalogArtifactType,
    item: &ItemFile,
    action: ImportAction,
    existing: Option<&LocalMatch>,
    meta: &Meta,
) -> Result<Uuid> {
    let now = tx.now().as_datetime();
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
    pub(crate) async fn conflicts(
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
        .bind(self.now().as_datetime())
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
}
