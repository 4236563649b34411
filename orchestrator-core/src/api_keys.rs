//! The `/api-keys` resource: issuing, listing and revoking keys.
//!
//! Keys can expire and be revoked; revocation takes effect on the next
//! request on this replica and within the credential cache's lifetime on
//! others. The key format and rows live in [`crate::keys`].

use crate::api::{ApiKey, CreateApiKey, CreatedApiKey, Page, PageRequest};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Storage, begin_write};
use crate::keys::{self, KeyRow, NewKey};
use crate::store::on_db;
use serde_json::json;
use uuid::Uuid;

impl ControlPlane {
    /// Issues a new key in the caller's tenant. A caller can only issue keys
    /// of its own scope or lower.
    pub async fn create_api_key(
        &self,
        caller: &Caller,
        request: CreateApiKey,
    ) -> Result<CreatedApiKey> {
        if !caller.scope.satisfies(request.scope) {
            return Err(Error::forbidden(format!(
                "a {} key cannot issue {} keys",
                caller.scope, request.scope
            )));
        }
        let name = request
            .name
            .clone()
            .unwrap_or_else(|| format!("{} key", request.scope));
        validate_name(&name)?;
        if let Some(owner_type) = &request.owner_type {
            validate_owner_type(owner_type)?;
        }
        if request.expires_at.is_some_and(|at| at <= self.now()) {
            return Err(Error::invalid_field("expires_at", "must be in the future"));
        }
        let mut write = begin_write!(self, caller, "api_keys.create", request, Storage::Encrypted);
        let generated = keys::generate(request.scope);
        let new = NewKey {
            tenant_id: caller.tenant_id,
            name: &name,
            scope: request.scope,
            owner_type: request
                .owner_type
                .as_deref()
                .unwrap_or(request.scope.default_owner_type()),
            owner_id: request.owner_id,
            expires_at: request.expires_at,
        };
        let row = keys::insert(&mut write.tx, &new, &generated).await?;
        events::record(
            &mut write.tx,
            caller,
            caller.tenant_id,
            NewEvent::new(
                "api_key.created",
                "api_key",
                row.id,
                json!({ "scope": row.scope, "name": row.name }),
            ),
        )
        .await?;
        let created = CreatedApiKey {
            key: row.to_api()?,
            api_key: generated.raw,
        };
        write.finish(created).await
    }

    /// Lists the caller's tenant's keys, newest first.
    pub async fn list_api_keys(&self, caller: &Caller, page: PageRequest) -> Result<Page<ApiKey>> {
        let mut conn = self.store().read().await?;
        let (total,): (i64,) = on_db!(&mut conn, c => sqlx::query_as("SELECT COUNT(*) FROM api_keys WHERE tenant_id = $1")
            .bind(caller.tenant_id)
            .fetch_one(c)
            .await)?;
        let rows: Vec<KeyRow> = on_db!(&mut conn, c => sqlx::query_as(concat!(
        "SELECT ", keys::key_columns!(), " FROM api_keys WHERE tenant_id = $1 \
             ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3"
    ))
        .bind(caller.tenant_id)
        .bind(i64::from(page.per_page))
        .bind(page.offset() as i64)
        .fetch_all(c)
        .await)?;
        let items = rows
            .iter()
            .map(KeyRow::to_api)
            .collect::<Result<Vec<_>>>()?;
        Ok(Page::new(items, total as u64, page))
    }

    /// Revokes a key of the caller's tenant. Revoking a revoked key answers
    /// the key as it is. A caller cannot revoke keys of a higher scope.
    pub async fn revoke_api_key(&self, caller: &Caller, id: Uuid) -> Result<ApiKey> {
        let mut tx = self.store().begin().await?;
        let row = keys::find_by_id(&mut tx, id)
            .await?
            .filter(|row| row.tenant_id == caller.tenant_id)
            .ok_or(Error::not_found("api key"))?;
        if !caller.scope.satisfies(row.scope()?) {
            return Err(Error::forbidden(format!(
                "a {} key cannot revoke a {} key",
                caller.scope, row.scope
            )));
        }
        if row.revoked_at.is_some() {
            return row.to_api();
        }
        let now = self.now().as_datetime();
        let row: KeyRow = on_db!(&mut tx, c => sqlx::query_as(concat!(
        "UPDATE api_keys SET revoked_at = $1 WHERE id = $2 RETURNING ", keys::key_columns!(), ""
    ))
        .bind(now)
        .bind(id)
        .fetch_one(c)
        .await)?;
        // Sessions minted from the key die with it.
        on_db!(&mut tx, c => sqlx::query("UPDATE refresh_sessions SET revoked_at = $1 WHERE api_key_id = $2 AND revoked_at IS NULL")
            .bind(now)
            .bind(id)
            .execute(c).await.map(|r| r.rows_affected()))?;
        events::record(
            &mut tx,
            caller,
            caller.tenant_id,
            NewEvent::new(
                "api_key.revoked",
                "api_key",
                id,
                json!({ "scope": row.scope }),
            ),
        )
        .await?;
        tx.commit().await?;
        self.forget_credential(id);
        row.to_api()
    }
}

fn validate_name(name: &str) -> Result<()> {
    if name.trim().is_empty() || name.len() > 200 {
        return Err(Error::invalid_field("name", "must be 1 to 200 characters"));
    }
    Ok(())
}

fn validate_owner_type(owner_type: &str) -> Result<()> {
    let ok = !owner_type.is_empty()
        && owner_type.len() <= 40
        && owner_type
            .chars()
            .all(|c| c.is_ascii_lowercase() || c == '_');
    if !ok {
        return Err(Error::invalid_field(
            "owner_type",
            "must be a short lower-case word such as user, agent or worker",
        ));
    }
    Ok(())
}
