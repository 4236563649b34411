//! The tenant-local library that imports fill: specialists and skills, how
//! a catalog item matches a local one, and free names for copies.

use crate::api::catalog::{CatalogArtifactType, LibraryItem, LocalMatch};
use crate::api::playbooks::Provenance;
use crate::api::{Page, PageRequest};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::store::StoredJson;
use crate::store::{Access, on_db};
use chrono::{DateTime, Utc};
use uuid::Uuid;

#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct LibraryRow {
    pub id: Uuid,
    pub slug: String,
    pub name: String,
    pub description: String,
    pub definition: StoredJson,
    pub source_repository: Option<String>,
    pub catalog_id: Option<String>,
    pub catalog_version: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl LibraryRow {
    pub(crate) fn to_api(&self) -> LibraryItem {
        LibraryItem {
            id: self.id,
            slug: self.slug.clone(),
            name: self.name.clone(),
            description: self.description.clone(),
            definition: self.definition.0.clone(),
            provenance: self.source_repository.as_ref().map(|s| Provenance {
                source_repository: s.clone(),
                catalog_id: self.catalog_id.clone(),
                catalog_version: self.catalog_version.clone(),
            }),
            created_at: self.created_at.into(),
            updated_at: self.updated_at.into(),
        }
    }
}

macro_rules! library_columns {
    () => {
        "id, slug, name, description, definition, source_repository, catalog_id, catalog_version, created_at, updated_at"
    };
}

/// The local record of `kind` whose slug or name matches.
pub(crate) async fn local_match(
    access: &mut impl Access,
    tenant_id: Uuid,
    kind: CatalogArtifactType,
    slug: &str,
    name: &str,
) -> Result<Option<LocalMatch>> {
    let found: Option<(Uuid, String, Option<i32>)> = match kind {
        CatalogArtifactType::Playbook => on_db!(access, c => sqlx::query_as(
            "SELECT family_id, name, version FROM playbooks WHERE tenant_id = $1 AND is_current = TRUE \
             AND (slug = $2 OR name = $3) ORDER BY (slug = $2) DESC LIMIT 1",
        ).bind(tenant_id).bind(slug).bind(name).fetch_optional(c).await)?,
        CatalogArtifactType::Specialist => on_db!(access, c => sqlx::query_as(
            "SELECT id, name, NULL FROM specialists WHERE tenant_id = $1 AND (slug = $2 OR name = $3) \
             ORDER BY (slug = $2) DESC LIMIT 1",
        ).bind(tenant_id).bind(slug).bind(name).fetch_optional(c).await)?,
        CatalogArtifactType::Skill => on_db!(access, c => sqlx::query_as(
            "SELECT id, name, NULL FROM skills WHERE tenant_id = $1 AND (slug = $2 OR name = $3) \
             ORDER BY (slug = $2) DESC LIMIT 1",
        ).bind(tenant_id).bind(slug).bind(name).fetch_optional(c).await)?,
    };
    Ok(found.map(|(id, name, version)| LocalMatch { id, name, version }))
}

/// A slug and name not yet used by any local record of `kind`.
pub(crate) async fn free_slug_and_name(
    access: &mut impl Access,
    tenant_id: Uuid,
    kind: CatalogArtifactType,
    slug: &str,
    name: &str,
) -> Result<(String, String)> {
    for n in 1..1000 {
        let (s, nm) = if n == 1 {
            (slug.to_owned(), name.to_owned())
        } else {
            let suffix = format!("-{n}");
            let base: String = slug.chars().take(63 - suffix.len()).collect();
            (
                format!("{}{suffix}", base.trim_end_matches('-')),
                format!("{name} ({n})"),
            )
        };
        if local_match(access, tenant_id, kind, &s, &nm)
            .await?
            .is_none()
        {
            return Ok((s, nm));
        }
    }
    Err(Error::conflict("no free slug for the imported copy"))
}

impl ControlPlane {
    /// `GET /specialists` or `GET /skills` (beyond the contract): the
    /// tenant's local records, by name.
    pub async fn list_library(
        &self,
        caller: &Caller,
        kind: CatalogArtifactType,
        page: PageRequest,
    ) -> Result<Page<LibraryItem>> {
        let mut conn = self.store().read().await?;
        let (total, rows): ((i64,), Vec<LibraryRow>) = match kind {
            CatalogArtifactType::Skill => (
                on_db!(&mut conn, c => sqlx::query_as("SELECT COUNT(*) FROM skills WHERE tenant_id = $1")
                    .bind(caller.tenant_id).fetch_one(c).await)?,
                on_db!(&mut conn, c => sqlx::query_as(concat!("SELECT ", library_columns!(),
                    " FROM skills WHERE tenant_id = $1 ORDER BY name, id LIMIT $2 OFFSET $3"))
                    .bind(caller.tenant_id).bind(i64::from(page.per_page)).bind(page.offset() as i64)
                    .fetch_all(c).await)?,
            ),
            _ => (
                on_db!(&mut conn, c => sqlx::query_as("SELECT COUNT(*) FROM specialists WHERE tenant_id = $1")
                    .bind(caller.tenant_id).fetch_one(c).await)?,
                on_db!(&mut conn, c => sqlx::query_as(concat!("SELECT ", library_columns!(),
                    " FROM specialists WHERE tenant_id = $1 ORDER BY name, id LIMIT $2 OFFSET $3"))
                    .bind(caller.tenant_id).bind(i64::from(page.per_page)).bind(page.offset() as i64)
                    .fetch_all(c).await)?,
            ),
        };
        Ok(Page::new(
            rows.iter().map(LibraryRow::to_api).collect(),
            total.0 as u64,
            page,
        ))
    }
}
