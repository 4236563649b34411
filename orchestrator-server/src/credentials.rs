//! Credentials on the wire: the bearer header, the three session cookies and
//! the CSRF rule.
//!
//! - `service_access_token`: HttpOnly, SameSite=Strict, Path=/
//! - `service_refresh_token`: HttpOnly, SameSite=Strict, Path=/api/v1/auth
//! - `service_csrf_token`: readable by scripts, SameSite=Strict, Path=/
//!
//! `Secure` is set when the request came over https. Persistent sessions get
//! an explicit expiry; others are session cookies. A state-changing request
//! authenticated by cookie must repeat the CSRF cookie in `x-csrf-token`, and
//! that value must be the one derived from the session named by the access
//! (or refresh) cookie: an HMAC of the session id under a server key.

use crate::request::Req;
use cookie::time::OffsetDateTime;
use cookie::{Cookie, SameSite};
use http::{HeaderValue, Method, header};
use orchestrator_core::api::Timestamp;
use orchestrator_core::auth::HeldCredential;
use orchestrator_core::auth::sessions::IssuedSession;
use orchestrator_core::{ControlPlane, Error};
use std::time::Duration;

pub(crate) const ACCESS_COOKIE: &str = "service_access_token";
pub(crate) const REFRESH_COOKIE: &str = "service_refresh_token";
pub(crate) const CSRF_COOKIE: &str = "service_csrf_token";
const CSRF_HEADER: &str = "x-csrf-token";
const REFRESH_COOKIE_PATH: &str = "/api/v1/auth";

/// Where a request's credential came from.
pub(crate) enum Presented {
    Bearer(String),
    Cookie(String),
    None,
}

/// The credential a request presents: the `Authorization` header wins over
/// cookies. A malformed `Authorization` header is an error, not "no
/// credential".
pub(crate) fn presented(headers: &http::HeaderMap) -> Result<Presented, Error> {
    if let Some(value) = headers.get(header::AUTHORIZATION) {
        let value = value
            .to_str()
            .map_err(|_| Error::unauthorized("malformed Authorization header"))?;
        let token = value
            .strip_prefix("Bearer ")
            .or_else(|| value.strip_prefix("bearer "))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                Error::unauthorized("the Authorization header must be `Bearer <token>`")
            })?;
        return Ok(Presented::Bearer(token.to_owned()));
    }
    Ok(match cookie_value(headers, ACCESS_COOKIE) {
        Some(token) => Presented::Cookie(token),
        None => Presented::None,
    })
}

/// One cookie's value from the request.
pub(crate) fn cookie_value(headers: &http::HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| Cookie::split_parse(v.to_owned()))
        .filter_map(Result::ok)
        .find(|c| c.name() == name)
        .map(|c| c.value().to_owned())
        .filter(|v| !v.is_empty())
}

/// The credential an event stream or a worker websocket was opened with,
/// to check again while it stays open; `None` for a public route.
pub(crate) fn held(core: &ControlPlane, req: &Req) -> Option<HeldCredential> {
    let caller = req.caller.as_ref()?;
    match presented(req.headers()).ok()? {
        Presented::Bearer(token) | Presented::Cookie(token) => {
            Some(core.held_credential(caller, &token))
        }
        Presented::None => None,
    }
}

/// Checks a held credential every half of the credential cache's lifetime
/// (at most every second), starting at a random point of the first period
/// so streams opened together do not all miss the cache together. Resolves
/// once the credential has been revoked (never while it holds, nor when
/// the check itself fails for another reason, such as a database outage).
pub(crate) async fn revoked(core: &ControlPlane, held: Option<HeldCredential>) {
    let Some(held) = held else {
        return std::future::pending().await;
    };
    let every = (core.config().credential_cache_ttl / 2)
        .clamp(Duration::from_millis(100), Duration::from_secs(1));
    let millis = u64::try_from(every.as_millis()).unwrap_or(1000).max(1);
    let offset =
        Duration::from_millis((uuid::Uuid::new_v4().as_u128() % u128::from(millis)) as u64);
    let mut next = tokio::time::Instant::now() + offset;
    loop {
        tokio::time::sleep_until(next).await;
        if let Err(Error::Unauthorized { .. }) = core.recheck_credential(&held).await {
            return;
        }
        next += every;
    }
}

/// Methods that change state and so need the CSRF header under cookie auth.
pub(crate) fn is_state_changing(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The CSRF proof of a cookie-authenticated request: the `x-csrf-token`
/// header, but only when the `service_csrf_token` cookie came too with the
/// same value (the contract's double submit: both, equal). The core then
/// checks it against the token derived from the session the cookie names
/// ([`orchestrator_core::auth::sessions::Via::Cookie`]), so a planted cookie
/// that matches a forged header still proves nothing.
pub(crate) fn csrf_header(headers: &http::HeaderMap) -> Option<&str> {
    let sent = headers.get(CSRF_HEADER).and_then(|v| v.to_str().ok())?;
    let cookie = cookie_value(headers, CSRF_COOKIE)?;
    (cookie.trim() == sent.trim()).then_some(sent)
}

/// `Set-Cookie` values for a newly issued session.
pub(crate) fn session_cookies(req: &Req, session: &IssuedSession) -> Vec<HeaderValue> {
    let secure = req.is_https();
    let expiry = |at: Timestamp| session.persistent.then(|| to_offset(at));
    [
        build(
            ACCESS_COOKIE,
            &session.access_token,
            "/",
            true,
            secure,
            expiry(session.expires_at),
        ),
        build(
            REFRESH_COOKIE,
            &session.refresh_token,
            REFRESH_COOKIE_PATH,
            true,
            secure,
            expiry(session.refresh_expires_at),
        ),
        build(
            CSRF_COOKIE,
            &session.csrf_token,
            "/",
            false,
            secure,
            expiry(session.refresh_expires_at),
        ),
    ]
    .into_iter()
    .filter_map(|c| HeaderValue::from_str(&c.to_string()).ok())
    .collect()
}

/// `Set-Cookie` values that remove all three cookies.
pub(crate) fn clearing_cookies(req: &Req) -> Vec<HeaderValue> {
    let secure = req.is_https();
    [
        (ACCESS_COOKIE, "/", true),
        (REFRESH_COOKIE, REFRESH_COOKIE_PATH, true),
        (CSRF_COOKIE, "/", false),
    ]
    .into_iter()
    .map(|(name, path, http_only)| {
        let mut c = build(name, "", path, http_only, secure, None);
        c.make_removal();
        c
    })
    .filter_map(|c| HeaderValue::from_str(&c.to_string()).ok())
    .collect()
}

fn build(
    name: &'static str,
    value: &str,
    path: &'static str,
    http_only: bool,
    secure: bool,
    expires: Option<OffsetDateTime>,
) -> Cookie<'static> {
    let mut builder = Cookie::build((name, value.to_owned()))
        .path(path)
        .http_only(http_only)
        .secure(secure)
        .same_site(SameSite::Strict);
    if let Some(at) = expires {
        builder = builder.expires(at);
    }
    builder.build()
}

fn to_offset(at: Timestamp) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(at.as_datetime().timestamp())
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
}
