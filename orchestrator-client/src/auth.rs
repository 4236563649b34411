//! `/auth/*`.

use crate::client::{Client, M, decode};
use crate::error::Result;
use crate::session::{Session, refreshed_session, session_cookies};
use orchestrator_core::api::{DataEnvelope, LoggedOut, Me, TokenRequest, TokenResponse};

/// The `Auth` routes: get one from [`Client::auth`](crate::Client::auth).
pub struct Auth<'c> {
    pub(crate) client: &'c Client,
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
