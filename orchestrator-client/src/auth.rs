//! `/auth/*`.

use crate::client::{Client, M, decode};
use crate::error::Result;
use orchestrator_core::api::{
    DataEnvelope, LoggedOut, Me, RefreshResponse, TokenRequest, TokenResponse,
};

/// The `Auth` routes: get one from [`Client::auth`](crate::Client::auth).
pub struct Auth<'c> {
    pub(crate) client: &'c Client,
}

/// What a token exchange or refresh hands a non-browser client: the access
/// token and, read from the `Set-Cookie` headers, the refresh and CSRF tokens.
#[derive(Debug, Clone)]
pub struct Session {
    /// The access token (bearer).
    pub token: String,
    /// When the access token expires.
    pub expires_at: orchestrator_core::api::Timestamp,
    /// When the refresh token expires.
    pub refresh_expires_at: orchestrator_core::api::Timestamp,
    /// The refresh token (from the `Set-Cookie` header).
    pub refresh_token: Option<String>,
    /// The CSRF token (from the `Set-Cookie` header).
    pub csrf_token: Option<String>,
    /// The scope and tenant (present on the exchange, not on a refresh).
    pub exchange: Option<TokenResponse>,
}

impl Auth<'_> {
    /// `POST /auth/token`: trades an API key for a session.
    pub async fn token(&self, api_key: &str, persistent_session: bool) -> Result<Session> {
        let body = TokenRequest {
            api_key: api_key.to_owned(),
            persistent_session: Some(persistent_session),
        };
        let builder = self
            .client
            .request(M::POST, "/api/v1/auth/token")
            .json(&body);
        let response = self.client.send(builder).await?;
        let (refresh_token, csrf_token) = session_cookies(&response);
        let data: TokenResponse = decode::<DataEnvelope<TokenResponse>>(response).await?.data;
        Ok(Session {
            token: data.token.clone(),
            expires_at: data.expires_at,
            refresh_expires_at: data.refresh_expires_at,
            refresh_token,
            csrf_token,
            exchange: Some(data),
        })
    }

    /// `GET /auth/me` with the client's credential.
    pub async fn me(&self) -> Result<Me> {
        self.client
            .data(self.client.request(M::GET, "/api/v1/auth/me"))
            .await
    }

    /// `POST /auth/refresh` with a refresh token as the bearer.
    pub async fn refresh(&self, refresh_token: &str) -> Result<Session> {
        let builder =
            self.client
                .request_with_bearer(M::POST, "/api/v1/auth/refresh", refresh_token);
        refreshed_session(self.client.send(builder).await?).await
    }

    /// `POST /auth/logout`, revoking `refresh_token`'s session when given.
    pub async fn logout(&self, refresh_token: Option<&str>) -> Result<LoggedOut> {
        let request = match refresh_token {
            Some(token) => self
                .client
                .request_with_bearer(M::POST, "/api/v1/auth/logout", token),
            None => self.client.request(M::POST, "/api/v1/auth/logout"),
        };
        self.client.data(request).await
    }
}

/// The session a `POST /auth/refresh` answered: the access token from the
/// body, the rotated refresh token and CSRF token from the cookies.
pub(crate) async fn refreshed_session(response: reqwest::Response) -> Result<Session> {
    let (refresh_token, csrf_token) = session_cookies(&response);
    let data: RefreshResponse = decode::<DataEnvelope<RefreshResponse>>(response)
        .await?
        .data;
    Ok(Session {
        token: data.token,
        expires_at: data.expires_at,
        refresh_expires_at: data.refresh_expires_at,
        refresh_token,
        csrf_token,
        exchange: None,
    })
}

/// The refresh and CSRF cookie values of a response.
fn session_cookies(response: &reqwest::Response) -> (Option<String>, Option<String>) {
    let mut refresh = None;
    let mut csrf = None;
    for value in response.headers().get_all(reqwest::header::SET_COOKIE) {
        let Ok(text) = value.to_str() else { continue };
        let Ok(cookie) = cookie::Cookie::parse(text.to_owned()) else {
            continue;
        };
        match cookie.name() {
            "service_refresh_token" => refresh = Some(cookie.value().to_owned()),
            "service_csrf_token" => csrf = Some(cookie.value().to_owned()),
            _ => {}
        }
    }
    (refresh, csrf)
}
