//! The OAuth operations of a remote MCP server (`authMode: oauth`):
//! reconnect (discovery, registration, a pending authorization with PKCE),
//! the public callback (code exchange, tokens sealed, verification with the
//! bearer token), disconnect (revocation, tokens deleted), and the bearer
//! token for verification and claim credentials, refreshed before expiry.

use super::fields::{self, open_parameters, scrub, target};
use super::oauth::{self, OAuthRow};
use super::rows::{find_server, require_server, save_row};
use super::verify::{self, Failure};
use super::{record_event, verification_failed};
use crate::api::{McpAuthMode, OAuthAuthorization, RemoteMcpServer, VerificationStatus};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::secrets::{random_base62, sha256_hex};
use oauth2::{AccessToken, RefreshToken, StandardRevocableToken};
use reqwest::Url;
use serde_json::json;
use sqlx::types::Json;
use std::time::Duration;
use uuid::Uuid;

fn timeout_of(seconds: i32) -> Duration {
    Duration::from_secs(u64::try_from(seconds.max(1)).unwrap_or(1))
}

fn bad_state() -> Error {
    Error::invalid_field(
        "state",
        "unknown, expired or already used; start again with oauth/reconnect",
    )
}

impl ControlPlane {
    /// Refuses hosts orch must not reach (unless private networks are allowed).
    async fn check_oauth_host(&self, url: Url) -> Result<()> {
        if self.config().allow_private_network {
            return Ok(());
        }
        let host = url.host_str().unwrap_or_default().to_owned();
        crate::git::check_public_host("endpointUrl", &host).await
    }

    /// The server's stored `oauthStatus`.
    pub(super) async fn current_oauth_status(&self, tenant_id: Uuid, id: Uuid) -> Result<String> {
        let mut conn = self.store().read().await?;
        Ok(find_server(&mut conn, tenant_id, id)
            .await?
            .map(|row| row.oauth_status)
            .unwrap_or_else(|| oauth::DISCONNECTED.to_owned()))
    }

    /// The access token of server `id`, refreshed first when it expires
    /// within a minute. `None` when not connected, or when the refresh
    /// failed (the server is then marked `expired`).
    pub(super) async fn oauth_bearer(&self, tenant_id: Uuid, id: Uuid) -> Result<Option<String>> {
        let (row, timeout) = {
            let mut conn = self.store().read().await?;
            let Some(server) = find_server(&mut conn, tenant_id, id).await? else {
                return Ok(None);
            };
            let Some(row) = oauth::find(&mut conn, tenant_id, id).await? else {
                return Ok(None);
            };
            (row, timeout_of(server.call_timeout_seconds))
        };
        let Some(sealed_access) = &row.access_token else {
            return Ok(None);
        };
        let now = self.now().as_datetime();
        if !oauth::needs_refresh(&row, now) {
            return oauth::open(self.secrets(), &row, "access_token", sealed_access).map(Some);
        }
        let secrets = self.secrets();
        let refresh_token = row
            .refresh_token
            .as_deref()
            .map(|sealed| oauth::open(secrets, &row, "refresh_token", sealed))
            .transpose()?;
        let client_secret = row
            .client_secret
            .as_deref()
            .map(|sealed| oauth::open(secrets, &row, "client_secret", sealed))
            .transpose()?;
        let refreshed = match refresh_token.clone() {
            Some(token) => oauth::refresh(&row, client_secret, token, timeout, now)
                .await
                .ok(),
            None => None,
        };
        let Some(tokens) = refreshed else {
            // Refresh tokens rotate: a concurrent use may have refreshed
            // first, so our refresh token is spent. Wait (bounded) for its
            // result to be stored before calling the connection expired.
            if let Some(token) = self.refreshed_meanwhile(&row, timeout).await? {
                return Ok(Some(token));
            }
            let mut tx = self.store().begin().await?;
            oauth::set_status(&mut tx, tenant_id, id, oauth::EXPIRED, now).await?;
            tx.commit().await?;
            return Ok(None);
        };
        let mut tx = self.store().begin().await?;
        let updated = OAuthRow {
            access_token: Some(oauth::seal(
                secrets,
                &row,
                "access_token",
                &tokens.access_token,
            )),
            refresh_token: tokens
                .refresh_token
                .as_deref()
                .map(|t| oauth::seal(secrets, &row, "refresh_token", t))
                .or(row.refresh_token.clone()),
            expires_at: tokens.expires_at,
            updated_at: now,
            ..row.clone()
        };
        oauth::save(&mut tx, &updated).await?;
        oauth::set_status(&mut tx, tenant_id, id, oauth::CONNECTED, now).await?;
        tx.commit().await?;
        Ok(Some(tokens.access_token))
    }

