//! The token exchange and refresh sessions.
//!
//! Exchanging an API key opens a session family: an access token plus a
//! refresh token. Each refresh rotates the refresh token: the old one is
//! marked rotated and a new one joins the same family. Presenting a rotated
//! token again means someone kept a copy, so the whole family is revoked.

use super::tokens::{self, Subject};
use crate::api::{LogCategory, LogLevel, LogStatus};
use crate::api::{Scope, Timestamp};
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::keys::{self, KeyRow};
use crate::logs::{self, PlatformLog};
use crate::secrets::{random_base62, sha256_hex};
use crate::store::{Access, on_db};
use chrono::{DateTime, Utc};
use uuid::Uuid;

const REFRESH_PREFIX: &str = "orch_rt_";
const REFRESH_SECRET_LEN: usize = 48;

/// Credentials handed out by the exchange or a refresh.
#[derive(Debug, Clone)]
pub struct IssuedSession {
    pub access_token: String,
    pub expires_at: Timestamp,
    pub refresh_token: String,
    pub refresh_expires_at: Timestamp,
    /// Value of the double-submit CSRF cookie for cookie-based clients.
    pub csrf_token: String,
    /// Whether cookies should outlive the browser session.
    pub persistent: bool,
    pub scope: Scope,
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
        let session = self
            .open_session(&mut tx, &key, Uuid::new_v4(), persistent)
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
    /// already rotated revokes its whole family.
    pub async fn refresh_session(&self, refresh_token: &str) -> Result<IssuedSession> {
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
        let now = Timestamp::now().as_datetime();
        if row.revoked_at.is_some() {
            return Err(Error::unauthorized("this session has been revoked"));
        }
        if row.rotated_at.is_some() {
            let mut tx = self.store().begin().await?;
            revoke_family(&mut tx, row.family_id, now).await?;
            tx.commit().await?;
            return Err(Error::unauthorized(
                "refresh token reuse detected; the session has been revoked, sign in again",
            ));
        }
        if row.expires_at <= now {
            return Err(Error::unauthorized("the refresh token has expired"));
        }
        let key = self.usable_key_by_id(row.api_key_id).await;
        let mut tx = self.store().begin().await?;
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
            return Err(Error::unauthorized(
                "refresh token reuse detected; the session has been revoked, sign in again",
            ));
        }
        let key = match key {
            Ok(key) => key,
            Err(e) => {
                revoke_family(&mut tx, row.family_id, now).await?;
                tx.commit().await?;
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

    /// `POST /auth/logout`: revokes the session family of `refresh_token` when
    /// it names one. Never fails for a missing, unknown or revoked token.
    pub async fn logout(&self, refresh_token: Option<&str>) -> Result<()> {
        let Some(token) = refresh_token
            .map(str::trim)
            .filter(|t| t.starts_with(REFRESH_PREFIX))
        else {
            return Ok(());
        };
        let mut tx = self.store().begin().await?;
        if let Some(row) = find_session(&mut tx, &sha256_hex(token)).await? {
            revoke_family(&mut tx, row.family_id, Timestamp::now().as_datetime()).await?;
            tx.commit().await?;
        }
        Ok(())
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
        };
        let (access_token, expires_at) =
            tokens::issue(self.secrets(), &subject, self.config().access_token_ttl)?;
        let refresh_token = format!("{REFRESH_PREFIX}{}", random_base62(REFRESH_SECRET_LEN));
        let now = Timestamp::now();
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
            csrf_token: random_base62(32),
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

async fn revoke_family(
    access: &mut impl Access,
    family_id: Uuid,
    now: DateTime<Utc>,
) -> Result<()> {
    on_db!(access, c => sqlx::query("UPDATE refresh_sessions SET revoked_at = $1 WHERE family_id = $2 AND revoked_at IS NULL")
        .bind(now)
        .bind(family_id)
        .execute(c).await.map(|r| r.rows_affected()))?;
    Ok(())
}
