//! The token exchange and refresh sessions.
//!
//! Exchanging an API key opens a session family: an access token plus a
//! refresh token. Each refresh rotates the refresh token: the old one is
//! marked rotated and a new one joins the same family. Presenting a rotated
//! token again means someone kept a copy, so the whole family is revoked.
//!
//! The family is the session: a row of `auth_sessions` whose id every access
//! token of the family carries (`sid`). Revoking the family (reuse, logout)
//! marks that row, and every request by access token checks it (through a
//! cache of at most `credential_cache_ttl`; a revocation made on this replica
//! is seen here at once). The CSRF token is derived from the session id
//! ([`crate::secrets::Secrets::csrf_token`]), so it is stable across refreshes and cannot be
//! planted from another session.

use super::tokens::{self, Subject};
use crate::api::{LogCategory, LogLevel, LogStatus};
use crate::api::{Scope, Timestamp};
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::keys::{self, KeyRow};
use crate::logs::{self, PlatformLog};
use crate::secrets::{constant_time_eq, random_base62, sha256_hex};
use crate::store::{Access, on_db};
use chrono::{DateTime, Utc};
use uuid::Uuid;

const REFRESH_PREFIX: &str = "orch_rt_";
const REFRESH_SECRET_LEN: usize = 48;

/// How a session credential reached the server.
#[derive(Debug, Clone, Copy)]
pub enum Via<'a> {
    /// An `Authorization: Bearer` header, which a browser never adds by
    /// itself: no CSRF proof needed.
    Bearer,
    /// A cookie: the request must prove it can read the session's CSRF token
    /// by repeating it (the `x-csrf-token` header's value, when sent).
    Cookie {
        /// The `x-csrf-token` header's value; `None` when the request sent
        /// none (then a change is refused).
        csrf_header: Option<&'a str>,
    },
}

/// The refusal of a cookie-authenticated change without the session's CSRF
/// token.
pub fn csrf_refused() -> Error {
    Error::unauthorized(
        "cookie-authenticated requests that change state must send the session's CSRF token (the service_csrf_token cookie's value) in x-csrf-token",
    )
}

/// Credentials handed out by the exchange or a refresh.
#[derive(Debug, Clone)]
pub struct IssuedSession {
    /// The signed access token to send as `Authorization: Bearer`.
    pub access_token: String,
    /// When the access token stops being accepted (the configured access
    /// token lifetime after issue).
    pub expires_at: Timestamp,
    /// The opaque refresh token (`orch_rt_...`); single use: a refresh
    /// rotates it, and reusing a rotated one revokes the whole session.
    pub refresh_token: String,
    /// When the refresh token expires: the configured refresh lifetime,
    /// cut short to the API key's own expiry.
    pub refresh_expires_at: Timestamp,
    /// Value of the double-submit CSRF cookie for cookie-based clients.
    pub csrf_token: String,
    /// Whether cookies should outlive the browser session.
    pub persistent: bool,
    /// The scope of the API key the session was opened with; the session
    /// never has more.
    pub scope: Scope,
    /// The tenant the session acts in (the API key's).
    pub tenant_id: Uuid,
}

#[derive(sqlx::FromRow)]
struct SessionRow {
    id: Uuid,
    family_id: Uuid,
    api_key_id: Uuid,
    persistent: bool,
    expires_at: DateTime<Utc>,
    rotated_at: Option<DateTime<Utc>>,
    revoked_at: Option<DateTime<Utc>>,
}

