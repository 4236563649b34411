//! Authentication: who is calling, from which credential.
//!
//! Two bearer credentials are accepted: a raw API key (`orch_<scope>_...`) and
//! a signed access token obtained from the token exchange ([`tokens`]). Either
//! way the API key behind it is checked on every request, so a revoked key
//! stops working at once; the answer may be served from a small in-memory
//! cache for at most [`crate::CoreConfig::credential_cache_ttl`].
//! Refresh sessions ([`sessions`]) rotate on every use and detect reuse.

pub mod sessions;
pub mod tokens;

use crate::api::{Me, Scope};
use crate::api_keys::{self, KeyRow};
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::secrets::sha256_hex;
use chrono::Utc;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// The authenticated party of a request. Every core method takes one and
/// works inside `tenant_id` only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub tenant_id: Uuid,
    pub scope: Scope,
    /// The API key behind the credential.
    pub key_id: Uuid,
    /// Who the key acts for: `user`, `agent`, `worker` or `service`.
    pub owner_type: String,
    pub owner_id: Option<Uuid>,
}

impl Caller {
    fn from_key(row: &KeyRow) -> Result<Self> {
        Ok(Self {
            tenant_id: row.tenant_id,
            scope: row.scope()?,
            key_id: row.id,
            owner_type: row.owner_type.clone(),
            owner_id: row.owner_id,
        })
    }

    /// Fails with `FORBIDDEN` unless the caller's scope ranks at least `scope`.
    pub fn require(&self, scope: Scope) -> Result<()> {
        if self.scope.satisfies(scope) {
            Ok(())
        } else {
            Err(Error::forbidden(format!(
                "this route needs {scope} scope or higher; the credential has {}",
                self.scope
            )))
        }
    }

    /// `GET /auth/me`.
    pub fn me(&self) -> Me {
        Me {
            authenticated: true,
            scope: self.scope,
            tenant_id: self.tenant_id,
            owner_type: self.owner_type.clone(),
            owner_id: self.owner_id,
            key_id: self.key_id,
        }
    }
}

/// Recently verified keys, by key id, so a busy agent does not cost a key
/// lookup per request. Entries live a few seconds at most.
#[derive(Default)]
pub(crate) struct CredentialCache {
    by_hash: Mutex<HashMap<String, (Instant, KeyRow)>>,
}

/// Entries kept before the cache is simply emptied (it refills on demand).
const CACHE_CAPACITY: usize = 10_000;

impl CredentialCache {
    fn get(&self, hash: &str, ttl: Duration) -> Option<KeyRow> {
        let map = self.by_hash.lock().expect("credential cache poisoned");
        map.get(hash)
            .filter(|(at, _)| at.elapsed() < ttl)
            .map(|(_, row)| row.clone())
    }

    fn put(&self, hash: String, row: KeyRow) {
        let mut map = self.by_hash.lock().expect("credential cache poisoned");
        if map.len() >= CACHE_CAPACITY {
            map.clear();
        }
        map.insert(hash, (Instant::now(), row));
    }

    fn forget(&self, key_id: Uuid) {
        let mut map = self.by_hash.lock().expect("credential cache poisoned");
        map.retain(|_, (_, row)| row.id != key_id);
    }
}

impl ControlPlane {
    /// Resolves a bearer credential (raw API key or access token) to a caller.
    pub async fn authenticate(&self, bearer: &str) -> Result<Caller> {
        let bearer = bearer.trim();
        if bearer.starts_with("orch_") {
            let row = self.usable_key_by_value(bearer).await?;
            return Caller::from_key(&row);
        }
        let claims = tokens::verify(self.secrets(), bearer)?;
        let row = self.usable_key_by_id(claims.key_id()?).await?;
        Caller::from_key(&row)
    }

    /// The key with this value, if it exists and may be used now.
    pub(crate) async fn usable_key_by_value(&self, raw: &str) -> Result<KeyRow> {
        if api_keys::scope_of(raw).is_none() {
            return Err(Error::unauthorized("malformed API key"));
        }
        let hash = sha256_hex(raw);
        let ttl = self.config().credential_cache_ttl;
        let row = match self.credentials().get(&hash, ttl) {
            Some(row) => row,
            None => {
                let mut conn = self.store().read().await?;
                let row = api_keys::find_by_hash(&mut conn, &hash)
                    .await?
                    .ok_or_else(|| Error::unauthorized("unknown API key"))?;
                self.credentials().put(hash, row.clone());
                row
            }
        };
        check_usable(row)
    }

    /// The key with this id, if it exists and may be used now.
    pub(crate) async fn usable_key_by_id(&self, id: Uuid) -> Result<KeyRow> {
        let cache_key = format!("id:{id}");
        let ttl = self.config().credential_cache_ttl;
        let row = match self.credentials().get(&cache_key, ttl) {
            Some(row) => row,
            None => {
                let mut conn = self.store().read().await?;
                let row = api_keys::find_by_id(&mut conn, id).await?.ok_or_else(|| {
                    Error::unauthorized("the key behind this token no longer exists")
                })?;
                self.credentials().put(cache_key, row.clone());
                row
            }
        };
        check_usable(row)
    }

    /// Drops a key from this replica's credential cache (after a revocation).
    pub(crate) fn forget_credential(&self, key_id: Uuid) {
        self.credentials().forget(key_id);
    }
}

fn check_usable(row: KeyRow) -> Result<KeyRow> {
    if row.revoked_at.is_some() {
        return Err(Error::unauthorized("this API key has been revoked"));
    }
    if !row.is_usable(Utc::now()) {
        return Err(Error::unauthorized("this API key has expired"));
    }
    Ok(row)
}
