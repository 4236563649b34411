//! API key material: the value's format, its stored form and its rows.
//!
//! A key reads `orch_<scope>_<32 base62 characters>`. Only its SHA-256 is
//! stored (keys are random, so a slow hash adds nothing), with a short display
//! prefix. This module knows nothing of callers or of the control plane, so
//! everything that checks or issues keys (authentication, start-up, tenants,
//! agents, the `/api-keys` routes in [`crate::api_keys`]) can build on it.

use crate::api::{ApiKey, Scope, Timestamp};
use crate::error::{Error, Result};
use crate::secrets::{random_base62, sha256_hex};
use crate::store::{Access, Tx, on_db};
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// Random characters after the scope.
const SECRET_LEN: usize = 32;
/// Random characters kept in the display prefix.
const PREFIX_SECRET_CHARS: usize = 6;

/// A freshly generated key: the value to hand out once, and what is stored.
pub(crate) struct GeneratedKey {
    pub raw: String,
    pub hash: String,
    pub prefix: String,
}

/// Makes a new random key of `scope`.
pub(crate) fn generate(scope: Scope) -> GeneratedKey {
    let raw = format!("orch_{}_{}", scope.as_str(), random_base62(SECRET_LEN));
    describe(&raw)
}

/// The stored form of a key value.
pub(crate) fn describe(raw: &str) -> GeneratedKey {
    let prefix_len = raw.rfind('_').map_or(0, |i| i + 1) + PREFIX_SECRET_CHARS;
    GeneratedKey {
        raw: raw.to_owned(),
        hash: sha256_hex(raw),
        prefix: raw.chars().take(prefix_len).collect(),
    }
}

/// The scope a key value claims by its format, or `None` if it is not shaped
/// like a key at all.
pub fn scope_of(raw: &str) -> Option<Scope> {
    let rest = raw.strip_prefix("orch_")?;
    let (scope, secret) = rest.split_once('_')?;
    let scope: Scope = scope.parse().ok()?;
    (secret.len() == SECRET_LEN && secret.chars().all(|c| c.is_ascii_alphanumeric()))
        .then_some(scope)
}

/// A stored key (never the secret).
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct KeyRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub name: String,
    pub scope: String,
    pub key_prefix: String,
    pub owner_type: String,
    pub owner_id: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// The columns of [`KeyRow`], for `concat!` into static SQL.
macro_rules! key_columns {
    () => {
        "id, tenant_id, name, scope, key_prefix, owner_type, owner_id, created_at, expires_at, revoked_at"
    };
}
pub(crate) use key_columns;

impl KeyRow {
    pub fn scope(&self) -> Result<Scope> {
        self.scope.parse().map_err(Error::internal)
    }

    /// Whether the key may be used at `now`.
    pub fn is_usable(&self, now: DateTime<Utc>) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|at| at > now)
    }

    pub fn to_api(&self) -> Result<ApiKey> {
        Ok(ApiKey {
            id: self.id,
            tenant_id: self.tenant_id,
            name: self.name.clone(),
            scope: self.scope()?,
            key_prefix: self.key_prefix.clone(),
            owner_type: self.owner_type.clone(),
            owner_id: self.owner_id,
            created_at: self.created_at.into(),
            expires_at: self.expires_at.map(Into::into),
            revoked_at: self.revoked_at.map(Into::into),
        })
    }
}

/// What a new key row holds.
pub(crate) struct NewKey<'a> {
    pub tenant_id: Uuid,
    pub name: &'a str,
    pub scope: Scope,
    pub owner_type: &'a str,
    pub owner_id: Option<Uuid>,
    pub expires_at: Option<Timestamp>,
}

/// Inserts a key and returns its row; the caller hands `generated.raw` out once.
pub(crate) async fn insert(
    tx: &mut Tx,
    new: &NewKey<'_>,
    generated: &GeneratedKey,
) -> Result<KeyRow> {
    let id = Uuid::new_v4();
    let now = tx.now().as_datetime();
    let row: KeyRow = on_db!(tx, c => sqlx::query_as(concat!(
        "INSERT INTO api_keys (id, tenant_id, name, scope, key_hash, key_prefix, owner_type, owner_id, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ", key_columns!(), ""
    ))
    .bind(id)
    .bind(new.tenant_id)
    .bind(new.name)
    .bind(new.scope.as_str())
    .bind(&generated.hash)
    .bind(&generated.prefix)
    .bind(new.owner_type)
    .bind(new.owner_id)
    .bind(now)
    .bind(new.expires_at.map(|t| t.as_datetime()))
    .fetch_one(c)
    .await)?;
    Ok(row)
}

pub(crate) async fn find_by_hash(access: &mut impl Access, hash: &str) -> Result<Option<KeyRow>> {
    Ok(on_db!(access, c => sqlx::query_as(concat!(
        "SELECT ", key_columns!(), " FROM api_keys WHERE key_hash = $1"
    ))
    .bind(hash)
    .fetch_optional(c)
    .await)?)
}

pub(crate) async fn find_by_id(access: &mut impl Access, id: Uuid) -> Result<Option<KeyRow>> {
    Ok(on_db!(access, c => sqlx::query_as(concat!(
        "SELECT ", key_columns!(), " FROM api_keys WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(c)
    .await)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_have_the_documented_format() {
        let key = generate(Scope::Admin);
        assert!(key.raw.starts_with("orch_admin_"));
        assert_eq!(key.raw.len(), "orch_admin_".len() + SECRET_LEN);
        assert_eq!(scope_of(&key.raw), Some(Scope::Admin));
        assert_eq!(key.prefix.len(), "orch_admin_".len() + PREFIX_SECRET_CHARS);
        assert_eq!(key.hash.len(), 64);
        assert_eq!(scope_of("orch_admin_short"), None);
        assert_eq!(scope_of("orch_root_abcdefghijabcdefghijabcdefghijab"), None);
        assert_eq!(scope_of("not a key"), None);
    }
}