impl ControlPlane {
    /// `POST /auth/token`: trades an API key for an access token and a new
    /// refresh session.
    ///
    /// Writes an `auth.token` platform log row: `completed` on success,
    /// `failed` (level `warn`) when the key exists but cannot be used. A value
    /// that names no key names no tenant either, so it is only traced.
    pub async fn exchange_api_key(&self, api_key: &str, persistent: bool) -> Result<IssuedSession> {
        let key = match self.usable_key_by_value(api_key.trim()).await {
            Ok(key) => key,
            Err(e) => {
                self.log_failed_exchange(api_key.trim(), &e).await;
                return Err(e);
            }
        };
        let mut tx = self.store().begin().await?;
        let family_id = Uuid::new_v4();
        on_db!(&mut tx, c => sqlx::query(
            "INSERT INTO auth_sessions (id, tenant_id, created_at) VALUES ($1, $2, $3)",
        )
        .bind(family_id)
        .bind(key.tenant_id)
        .bind(self.now().as_datetime())
        .execute(c).await.map(|r| r.rows_affected()))?;
        let session = self
            .open_session(&mut tx, &key, family_id, persistent)
            .await?;
        auth_log(&mut tx, &key, "auth.token", LogStatus::Completed, None).await?;
        tx.commit().await?;
        Ok(session)
    }

    /// Records a refused exchange of a key that exists (revoked, expired).
    async fn log_failed_exchange(&self, raw: &str, error: &Error) {
        if keys::scope_of(raw).is_none() {
            return;
        }
        let result = async {
            let mut conn = self.store().read().await?;
            let Some(key) = keys::find_by_hash(&mut conn, &sha256_hex(raw)).await? else {
                return Ok(());
            };
            drop(conn);
            let mut tx = self.store().begin().await?;
            auth_log(
                &mut tx,
                &key,
                "auth.token",
                LogStatus::Failed,
                Some(error.to_string()),
            )
            .await?;
            tx.commit().await
        }
        .await;
        if let Err(e) = result {
            tracing::warn!(error = %e, "could not log a failed token exchange");
        }
    }

    /// `POST /auth/refresh`: rotates the refresh token. A token that was
    /// already rotated revokes its whole family. A token sent as a cookie
    /// needs the session's CSRF token ([`Via::Cookie`]), checked before
    /// anything else happens.
    pub async fn refresh_session(
        &self,
        refresh_token: &str,
        via: Via<'_>,
    ) -> Result<IssuedSession> {
        let hash = sha256_hex(refresh_token.trim());
        // Every read happens before the transaction, on a connection of its
        // own that is given back at once: a request never holds one
        // connection while waiting for another, so concurrent refreshes of
        // one token (which queue on the session row's lock) cannot drain the
        // pool in a circle. The rotation's `WHERE rotated_at IS NULL` guard
        // below still decides the single winner.
        let row = {
            let mut conn = self.store().read().await?;
            find_session(&mut conn, &hash).await?
        }
        .ok_or_else(|| Error::unauthorized("unknown refresh token"))?;
        self.check_csrf(row.family_id, via)?;
        let now = self.now().as_datetime();
        if row.revoked_at.is_some() {
            return Err(Error::unauthorized("this session has been revoked"));
        }
        if row.rotated_at.is_some() {
            let mut tx = self.store().begin().await?;
            revoke_family(&mut tx, row.family_id, now).await?;
            tx.commit().await?;
            self.credentials().put_session(row.family_id, false);
            return Err(Error::unauthorized(
                "refresh token reuse detected; the session has been revoked, sign in again",
            ));
        }
        if row.expires_at <= now {
            return Err(Error::unauthorized("the refresh token has expired"));
        }
        let key = self.usable_key_by_id(row.api_key_id).await;
        let mut tx = self.store().begin().await?;
        // The session row first (the order every revocation takes too): a
        // revocation that committed is seen here, and one that comes later
        // waits for this rotation and then also revokes its new token.
        let live = on_db!(&mut tx, c => sqlx::query(
            "UPDATE auth_sessions SET refreshed_at = $1 WHERE id = $2 AND revoked_at IS NULL",
        )
        .bind(now)
        .bind(row.family_id)
        .execute(c).await.map(|r| r.rows_affected()))?;
        if live != 1 {
            return Err(Error::unauthorized("this session has been revoked"));
        }
        // Only one of two concurrent refreshes with the same token may rotate it.
        let rotated = on_db!(&mut tx, c => sqlx::query(
            "UPDATE refresh_sessions SET rotated_at = $1 WHERE id = $2 AND rotated_at IS NULL AND revoked_at IS NULL",
        )
        .bind(now)
        .bind(row.id)
        .execute(c).await.map(|r| r.rows_affected()))?;
        if rotated != 1 {
            revoke_family(&mut tx, row.family_id, now).await?;
            tx.commit().await?;
            self.credentials().put_session(row.family_id, false);
            return Err(Error::unauthorized(
                "refresh token reuse detected; the session has been revoked, sign in again",
            ));
        }
        let key = match key {
            Ok(key) => key,
            Err(e) => {
                revoke_family(&mut tx, row.family_id, now).await?;
                tx.commit().await?;
                self.credentials().put_session(row.family_id, false);
                return Err(e);
            }
        };
        let session = self
            .open_session(&mut tx, &key, row.family_id, row.persistent)
            .await?;
        auth_log(&mut tx, &key, "auth.refresh", LogStatus::Completed, None).await?;
        tx.commit().await?;
        Ok(session)
    }

