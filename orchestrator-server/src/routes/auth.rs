//! `/auth/*`: the token exchange, `me`, refresh and logout.

use crate::app::App;
use crate::credentials::{self, REFRESH_COOKIE, check_csrf, cookie_value};
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use http::header::SET_COOKIE;
use orchestrator_core::Error;
use orchestrator_core::api::{LoggedOut, RefreshResponse, TokenRequest, TokenResponse};
use orchestrator_core::auth::sessions::IssuedSession;
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
/// refresh cookie together with a matching CSRF header.
pub(crate) async fn refresh(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let token = match credentials::presented(req.headers())? {
        credentials::Presented::Bearer(token) => token,
        _ => {
            let token = cookie_value(req.headers(), REFRESH_COOKIE).ok_or_else(|| {
                Error::unauthorized(
                    "no refresh token: send it as a bearer token or in the refresh cookie",
                )
            })?;
            check_csrf(req.headers())?;
            token
        }
    };
    let session = app.core.refresh_session(&token).await?;
    let data = RefreshResponse {
        token: session.access_token.clone(),
        expires_at: session.expires_at,
        refresh_expires_at: session.refresh_expires_at,
    };
    Ok(with_session_cookies(req.ok(&data), &req, &session))
}

/// `POST /auth/logout`: revokes the session when the request proves it holds
/// it (a bearer refresh token, or the cookie with its CSRF header), and
/// always clears the cookies.
pub(crate) async fn logout(app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let token = match credentials::presented(req.headers()) {
        Ok(credentials::Presented::Bearer(token)) => Some(token),
        _ => cookie_value(req.headers(), REFRESH_COOKIE)
            .filter(|_| check_csrf(req.headers()).is_ok()),
    };
    app.core.logout(token.as_deref()).await?;
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