    /// The access token another caller stored after refreshing `used`'s
    /// refresh token, waiting up to `timeout` for it.
    async fn refreshed_meanwhile(
        &self,
        used: &OAuthRow,
        timeout: Duration,
    ) -> Result<Option<String>> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let current = {
                let mut conn = self.store().read().await?;
                oauth::find(&mut conn, used.tenant_id, used.server_id).await?
            };
            let Some(current) = current else {
                return Ok(None);
            };
            if current.refresh_token != used.refresh_token
                && let Some(sealed) = &current.access_token
            {
                return oauth::open(self.secrets(), &current, "access_token", sealed).map(Some);
            }
            if tokio::time::Instant::now() >= deadline {
                return Ok(None);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// `POST /remote-mcp-servers/:id/oauth/reconnect`: discovers the
    /// authorization server, registers orch as a client, and stores a
    /// pending authorization (state and PKCE verifier, valid ten minutes).
    /// `redirect_uri` is the callback on the address the admin used.
    pub async fn reconnect_remote_mcp_oauth(
        &self,
        caller: &Caller,
        id: Uuid,
        redirect_uri: &str,
    ) -> Result<OAuthAuthorization> {
        let server = {
            let mut conn = self.store().read().await?;
            require_server(&mut conn, caller.tenant_id, id).await?
        };
        if server.auth_mode != McpAuthMode::Oauth.as_str() {
            return Err(Error::invalid_field(
                "authMode",
                "the server's authMode is not oauth",
            ));
        }
        let endpoint = fields::endpoint(&server.endpoint_url)?;
        self.check_oauth_host(endpoint.clone()).await?;
        let timeout = timeout_of(server.call_timeout_seconds);
        let preference = server.transport_preference();
        let found = oauth::discover(&endpoint, timeout, |url| self.check_oauth_host(url))
            .await
            .map_err(|f| verification_failed(&f, preference))?;
        let Some(registration_endpoint) = &found.registration_endpoint else {
            return Err(verification_failed(
                &Failure {
                    step: "oauth_registration",
                    reason: "the authorization server offers no dynamic client registration \
                             (RFC 7591)"
                        .into(),
                },
                preference,
            ));
        };
        // Every endpoint orch itself calls must be one it may reach.
        let mut called: Vec<String> =
            vec![registration_endpoint.clone(), found.token_endpoint.clone()];
        called.extend(found.revocation_endpoint.clone());
        for url in called {
            self.check_oauth_host(Url::parse(&url).map_err(Error::internal)?)
                .await?;
        }
        let (client_id, client_secret) =
            oauth::register(registration_endpoint, redirect_uri, timeout)
                .await
                .map_err(|f| verification_failed(&f, preference))?;
        let stored = {
            let mut conn = self.store().read().await?;
            oauth::find(&mut conn, caller.tenant_id, id).await?
        };
        let now = self.now().as_datetime();
        let state = random_base62(43);
        let mut row = OAuthRow {
            server_id: id,
            tenant_id: caller.tenant_id,
            issuer: found.issuer,
            authorization_endpoint: found.authorization_endpoint,
            token_endpoint: found.token_endpoint,
            revocation_endpoint: found.revocation_endpoint,
            client_id,
            client_secret: None,
            redirect_uri: redirect_uri.to_owned(),
            resource: found.resource,
            scopes: found.scopes.join(" "),
            // Tokens of an earlier connection stay usable until replaced.
            access_token: stored.as_ref().and_then(|r| r.access_token.clone()),
            refresh_token: stored.as_ref().and_then(|r| r.refresh_token.clone()),
            expires_at: stored.as_ref().and_then(|r| r.expires_at),
            pending_state: Some(sha256_hex(&state)),
            pending_verifier: None,
            pending_expires_at: Some(now + chrono::Duration::minutes(oauth::PENDING_MINUTES)),
            updated_at: now,
        };
        row.client_secret =
            client_secret.map(|s| oauth::seal(self.secrets(), &row, "client_secret", &s));
        let (authorization_url, verifier) = oauth::authorization_url(&row, &state)
            .map_err(|f| verification_failed(&f, preference))?;
        row.pending_verifier = Some(oauth::seal(self.secrets(), &row, "verifier", &verifier));
        let mut tx = self.store().begin().await?;
        oauth::save(&mut tx, &row).await?;
        record_event(
            &mut tx,
            caller,
            "remote_mcp_server.oauth_started",
            &server,
            json!({ "issuer": row.issuer }),
        )
        .await?;
        tx.commit().await?;
        Ok(OAuthAuthorization { authorization_url })
    }

    /// `GET /remote-mcp-servers/oauth/callback` (public; the one-time
    /// `state` authenticates it): exchanges the code with the PKCE
    /// verifier, stores the tokens sealed, marks the server `connected`
    /// and verifies it with the bearer token. Answers the record.
    pub async fn finish_remote_mcp_oauth(
        &self,
        code: Option<&str>,
        state: Option<&str>,
        error: Option<&str>,
    ) -> Result<RemoteMcpServer> {
        let state = state.filter(|s| !s.is_empty()).ok_or_else(bad_state)?;
        let now = self.now().as_datetime();
        let mut tx = self.store().begin().await?;
        let row = oauth::take_pending(&mut tx, &sha256_hex(state), now).await?;
        tx.commit().await?;
        let row = row.ok_or_else(bad_state)?;
        let (tenant_id, id) = (row.tenant_id, row.server_id);
        let server = {
            let mut conn = self.store().read().await?;
            require_server(&mut conn, tenant_id, id).await?
        };
        let secrets = self.secrets();
        let mut cleared = OAuthRow {
            pending_verifier: None,
            updated_at: now,
            ..row.clone()
        };
        let fail = |reason: String| Error::invalid_field("code", reason);
        let exchanged = match (error, code.filter(|c| !c.is_empty()), &row.pending_verifier) {
            (Some(error), _, _) => Err(fail(format!(
                "the authorization server answered error `{}`",
                error.chars().take(100).collect::<String>()
            ))),
            (None, None, _) => Err(fail("no code in the callback".into())),
            (None, Some(_), None) => Err(bad_state()),
            (None, Some(code), Some(sealed)) => {
                let verifier = oauth::open(secrets, &row, "verifier", sealed)?;
                let client_secret = row
                    .client_secret
                    .as_deref()
                    .map(|s| oauth::open(secrets, &row, "client_secret", s))
                    .transpose()?;
                oauth::exchange_code(
                    &row,
                    client_secret,
                    code,
                    verifier,
                    timeout_of(server.call_timeout_seconds),
                    self.now().as_datetime(),
                )
                .await
                .map_err(|f| verification_failed(&f, server.transport_preference()))
            }
        };
        let tokens = match exchanged {
            Ok(tokens) => tokens,
            Err(e) => {
                let mut tx = self.store().begin().await?;
                oauth::save(&mut tx, &cleared).await?;
                oauth::set_status(&mut tx, tenant_id, id, oauth::ERROR, now).await?;
                tx.commit().await?;
                return Err(e);
            }
        };
        cleared.access_token = Some(oauth::seal(
            secrets,
            &row,
            "access_token",
            &tokens.access_token,
        ));
        cleared.refresh_token = tokens
            .refresh_token
            .as_deref()
            .map(|t| oauth::seal(secrets, &row, "refresh_token", t));
        cleared.expires_at = tokens.expires_at;
        {
            let mut tx = self.store().begin().await?;
            oauth::save(&mut tx, &cleared).await?;
            oauth::set_status(&mut tx, tenant_id, id, oauth::CONNECTED, now).await?;
            tx.commit().await?;
        }
        // Verify with the fresh token.
        let clear = open_parameters(secrets, tenant_id, id, &server.parameters.0)?;
        let endpoint = fields::endpoint(&server.endpoint_url)?;
        self.check_oauth_host(endpoint.clone()).await?;
        let mut reached = target(endpoint, &clear, server.call_timeout_seconds);
        reached.bearer = Some(tokens.access_token.clone());
        let outcome = verify::verify(&reached, server.transport_preference()).await;
        let now = self.now().as_datetime();
        let mut server = super::rows::ServerRow {
            oauth_status: oauth::CONNECTED.into(),
            updated_at: now,
            ..server
        };
        match outcome {
            Ok(verified) => {
                server.verification_status = VerificationStatus::Verified.as_str().into();
                server.verification_error = None;
                server.verification_failed_step = None;
                server.resolved_transport = Some(verified.transport.as_str().into());
                server.capabilities = Json(verified.capabilities);
                server.verified_at = Some(now);
            }
            Err(failure) => {
                let reason =
                    scrub(&failure.reason, &clear).replace(&tokens.access_token, "********");
                server.verification_status = VerificationStatus::Failed.as_str().into();
                server.verification_error = Some(reason);
                server.verification_failed_step = Some(failure.step.into());
            }
        }
        let mut tx = self.store().begin().await?;
        let server = save_row(&mut tx, &server, false).await?;
        tx.commit().await?;
        Ok(server.to_api())
    }

    /// `POST /remote-mcp-servers/:id/oauth/disconnect`: revokes the tokens
    /// at the revocation endpoint when one is offered (RFC 7009), deletes
    /// them and marks the server `disconnected`.
    pub async fn disconnect_remote_mcp_oauth(
        &self,
        caller: &Caller,
        id: Uuid,
    ) -> Result<RemoteMcpServer> {
        let (server, row) = {
            let mut conn = self.store().read().await?;
            let server = require_server(&mut conn, caller.tenant_id, id).await?;
            let row = oauth::find(&mut conn, caller.tenant_id, id).await?;
            (server, row)
        };
        if server.auth_mode != McpAuthMode::Oauth.as_str() {
            return Err(Error::invalid_field(
                "authMode",
                "the server's authMode is not oauth",
            ));
        }
        let mut revoked = false;
        if let Some(row) = &row {
            let secrets = self.secrets();
            let mut tokens = Vec::new();
            if let Some(sealed) = &row.refresh_token {
                tokens.push(StandardRevocableToken::RefreshToken(RefreshToken::new(
                    oauth::open(secrets, row, "refresh_token", sealed)?,
                )));
            }
            if let Some(sealed) = &row.access_token {
                tokens.push(StandardRevocableToken::AccessToken(AccessToken::new(
                    oauth::open(secrets, row, "access_token", sealed)?,
                )));
            }
            let client_secret = row
                .client_secret
                .as_deref()
                .map(|s| oauth::open(secrets, row, "client_secret", s))
                .transpose()?;
            let revocation = row
                .revocation_endpoint
                .as_deref()
                .and_then(|u| Url::parse(u).ok());
            if let Some(url) = revocation.filter(|_| !tokens.is_empty())
                && self.check_oauth_host(url).await.is_ok()
            {
                revoked = oauth::revoke(
                    row,
                    client_secret,
                    tokens,
                    timeout_of(server.call_timeout_seconds),
                )
                .await;
            }
        }
        let now = self.now().as_datetime();
        let mut tx = self.store().begin().await?;
        oauth::delete(&mut tx, caller.tenant_id, id).await?;
        oauth::set_status(&mut tx, caller.tenant_id, id, oauth::DISCONNECTED, now).await?;
        let server = require_server(&mut tx, caller.tenant_id, id).await?;
        record_event(
            &mut tx,
            caller,
            "remote_mcp_server.oauth_disconnected",
            &server,
            json!({ "revoked": revoked }),
        )
        .await?;
        tx.commit().await?;
        Ok(server.to_api())
    }
}