    /// `POST /auth/logout`: revokes the session named by the first of
    /// `credentials` (refresh or access tokens) that names one. Unknown,
    /// malformed or already revoked credentials are not an error; a session
    /// named by a cookie is revoked only with its CSRF token ([`Via::Cookie`]),
    /// else the answer is `UNAUTHORIZED` and nothing changes.
    pub async fn logout(&self, credentials: &[&str], via: Via<'_>) -> Result<()> {
        let mut family = None;
        for credential in credentials.iter().map(|c| c.trim()) {
            family = if credential.starts_with(REFRESH_PREFIX) {
                let mut conn = self.store().read().await?;
                find_session(&mut conn, &sha256_hex(credential))
                    .await?
                    .map(|row| row.family_id)
            } else {
                tokens::verify(self.secrets(), credential, self.now())
                    .ok()
                    .and_then(|claims| claims.sid)
            };
            if family.is_some() {
                break;
            }
        }
        let Some(family_id) = family else {
            return Ok(());
        };
        self.check_csrf(family_id, via)?;
        let mut tx = self.store().begin().await?;
        revoke_family(&mut tx, family_id, self.now().as_datetime()).await?;
        tx.commit().await?;
        self.credentials().put_session(family_id, false);
        Ok(())
    }

    /// Fails unless session `session_id` is live. The answer may come from
    /// this replica's cache for at most `credential_cache_ttl`; a revocation
    /// made on this replica is known here at once.
    pub(crate) async fn require_live_session(&self, session_id: Uuid) -> Result<()> {
        let ttl = self.config().credential_cache_ttl;
        let live = match self.credentials().session(session_id, ttl) {
            Some(live) => live,
            None => {
                let mut conn = self.store().read().await?;
                let row: Option<(Option<DateTime<Utc>>,)> = on_db!(&mut conn, c => sqlx::query_as(
                    "SELECT revoked_at FROM auth_sessions WHERE id = $1",
                )
                .bind(session_id)
                .fetch_optional(c)
                .await)?;
                drop(conn);
                // A session that is gone (purged) is as dead as a revoked one.
                let live = matches!(row, Some((None,)));
                self.credentials().put_session(session_id, live);
                live
            }
        };
        if live {
            Ok(())
        } else {
            Err(Error::unauthorized(
                "this session has been revoked (signed out, or its refresh token was reused); sign in again",
            ))
        }
    }

    /// Checks a cookie-borne credential's CSRF proof against the token
    /// derived from its session.
    pub(crate) fn check_csrf(&self, session_id: Uuid, via: Via<'_>) -> Result<()> {
        match via {
            Via::Bearer => Ok(()),
            Via::Cookie { csrf_header } => {
                let expected = self.secrets().csrf_token(session_id);
                match csrf_header {
                    Some(sent) if constant_time_eq(sent.trim().as_bytes(), expected.as_bytes()) => {
                        Ok(())
                    }
                    _ => Err(csrf_refused()),
                }
            }
        }
    }

