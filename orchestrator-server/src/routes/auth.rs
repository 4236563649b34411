//! `/auth/*`: the token exchange, `me`, refresh and logout.

use crate::app::App;
use crate::credentials::{self, ACCESS_COOKIE, REFRESH_COOKIE, cookie_value, csrf_header};
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use http::header::SET_COOKIE;
use orchestrator_core::Error;
use orchestrator_core::api::{LoggedOut, RefreshResponse, TokenRequest, TokenResponse};
use orchestrator_core::auth::sessions::{IssuedSession, Via};
use std::sync::Arc;

/// `POST /auth/token` and `/auth/login`.
pub(crate) async fn token(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let body: TokenRequest = req.json()?;
    let session = app
        .core
        .exchange_api_key(&body.api_key, body.persistent_session.unwrap_or(true))
        .await?;
    let data = TokenResponse {
        token: session.access_token.clone(),
        expires_at: session.expires_at,
        refresh_expires_at: session.refresh_expires_at,
        scope: session.scope,
        tenant_id: session.tenant_id,
    };
    Ok(with_session_cookies(req.ok(&data), &req, &session))
}

/// `GET /auth/me`.
pub(crate) async fn me(_app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    Ok(req.ok(&req.caller()?.me()))
}

/// `POST /auth/refresh`: the refresh token from a bearer header, or from the
/// refresh cookie together with the session's CSRF token in the header.
pub(crate) async fn refresh(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let (token, via) = match credentials::presented(req.headers())? {
        credentials::Presented::Bearer(token) => (token, Via::Bearer),
        _ => {
            let token = cookie_value(req.headers(), REFRESH_COOKIE).ok_or_else(|| {
                Error::unauthorized(
                    "no refresh token: send it as a bearer token or in the refresh cookie",
                )
            })?;
            let via = Via::Cookie {
                csrf_header: csrf_header(req.headers()),
            };
            (token, via)
        }
    };
    let session = app.core.refresh_session(&token, via).await?;
    let data = RefreshResponse {
        token: session.access_token.clone(),
        expires_at: session.expires_at,
        refresh_expires_at: session.refresh_expires_at,
    };
    Ok(with_session_cookies(req.ok(&data), &req, &session))
}

/// `POST /auth/logout`: revokes the session (refresh family, with every
/// access token issued from it) when the request proves it holds it: a
/// bearer refresh or access token, or the session cookies with the session's
/// CSRF token in the header. Cookies without it are refused (401) and revoke
/// nothing. Clears the cookies; a request naming no live session is fine.
pub(crate) async fn logout(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    match credentials::presented(req.headers()) {
        Ok(credentials::Presented::Bearer(token)) => {
            app.core.logout(&[token.as_str()], Via::Bearer).await?;
        }
        _ => {
            let cookies: Vec<String> = [REFRESH_COOKIE, ACCESS_COOKIE]
                .into_iter()
                .filter_map(|name| cookie_value(req.headers(), name))
                .collect();
            let cookies: Vec<&str> = cookies.iter().map(String::as_str).collect();
            let via = Via::Cookie {
                csrf_header: csrf_header(req.headers()),
            };
            app.core.logout(&cookies, via).await?;
        }
    }
    let mut reply = req.ok(&LoggedOut { logged_out: true });
    for cookie in credentials::clearing_cookies(&req) {
        reply = reply.with_header(SET_COOKIE, cookie);
    }
    Ok(reply)
}

fn with_session_cookies(mut reply: Reply, req: &Req, session: &IssuedSession) -> Reply {
    for cookie in credentials::session_cookies(req, session) {
        reply = reply.with_header(SET_COOKIE, cookie);
    }
    reply
}
