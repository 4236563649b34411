//! Writing revisions: validation of definitions and text, slug/name
//! uniqueness, and the insert of a family's first or next revision.

use super::rows::{PlaybookRow, playbook_columns};
use crate::api::playbooks::{CreatePlaybook, Lifecycle, Playbook, PlaybookDefinition, Provenance};
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

/// Checks a playbook definition against [`PlaybookDefinition`] (a wrong
/// shape or an unknown key is 422 naming its path, e.g.
/// `definition.stages[0].gaol`), then its rules (400): at least one stage,
/// unique non-empty stage and role names, and every stage's `role` one of
/// the `roles`. A default `retry_policy` is held to the ranges of a task's
/// (422 naming `definition.retry_policy.<field>`), so a policy that would
/// be ignored at task creation is refused when it is saved; so are default
/// flow-limit keys outside 1 to 200 characters (422 naming
/// `definition.concurrency_key` / `definition.rate_limit_key`).
pub fn validate_definition(definition: &Value) -> Result<()> {
    if !definition.is_object() {
        return Err(Error::schema_field(
            "definition",
            "must be an object with `stages` (and optional `roles`)",
        ));
    }
    let typed: PlaybookDefinition = serde_path_to_error::deserialize(definition).map_err(|e| {
        let mut path = String::from("definition");
        for segment in e.path().iter() {
            match segment {
                serde_path_to_error::Segment::Seq { index } => path.push_str(&format!("[{index}]")),
                serde_path_to_error::Segment::Map { key } => {
                    path.push('.');
                    path.push_str(key);
                }
                serde_path_to_error::Segment::Enum { variant } => {
                    path.push('.');
                    path.push_str(variant);
                }
                serde_path_to_error::Segment::Unknown => {}
            }
        }
        let message = e.inner().to_string();
        // serde names an unknown or missing key in its message; the path is
        // then its container, and the key belongs at its end.
        if let Some(key) = backticked(&message)
            && (message.starts_with("unknown field") || message.starts_with("missing field"))
            && !path.ends_with(&format!(".{key}"))
        {
            path.push('.');
            path.push_str(key);
        }
        Error::schema_field(&path, message)
    })?;
    if let Some(policy) = &typed.retry_policy {
        crate::tasks::retry::normalise("definition.retry_policy", policy)?;
    }
    for (field, key) in [
        ("definition.concurrency_key", &typed.concurrency_key),
        ("definition.rate_limit_key", &typed.rate_limit_key),
    ] {
        if let Some(key) = key {
            crate::limits::check_key(field, key)?;
        }
    }
    if typed.stages.is_empty() {
        return Err(Error::invalid_field(
            "definition.stages",
            "needs at least one stage",
        ));
    }
    let roles = typed.roles.as_deref().unwrap_or_default();
    let role_names = unique_names("roles", roles.iter().map(|r| r.name.as_str()))?;
    unique_names("stages", typed.stages.iter().map(|s| s.name.as_str()))?;
    for (i, stage) in typed.stages.iter().enumerate() {
        if let Some(role) = &stage.role
            && !role_names.contains(role.trim())
        {
            let known: Vec<&str> = roles.iter().map(|r| r.name.trim()).collect();
            return Err(Error::invalid_field(
                &format!("definition.stages[{i}].role"),
                format!(
                    "`{role}` is not one of the definition's roles ({})",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
        }
    }
    Ok(())
}

/// The trimmed names of a definition's `key` list: non-empty and unique.
fn unique_names<'a>(key: &str, names: impl Iterator<Item = &'a str>) -> Result<HashSet<String>> {
    let mut seen = HashSet::new();
    for (i, name) in names.enumerate() {
        let name = name.trim();
        if name.is_empty() {
            return Err(Error::invalid_field(
                &format!("definition.{key}[{i}].name"),
                "must not be empty",
            ));
        }
        if !seen.insert(name.to_owned()) {
            return Err(Error::invalid_field(
                &format!("definition.{key}[{i}].name"),
                format!("names must be unique; `{name}` repeats"),
            ));
        }
    }
    Ok(seen)
}

/// The first `backticked` word of a serde message.
fn backticked(message: &str) -> Option<&str> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(&message[start..start + len])
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
    let now = tx.now().as_datetime();
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
    let now = tx.now().as_datetime();
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
