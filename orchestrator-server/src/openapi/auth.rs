//! Authentication: each route's input and output types.

use super::describe::*;
use http::Method as M;
use orchestrator_core::api::*;

/// Authentication.
pub(super) fn docs() -> Vec<Doc> {
    vec![
        op(M::POST, "/api/v1/auth/token", "Exchange an API key for a session", ok::<TokenResponse>()).body::<TokenRequest>(),
        op(M::POST, "/api/v1/auth/login", "Exchange an API key for a session (alias of /auth/token)", ok::<TokenResponse>()).body::<TokenRequest>(),
        op(M::GET, "/api/v1/auth/me", "The caller", ok::<Me>()),
        op(M::POST, "/api/v1/auth/refresh", "A new access token from a refresh token (bearer or refresh cookie with the CSRF header)", ok::<RefreshResponse>()),
        op(M::POST, "/api/v1/auth/logout", "End the session and clear the cookies", ok::<LoggedOut>()),
    ]
}
