//! Authentication: who is calling, from which credential.
//!
//! Two bearer credentials are accepted: a raw API key (`orch_<scope>_...`) and
//! a signed access token obtained from the token exchange ([`tokens`]). Either
//! way the API key behind it is checked on every request, so a revoked key
//! stops working at once; the answer may be served from a small in-memory
//! cache for at most [`crate::CoreConfig::credential_cache_ttl`]. An access
//! token also names its session, which must not be revoked (same cache).
//! Refresh sessions ([`sessions`]) rotate on every use and detect reuse.

pub mod sessions;
pub mod tokens;

use crate::api::Timestamp;
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::keys::{self, KeyRow};
use crate::secrets::sha256_hex;
use uuid::Uuid;

/// The credential an open stream or websocket was opened with
/// ([`ControlPlane::held_credential`]).
#[derive(Debug, Clone, Copy)]
pub struct HeldCredential {
    key_id: Uuid,
    session_id: Option<Uuid>,
}

/// The caller a usable key acts as.
pub(crate) fn caller_of(row: &KeyRow) -> Result<Caller> {
    Ok(Caller {
        tenant_id: row.tenant_id,
        scope: row.scope()?,
        key_id: row.id,
        owner_type: row.owner_type.clone(),
        owner_id: row.owner_id,
    })
}

impl ControlPlane {
    /// Resolves a bearer credential (raw API key or access token) to a caller.
    pub async fn authenticate(&self, bearer: &str) -> Result<Caller> {
        let bearer = bearer.trim();
        if bearer.starts_with("orch_") {
            let row = self.usable_key_by_value(bearer).await?;
            return caller_of(&row);
        }
        let claims = tokens::verify(self.secrets(), bearer, self.now())?;
        self.require_live_session(claims.session_id()?).await?;
        let row = self.usable_key_by_id(claims.key_id()?).await?;
        caller_of(&row)
    }

    /// Resolves an access token sent as a cookie on a request that changes
    /// state: `csrf_header` must carry the CSRF token of the token's session
    /// (a CSRF cookie alone proves nothing, it may have been planted).
    pub async fn authenticate_cookie_write(
        &self,
        access_token: &str,
        csrf_header: Option<&str>,
    ) -> Result<Caller> {
        let claims = tokens::verify(self.secrets(), access_token.trim(), self.now())?;
        self.check_csrf(claims.session_id()?, sessions::Via::Cookie { csrf_header })?;
        self.authenticate(access_token).await
    }

    /// What a long-lived connection (an event stream, a worker websocket)
    /// opened by `caller` with `bearer` (which authenticated just now) must
    /// keep being allowed: the key, and the session when `bearer` is an
    /// access token.
    pub fn held_credential(&self, caller: &Caller, bearer: &str) -> HeldCredential {
        let bearer = bearer.trim();
        let session_id = (!bearer.starts_with("orch_"))
            .then(|| tokens::verify(self.secrets(), bearer, self.now()).ok())
            .flatten()
            .and_then(|claims| claims.session_id().ok());
        HeldCredential {
            key_id: caller.key_id,
            session_id,
        }
    }

    /// Fails with `401` once the key behind `held` is revoked, deleted or
    /// expired, or its session revoked: what a request with the same
    /// credential would hear now (through the same cache, so within
    /// [`crate::CoreConfig::credential_cache_ttl`] of a revocation made on
    /// another replica, at once for one made here).
    pub async fn recheck_credential(&self, held: &HeldCredential) -> Result<()> {
        if let Some(session_id) = held.session_id {
            self.require_live_session(session_id).await?;
        }
        self.usable_key_by_id(held.key_id).await.map(|_| ())
    }

    /// The key with this value, if it exists and may be used now.
    pub(crate) async fn usable_key_by_value(&self, raw: &str) -> Result<KeyRow> {
        if keys::scope_of(raw).is_none() {
            return Err(Error::unauthorized("malformed API key"));
        }
        let hash = sha256_hex(raw);
        let ttl = self.config().credential_cache_ttl;
        let row = match self.credentials().get(&hash, ttl) {
            Some(row) => row,
            None => {
                let mut conn = self.store().read().await?;
                let row = keys::find_by_hash(&mut conn, &hash)
                    .await?
                    .ok_or_else(|| Error::unauthorized("unknown API key"))?;
                self.credentials().put(hash, row.clone());
                row
            }
        };
        check_usable(row, self.now())
    }

    /// The key with this id, if it exists and may be used now.
    pub(crate) async fn usable_key_by_id(&self, id: Uuid) -> Result<KeyRow> {
        let cache_key = format!("id:{id}");
        let ttl = self.config().credential_cache_ttl;
        let row = match self.credentials().get(&cache_key, ttl) {
            Some(row) => row,
            None => {
                let mut conn = self.store().read().await?;
                let row = keys::find_by_id(&mut conn, id).await?.ok_or_else(|| {
                    Error::unauthorized("the key behind this token no longer exists")
                })?;
                self.credentials().put(cache_key, row.clone());
                row
            }
        };
        check_usable(row, self.now())
    }

    /// Drops a key from this replica's credential cache (after a revocation).
    pub(crate) fn forget_credential(&self, key_id: Uuid) {
        self.credentials().forget(key_id);
    }
}

fn check_usable(row: KeyRow, now: Timestamp) -> Result<KeyRow> {
    if row.revoked_at.is_some() {
        return Err(Error::unauthorized("this API key has been revoked"));
    }
    if !row.is_usable(now.as_datetime()) {
        return Err(Error::unauthorized("this API key has expired"));
    }
    Ok(row)
}
