//! Writing revisions: validation of definitions and text, slug/name
//! uniqueness, and the insert of a family's first or next revision.

use super::rows::{PlaybookRow, playbook_columns};
use crate::api::Timestamp;
use crate::api::playbooks::{CreatePlaybook, Lifecycle, Playbook, Provenance};
use crate::caller::Caller;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::store::{Access, Tx, is_unique_violation, on_db};
use crate::tenants::{slugify, validate_slug};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sqlx::types::Json;
use std::collections::HashSet;
use uuid::Uuid;

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

pub(crate) fn validate_text(field: &str, value: &str, max: usize, required: bool) -> Result<()> {
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
pub(crate) fn fields_from_create(request: &CreatePlaybook) -> Result<RevisionFields> {
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
pub(crate) async fn check_unique(
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
