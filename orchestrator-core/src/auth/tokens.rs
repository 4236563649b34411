//! Access tokens: HS256-signed JWTs naming the key, tenant, scope and owner.
//!
//! The token is a convenience, not the source of truth: every request still
//! checks that the key it names is usable and that the session it was issued
//! for (`sid`, the refresh family) has not been revoked.

use crate::api::{Scope, Timestamp};
use crate::error::{Error, Result};
use crate::secrets::Secrets;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use uuid::Uuid;

/// Marks our tokens so other HS256 tokens signed with the same key (there are
/// none today) could never pass for access tokens.
const TOKEN_TYPE: &str = "orch.access.v1";

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Claims {
    /// The API key id.
    pub sub: String,
    pub tid: Uuid,
    pub scope: Scope,
    pub oty: String,
    pub oid: Option<Uuid>,
    pub iat: i64,
    pub exp: i64,
    pub typ: String,
    /// Unique per token, so two tokens issued in the same second differ.
    pub jti: Uuid,
    /// The session (refresh family) the token was issued for. Tokens signed
    /// before sessions were tracked lack it and are refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<Uuid>,
}

impl Claims {
    pub fn key_id(&self) -> Result<Uuid> {
        self.sub
            .parse()
            .map_err(|_| Error::unauthorized("malformed access token"))
    }

    /// The session the token belongs to.
    pub fn session_id(&self) -> Result<Uuid> {
        self.sid.ok_or_else(|| {
            Error::unauthorized("this access token names no session; refresh it or sign in again")
        })
    }
}

/// What an access token is issued for.
pub(crate) struct Subject {
    pub key_id: Uuid,
    pub tenant_id: Uuid,
    pub scope: Scope,
    pub owner_type: String,
    pub owner_id: Option<Uuid>,
    /// The session (refresh family) the token belongs to.
    pub session_id: Uuid,
}

/// Signs a token for `subject` valid for `ttl` from `now` (the control
/// plane's clock); returns it with its expiry.
pub(crate) fn issue(
    secrets: &Secrets,
    subject: &Subject,
    ttl: Duration,
    now: Timestamp,
) -> Result<(String, Timestamp)> {
    let expires_at = now.plus(ttl);
    let claims = Claims {
        sub: subject.key_id.to_string(),
        tid: subject.tenant_id,
        scope: subject.scope,
        oty: subject.owner_type.clone(),
        oid: subject.owner_id,
        iat: now.as_datetime().timestamp(),
        exp: expires_at.as_datetime().timestamp(),
        typ: TOKEN_TYPE.to_owned(),
        jti: Uuid::new_v4(),
        sid: Some(subject.session_id),
    };
    let token = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(secrets.signing_key()),
    )
    .map_err(Error::internal)?;
    Ok((token, expires_at))
}

/// Seconds a token is still accepted after its `exp`, for clocks of
/// replicas that disagree a little.
const EXPIRY_LEEWAY_SECONDS: i64 = 5;

/// Checks the signature, type and expiry of a token, the expiry against
/// `now` (the control plane's clock, as `issue` stamped it) rather than
/// the library's reading of the system clock.
pub(crate) fn verify(secrets: &Secrets, token: &str, now: Timestamp) -> Result<Claims> {
    let mut validation = Validation::new(Algorithm::HS256);
    validation.validate_exp = false;
    validation.set_required_spec_claims(&["exp", "sub"]);
    let data = jsonwebtoken::decode::<Claims>(
        token,
        &DecodingKey::from_secret(secrets.signing_key()),
        &validation,
    )
    .map_err(|e| match e.kind() {
        jsonwebtoken::errors::ErrorKind::ExpiredSignature => {
            Error::unauthorized("the access token has expired")
        }
        _ => Error::unauthorized("invalid access token"),
    })?;
    if data.claims.typ != TOKEN_TYPE {
        return Err(Error::unauthorized("invalid access token"));
    }
    if data.claims.exp.saturating_add(EXPIRY_LEEWAY_SECONDS) < now.as_datetime().timestamp() {
        return Err(Error::unauthorized("the access token has expired"));
    }
    Ok(data.claims)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subject() -> Subject {
        Subject {
            key_id: Uuid::new_v4(),
            tenant_id: Uuid::new_v4(),
            scope: Scope::Admin,
            owner_type: "user".into(),
            owner_id: None,
            session_id: Uuid::new_v4(),
        }
    }

    #[test]
    fn a_token_verifies_only_with_its_own_key() {
        let secrets = Secrets::from_master("a");
        let subject = subject();
        let now = Timestamp::from(chrono::DateTime::UNIX_EPOCH + chrono::Duration::days(20_000));
        let (token, _) = issue(&secrets, &subject, Duration::from_secs(60), now).unwrap();
        let claims = verify(&secrets, &token, now).unwrap();
        assert_eq!(claims.key_id().unwrap(), subject.key_id);
        assert_eq!(claims.scope, Scope::Admin);
        assert_eq!(claims.session_id().unwrap(), subject.session_id);
        assert!(verify(&Secrets::from_master("b"), &token, now).is_err());
        assert!(verify(&secrets, "not.a.token", now).is_err());
    }

    #[test]
    fn expiry_is_read_against_the_given_clock() {
        let secrets = Secrets::from_master("a");
        let issued = Timestamp::from(chrono::DateTime::UNIX_EPOCH + chrono::Duration::days(20_000));
        let (token, expires_at) =
            issue(&secrets, &subject(), Duration::from_secs(60), issued).unwrap();
        assert_eq!(expires_at, issued.plus(Duration::from_secs(60)));
        let within_leeway = expires_at.plus(Duration::from_secs(5));
        assert!(verify(&secrets, &token, within_leeway).is_ok());
        let after = expires_at.plus(Duration::from_secs(6));
        assert!(verify(&secrets, &token, after).is_err());
    }
}
