//! Tenants: the isolation boundary. Every row carries a tenant id and every
//! query filters by it; another tenant's record is simply not found.
//!
//! A fresh installation has one tenant with the fixed id
//! [`DEFAULT_TENANT_ID`]. Service callers create more, each with a first
//! admin key returned once.

use crate::api::{
    CreateTenant, CreatedApiKey, CreatedTenant, DEFAULT_TENANT_ID, Page, PageRequest, Scope, Tenant,
};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Storage, begin_write};
use crate::keys::{self, NewKey};
use crate::store::{Tx, is_unique_violation, on_db};
use chrono::{DateTime, Utc};
use serde_json::json;
use uuid::Uuid;

#[derive(sqlx::FromRow)]
struct TenantRow {
    id: Uuid,
    name: String,
    slug: String,
    created_at: DateTime<Utc>,
}

impl From<TenantRow> for Tenant {
    fn from(row: TenantRow) -> Self {
        Tenant {
            id: row.id,
            name: row.name,
            slug: row.slug,
            created_at: row.created_at.into(),
        }
    }
}

/// Creates the default tenant unless it exists.
pub(crate) async fn ensure_default(tx: &mut Tx) -> Result<()> {
    let now = tx.now().as_datetime();
    on_db!(tx, c => sqlx::query(
        "INSERT INTO tenants (id, name, slug, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING",
    )
    .bind(DEFAULT_TENANT_ID)
    .bind("Default")
    .bind("default")
    .bind(now)
    .execute(c).await.map(|r| r.rows_affected()))?;
    Ok(())
}

impl ControlPlane {
    /// `POST /tenants` (service scope): a new tenant and its first admin key.
    pub async fn create_tenant(
        &self,
        caller: &Caller,
        request: CreateTenant,
    ) -> Result<CreatedTenant> {
        caller.require(Scope::Service)?;
        let name = request.name.trim();
        if name.is_empty() || name.len() > 200 {
            return Err(Error::invalid_field("name", "must be 1 to 200 characters"));
        }
        let slug = match &request.slug {
            Some(slug) => {
                validate_slug(slug)?;
                slug.clone()
            }
            None => slugify(name).ok_or_else(|| {
                Error::invalid_field("slug", "cannot be derived from the name; give one")
            })?,
        };
        let mut write = begin_write!(self, caller, "tenants.create", request, Storage::Encrypted);
        let id = Uuid::new_v4();
        let inserted = on_db!(&mut write.tx, c => sqlx::query_as::<_, TenantRow>(
            "INSERT INTO tenants (id, name, slug, created_at) VALUES ($1, $2, $3, $4) RETURNING id, name, slug, created_at",
        )
        .bind(id)
        .bind(name)
        .bind(&slug)
        .bind(self.now().as_datetime())
        .fetch_one(c)
        .await);
        let tenant: Tenant = match inserted {
            Ok(row) => row.into(),
            Err(e) if is_unique_violation(&e) => {
                return Err(Error::conflict(format!(
                    "a tenant with slug `{slug}` already exists"
                )));
            }
            Err(e) => return Err(e.into()),
        };
        let generated = keys::generate(Scope::Admin);
        let key = keys::insert(
            &mut write.tx,
            &NewKey {
                tenant_id: id,
                name: "first admin key",
                scope: Scope::Admin,
                owner_type: "user",
                owner_id: None,
                expires_at: None,
            },
            &generated,
        )
        .await?;
        events::record(
            &mut write.tx,
            caller,
            id,
            NewEvent::new("tenant.created", "tenant", id, json!({ "slug": slug })),
        )
        .await?;
        let created = CreatedTenant {
            tenant,
            admin_key: CreatedApiKey {
                key: key.to_api()?,
                api_key: generated.raw,
            },
        };
        write.finish(created).await
    }

    /// Lists tenants (service scope), newest first.
    pub async fn list_tenants(&self, caller: &Caller, page: PageRequest) -> Result<Page<Tenant>> {
        caller.require(Scope::Service)?;
        let mut conn = self.store().read().await?;
        let (total,): (i64,) = on_db!(&mut conn, c => sqlx::query_as("SELECT COUNT(*) FROM tenants").fetch_one(c).await)?;
        let rows: Vec<TenantRow> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT id, name, slug, created_at FROM tenants ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2",
        )
        .bind(i64::from(page.per_page))
        .bind(page.offset() as i64)
        .fetch_all(c)
        .await)?;
        Ok(Page::new(
            rows.into_iter().map(Tenant::from).collect(),
            total as u64,
            page,
        ))
    }
}

/// Slugs are lower-case letters, digits and single dashes, 1 to 63 long.
pub(crate) fn validate_slug(slug: &str) -> Result<()> {
    let ok = !slug.is_empty()
        && slug.len() <= 63
        && slug
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !slug.starts_with('-')
        && !slug.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(Error::invalid_field(
            "slug",
            "use 1 to 63 lower-case letters, digits and dashes",
        ))
    }
}

/// A slug made from a display name, or `None` if nothing usable remains.
pub(crate) fn slugify(name: &str) -> Option<String> {
    let mut slug = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    let slug: String = slug.trim_end_matches('-').chars().take(63).collect();
    let slug = slug.trim_end_matches('-').to_owned();
    (!slug.is_empty()).then_some(slug)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert_eq!(slugify("Acme Corp, Inc.").as_deref(), Some("acme-corp-inc"));
        assert_eq!(slugify("!!!"), None);
        assert!(validate_slug("acme-1").is_ok());
        assert!(validate_slug("Acme").is_err());
        assert!(validate_slug("-acme").is_err());
    }
}