    async fn open_session(
        &self,
        access: &mut impl Access,
        key: &KeyRow,
        family_id: Uuid,
        persistent: bool,
    ) -> Result<IssuedSession> {
        let scope = key.scope()?;
        let subject = Subject {
            key_id: key.id,
            tenant_id: key.tenant_id,
            scope,
            owner_type: key.owner_type.clone(),
            owner_id: key.owner_id,
            session_id: family_id,
        };
        let (access_token, expires_at) = tokens::issue(
            self.secrets(),
            &subject,
            self.config().access_token_ttl,
            self.now(),
        )?;
        let refresh_token = format!("{REFRESH_PREFIX}{}", random_base62(REFRESH_SECRET_LEN));
        let now = self.now();
        let mut refresh_expires_at = now.plus(self.config().refresh_token_ttl);
        if let Some(key_expiry) = key.expires_at.map(Timestamp::from) {
            refresh_expires_at = refresh_expires_at.min(key_expiry);
        }
        on_db!(access, c => sqlx::query(
            "INSERT INTO refresh_sessions (id, family_id, tenant_id, api_key_id, token_hash, persistent, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(Uuid::new_v4())
        .bind(family_id)
        .bind(key.tenant_id)
        .bind(key.id)
        .bind(sha256_hex(&refresh_token))
        .bind(persistent)
        .bind(now.as_datetime())
        .bind(refresh_expires_at.as_datetime())
        .execute(c).await.map(|r| r.rows_affected()))?;
        Ok(IssuedSession {
            access_token,
            expires_at,
            refresh_token,
            refresh_expires_at,
            csrf_token: self.secrets().csrf_token(family_id),
            persistent,
            scope,
            tenant_id: key.tenant_id,
        })
    }
}

/// One `auth` platform row about `key` (the key is the actor and the resource).
async fn auth_log(
    tx: &mut crate::store::Tx,
    key: &KeyRow,
    operation: &str,
    status: LogStatus,
    failure: Option<String>,
) -> Result<()> {
    let caller = super::caller_of(key)?;
    let mut log = PlatformLog::new(LogCategory::Auth, operation, status);
    log.resource_type = Some("api_key");
    log.resource_id = Some(key.id.to_string());
    log.payload = serde_json::json!({ "scope": key.scope, "key_prefix": key.key_prefix });
    if let Some(message) = failure {
        log.level = LogLevel::Warn;
        log.error = Some(serde_json::json!({ "message": message, "code": "UNAUTHORIZED" }));
    }
    logs::write_platform_log(tx, &caller, key.tenant_id, log).await
}

async fn find_session(access: &mut impl Access, hash: &str) -> Result<Option<SessionRow>> {
    Ok(on_db!(access, c => sqlx::query_as(
        "SELECT id, family_id, api_key_id, persistent, expires_at, rotated_at, revoked_at \
         FROM refresh_sessions WHERE token_hash = $1",
    )
    .bind(hash)
    .fetch_optional(c)
    .await)?)
}

/// Revokes the session row first (the lock order a refresh takes too), then
/// every refresh token of the family. Callers mark the session revoked in
/// this replica's cache once the transaction has committed.
async fn revoke_family(
    access: &mut impl Access,
    family_id: Uuid,
    now: DateTime<Utc>,
) -> Result<()> {
    on_db!(access, c => sqlx::query("UPDATE auth_sessions SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL")
        .bind(now)
        .bind(family_id)
        .execute(c).await.map(|r| r.rows_affected()))?;
    on_db!(access, c => sqlx::query("UPDATE refresh_sessions SET revoked_at = $1 WHERE family_id = $2 AND revoked_at IS NULL")
        .bind(now)
        .bind(family_id)
        .execute(c).await.map(|r| r.rows_affected()))?;
    Ok(())
}
