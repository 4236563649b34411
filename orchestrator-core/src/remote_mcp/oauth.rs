//! OAuth 2.1 for remote MCP servers with `authMode: oauth`, as the MCP
//! authorization spec describes: the protected-resource metadata (RFC 9728,
//! from the `resource_metadata` hint of a 401 or the well-known URI), the
//! authorization-server metadata (RFC 8414), dynamic client registration
//! (RFC 7591), then authorization code with PKCE S256 and the `resource`
//! parameter (RFC 8707). The token calls (code exchange, refresh,
//! revocation per RFC 7009) go through the `oauth2` crate over orch's own
//! reqwest client; discovery and registration are plain JSON documents.
//!
//! Tokens, the client secret and the PKCE verifier are sealed with the
//! deployment's key, bound to the tenant and the server; the pending state
//! is stored only as its SHA-256, and is used once (an `UPDATE ... WHERE`
//! that clears it).

use super::verify::Failure;
use crate::error::{Error, Result};
use crate::secrets::Secrets;
use crate::store::{Access, Tx, on_db};
use chrono::{DateTime, Utc};
use oauth2::basic::BasicClient;
use oauth2::{
    AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, PkceCodeChallenge,
    PkceCodeVerifier, RedirectUrl, RefreshToken, RevocationUrl, Scope, StandardRevocableToken,
    TokenResponse, TokenUrl,
};
use reqwest::{Client, Url};
use serde_json::{Value, json};
use std::time::Duration;
use uuid::Uuid;

/// `oauthStatus` values.
pub(crate) const NOT_APPLICABLE: &str = "not_applicable";
pub(crate) const DISCONNECTED: &str = "disconnected";
pub(crate) const CONNECTED: &str = "connected";
pub(crate) const EXPIRED: &str = "expired";
pub(crate) const ERROR: &str = "error";

/// How long an authorization started by a reconnect may be finished.
pub(crate) const PENDING_MINUTES: i64 = 10;
/// An access token this close to its expiry is refreshed before use.
const REFRESH_MARGIN_SECONDS: i64 = 60;

#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct OAuthRow {
    pub server_id: Uuid,
    pub tenant_id: Uuid,
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub revocation_endpoint: Option<String>,
    pub client_id: String,
    /// Sealed.
    pub client_secret: Option<String>,
    pub redirect_uri: String,
    pub resource: String,
    pub scopes: String,
    /// Sealed.
    pub access_token: Option<String>,
    /// Sealed.
    pub refresh_token: Option<String>,
    pub expires_at: Option<DateTime<Utc>>,
    /// SHA-256 of the one-time state of a pending authorization.
    pub pending_state: Option<String>,
    /// Sealed PKCE verifier of the pending authorization.
    pub pending_verifier: Option<String>,
    pub pending_expires_at: Option<DateTime<Utc>>,
    pub updated_at: DateTime<Utc>,
}

macro_rules! oauth_columns {
    () => {
        "server_id, tenant_id, issuer, authorization_endpoint, token_endpoint, \
         revocation_endpoint, client_id, client_secret, redirect_uri, resource, scopes, \
         access_token, refresh_token, expires_at, pending_state, pending_verifier, \
         pending_expires_at, updated_at"
    };
}

fn context(tenant_id: Uuid, server_id: Uuid, what: &str) -> String {
    format!("remote_mcp_oauth:{tenant_id}:{server_id}:{what}")
}

pub(crate) fn seal(secrets: &Secrets, row: &OAuthRow, what: &str, value: &str) -> String {
    secrets.encrypt(
        value.as_bytes(),
        context(row.tenant_id, row.server_id, what).as_bytes(),
    )
}

pub(crate) fn open(secrets: &Secrets, row: &OAuthRow, what: &str, sealed: &str) -> Result<String> {
    let bytes = secrets.decrypt(
        sealed,
        context(row.tenant_id, row.server_id, what).as_bytes(),
    )?;
    String::from_utf8(bytes).map_err(Error::internal)
}

pub(crate) async fn find(
    access: &mut impl Access,
    tenant_id: Uuid,
    server_id: Uuid,
) -> Result<Option<OAuthRow>> {
    Ok(on_db!(access, c => sqlx::query_as(concat!(
        "SELECT ", oauth_columns!(), " FROM remote_mcp_oauth WHERE tenant_id = $1 AND server_id = $2"
    ))
    .bind(tenant_id)
    .bind(server_id)
    .fetch_optional(c)
    .await)?)
}

/// Takes the pending authorization of `state_hash` if it has not expired:
/// the state is cleared in the same statement, so it works once (the
/// verifier is returned and cleared by the caller's next save).
pub(crate) async fn take_pending(
    tx: &mut Tx,
    state_hash: &str,
    now: DateTime<Utc>,
) -> Result<Option<OAuthRow>> {
    Ok(on_db!(tx, c => sqlx::query_as(concat!(
        "UPDATE remote_mcp_oauth SET pending_state = NULL, pending_expires_at = NULL, \
         updated_at = $3 WHERE pending_state = $1 AND pending_expires_at > $2 RETURNING ",
        oauth_columns!()
    ))
    .bind(state_hash)
    .bind(now)
    .bind(now)
    .fetch_optional(c)
    .await)?)
}

/// Inserts or replaces the row of its server.
pub(crate) async fn save(tx: &mut Tx, row: &OAuthRow) -> Result<()> {
    on_db!(tx, c => sqlx::query(concat!(
        "INSERT INTO remote_mcp_oauth (", oauth_columns!(), ") VALUES \
         ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) \
         ON CONFLICT (server_id) DO UPDATE SET issuer = excluded.issuer, \
         authorization_endpoint = excluded.authorization_endpoint, \
         token_endpoint = excluded.token_endpoint, \
         revocation_endpoint = excluded.revocation_endpoint, client_id = excluded.client_id, \
         client_secret = excluded.client_secret, redirect_uri = excluded.redirect_uri, \
         resource = excluded.resource, scopes = excluded.scopes, \
         access_token = excluded.access_token, refresh_token = excluded.refresh_token, \
         expires_at = excluded.expires_at, pending_state = excluded.pending_state, \
         pending_verifier = excluded.pending_verifier, \
         pending_expires_at = excluded.pending_expires_at, updated_at = excluded.updated_at"
    ))
    .bind(row.server_id)
    .bind(row.tenant_id)
    .bind(&row.issuer)
    .bind(&row.authorization_endpoint)
    .bind(&row.token_endpoint)
    .bind(&row.revocation_endpoint)
    .bind(&row.client_id)
    .bind(&row.client_secret)
    .bind(&row.redirect_uri)
    .bind(&row.resource)
    .bind(&row.scopes)
    .bind(&row.access_token)
    .bind(&row.refresh_token)
    .bind(row.expires_at)
    .bind(&row.pending_state)
    .bind(&row.pending_verifier)
    .bind(row.pending_expires_at)
    .bind(row.updated_at)
    .execute(c)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

pub(crate) async fn delete(tx: &mut Tx, tenant_id: Uuid, server_id: Uuid) -> Result<()> {
    on_db!(tx, c => sqlx::query(
        "DELETE FROM remote_mcp_oauth WHERE tenant_id = $1 AND server_id = $2",
    )
    .bind(tenant_id)
    .bind(server_id)
    .execute(c)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Sets the server's `oauthStatus`.
pub(crate) async fn set_status(
    tx: &mut Tx,
    tenant_id: Uuid,
    server_id: Uuid,
    status: &str,
    now: DateTime<Utc>,
) -> Result<()> {
    on_db!(tx, c => sqlx::query(
        "UPDATE remote_mcp_servers SET oauth_status = $3, updated_at = $4 \
         WHERE tenant_id = $1 AND id = $2",
    )
    .bind(tenant_id)
    .bind(server_id)
    .bind(status)
    .bind(now)
    .execute(c)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

// ---- discovery and registration -----------------------------------------

/// What discovery found.
pub(crate) struct Discovered {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub registration_endpoint: Option<String>,
    pub revocation_endpoint: Option<String>,
    pub resource: String,
    pub scopes: Vec<String>,
}

fn failure(step: &'static str, reason: impl Into<String>) -> Failure {
    Failure {
        step,
        reason: reason.into(),
    }
}

async fn get_json(http: &Client, url: &Url) -> Option<Value> {
    let response = http
        .get(url.clone())
        .header("accept", "application/json")
        .send()
        .await
        .ok()?;
    if !response.status().is_success() {
        return None;
    }
    response.json::<Value>().await.ok()
}

/// `origin/.well-known/{name}{path}` (the path inserted after the
/// well-known prefix, RFC 8414 §3 and RFC 9728 §3), then without the path.
fn well_known(base: &Url, name: &str) -> Vec<Url> {
    let path = base.path().trim_end_matches('/');
    let mut candidates = Vec::new();
    for suffix in [path, ""] {
        let mut url = base.clone();
        url.set_query(None);
        url.set_path(&format!("/.well-known/{name}{suffix}"));
        if !candidates.contains(&url) {
            candidates.push(url);
        }
    }
    candidates
}

/// `resource_metadata="..."` of a `WWW-Authenticate: Bearer` header.
fn resource_metadata_hint(header: &str) -> Option<String> {
    let at = header.find("resource_metadata=")?;
    let rest = header[at + "resource_metadata=".len()..].trim_start();
    let value = match rest.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next()?,
        None => rest.split([',', ' ']).next()?,
    };
    Some(value.to_owned())
}

fn string_list(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Finds the authorization server of the MCP server at `endpoint`.
/// `check_host` refuses hosts orch must not reach (private networks).
pub(crate) async fn discover<F, Fut>(
    endpoint: &Url,
    timeout: Duration,
    check_host: F,
) -> std::result::Result<Discovered, Failure>
where
    F: Fn(Url) -> Fut,
    Fut: std::future::Future<Output = Result<()>>,
{
    let http = client(timeout)?;
    // An unauthenticated request answers 401 with the metadata's address.
    let hint = http
        .post(endpoint.clone())
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 0, "method": "ping"}))
        .send()
        .await
        .ok()
        .and_then(|r| {
            r.headers()
                .get(reqwest::header::WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .and_then(resource_metadata_hint)
        })
        .and_then(|hint| Url::parse(&hint).ok());
    let mut candidates: Vec<Url> = hint.into_iter().collect();
    candidates.extend(well_known(endpoint, "oauth-protected-resource"));
    let mut resource_metadata = None;
    for url in candidates {
        check_host(url.clone())
            .await
            .map_err(|e| failure("oauth_discovery", e.to_string()))?;
        if let Some(found) = get_json(&http, &url).await {
            resource_metadata = Some(found);
            break;
        }
    }
    let resource_metadata = resource_metadata.ok_or_else(|| {
        failure(
            "oauth_discovery",
            "no protected-resource metadata (RFC 9728) was found for the endpoint",
        )
    })?;
    let issuer = resource_metadata["authorization_servers"]
        .as_array()
        .and_then(|list| list.first())
        .and_then(Value::as_str)
        .and_then(|s| Url::parse(s).ok())
        .ok_or_else(|| {
            failure(
                "oauth_discovery",
                "the protected-resource metadata names no authorization server",
            )
        })?;
    let mut metadata = None;
    let mut candidates = well_known(&issuer, "oauth-authorization-server");
    candidates.extend(well_known(&issuer, "openid-configuration"));
    for url in candidates {
        check_host(url.clone())
            .await
            .map_err(|e| failure("oauth_discovery", e.to_string()))?;
        if let Some(found) = get_json(&http, &url).await {
            metadata = Some(found);
            break;
        }
    }
    let metadata = metadata.ok_or_else(|| {
        failure(
            "oauth_discovery",
            "no authorization-server metadata (RFC 8414) was found",
        )
    })?;
    if !string_list(&metadata["code_challenge_methods_supported"])
        .iter()
        .any(|m| m == "S256")
    {
        return Err(failure(
            "oauth_discovery",
            "the authorization server does not offer PKCE S256",
        ));
    }
    let endpoint_of = |name: &str| -> Option<String> {
        metadata[name]
            .as_str()
            .filter(|s| Url::parse(s).is_ok())
            .map(str::to_owned)
    };
    let resource = resource_metadata["resource"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| endpoint.to_string());
    Ok(Discovered {
        issuer: metadata["issuer"]
            .as_str()
            .unwrap_or(issuer.as_str())
            .to_owned(),
        authorization_endpoint: endpoint_of("authorization_endpoint").ok_or_else(|| {
            failure(
                "oauth_discovery",
                "the metadata has no authorization_endpoint",
            )
        })?,
        token_endpoint: endpoint_of("token_endpoint")
            .ok_or_else(|| failure("oauth_discovery", "the metadata has no token_endpoint"))?,
        registration_endpoint: endpoint_of("registration_endpoint"),
        revocation_endpoint: endpoint_of("revocation_endpoint"),
        resource,
        scopes: string_list(&resource_metadata["scopes_supported"]),
    })
}

/// Dynamic client registration (RFC 7591) as a public client: answers the
/// client id and secret (if the server issued one).
pub(crate) async fn register(
    registration_endpoint: &str,
    redirect_uri: &str,
    timeout: Duration,
) -> std::result::Result<(String, Option<String>), Failure> {
    let http = client(timeout)?;
    let response = http
        .post(registration_endpoint)
        .json(&json!({
            "client_name": "orch",
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }))
        .send()
        .await
        .map_err(|e| failure("oauth_registration", e.to_string()))?;
    let status = response.status();
    if !status.is_success() {
        return Err(failure(
            "oauth_registration",
            format!("the registration endpoint answered {status}"),
        ));
    }
    let body: Value = response
        .json()
        .await
        .map_err(|e| failure("oauth_registration", e.to_string()))?;
    let client_id = body["client_id"]
        .as_str()
        .ok_or_else(|| failure("oauth_registration", "no client_id in the registration"))?;
    Ok((
        client_id.to_owned(),
        body["client_secret"].as_str().map(str::to_owned),
    ))
}

// ---- the token calls, through the oauth2 crate ------------------------------

fn client(timeout: Duration) -> std::result::Result<Client, Failure> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::builder()
        .connect_timeout(timeout)
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| failure("connect", format!("no HTTP client: {e}")))
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct HttpFailure(String);

async fn send(
    http: Client,
    request: oauth2::HttpRequest,
) -> std::result::Result<oauth2::HttpResponse, HttpFailure> {
    let request = reqwest::Request::try_from(request).map_err(|e| HttpFailure(e.to_string()))?;
    let response = http
        .execute(request)
        .await
        .map_err(|e| HttpFailure(e.to_string()))?;
    let mut answer = oauth2::http::Response::builder().status(response.status());
    for (name, value) in response.headers() {
        answer = answer.header(name, value);
    }
    let body = response
        .bytes()
        .await
        .map_err(|e| HttpFailure(e.to_string()))?;
    answer
        .body(body.to_vec())
        .map_err(|e| HttpFailure(e.to_string()))
}

/// Tokens answered by the token endpoint.
pub(crate) struct Tokens {
    pub access_token: String,
    pub refresh_token: Option<String>,
    pub expires_at: Option<DateTime<Utc>>,
}

fn tokens(answer: &oauth2::basic::BasicTokenResponse, now: DateTime<Utc>) -> Tokens {
    Tokens {
        access_token: answer.access_token().secret().clone(),
        refresh_token: answer.refresh_token().map(|t| t.secret().clone()),
        expires_at: answer
            .expires_in()
            .and_then(|d| chrono::Duration::from_std(d).ok())
            .map(|d| now + d),
    }
}

fn bad_url(e: impl std::fmt::Display) -> Failure {
    failure("oauth_discovery", format!("bad endpoint URL: {e}"))
}

/// The authorization URL of a new authorization (PKCE S256, `state`, the
/// scopes and the resource) and its PKCE verifier.
pub(crate) fn authorization_url(
    row: &OAuthRow,
    state: &str,
) -> std::result::Result<(String, String), Failure> {
    let oauth = BasicClient::new(ClientId::new(row.client_id.clone()))
        .set_auth_uri(AuthUrl::new(row.authorization_endpoint.clone()).map_err(bad_url)?)
        .set_redirect_uri(RedirectUrl::new(row.redirect_uri.clone()).map_err(bad_url)?);
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let state = state.to_owned();
    let (url, _) = oauth
        .authorize_url(move || CsrfToken::new(state.clone()))
        .add_scopes(
            row.scopes
                .split_whitespace()
                .map(|s| Scope::new(s.to_owned())),
        )
        .add_extra_param("resource", row.resource.clone())
        .set_pkce_challenge(challenge)
        .url();
    Ok((url.to_string(), verifier.secret().clone()))
}

fn token_client(
    row: &OAuthRow,
    client_secret: Option<String>,
) -> std::result::Result<
    oauth2::basic::BasicClient<
        oauth2::EndpointNotSet,
        oauth2::EndpointNotSet,
        oauth2::EndpointNotSet,
        oauth2::EndpointNotSet,
        oauth2::EndpointSet,
    >,
    Failure,
> {
    let mut oauth = BasicClient::new(ClientId::new(row.client_id.clone()))
        .set_token_uri(TokenUrl::new(row.token_endpoint.clone()).map_err(bad_url)?)
        .set_redirect_uri(RedirectUrl::new(row.redirect_uri.clone()).map_err(bad_url)?);
    if let Some(secret) = client_secret {
        oauth = oauth.set_client_secret(ClientSecret::new(secret));
    }
    Ok(oauth)
}

/// Exchanges an authorization code (with its PKCE verifier); the tokens'
/// expiry counts from `now`, the control plane's clock when it was asked.
pub(crate) async fn exchange_code(
    row: &OAuthRow,
    client_secret: Option<String>,
    code: &str,
    verifier: String,
    timeout: Duration,
    now: DateTime<Utc>,
) -> std::result::Result<Tokens, Failure> {
    let oauth = token_client(row, client_secret)?;
    let http = client(timeout)?;
    let call = move |request| send(http.clone(), request);
    let answer = oauth
        .exchange_code(AuthorizationCode::new(code.to_owned()))
        .set_pkce_verifier(PkceCodeVerifier::new(verifier))
        .add_extra_param("resource", row.resource.clone())
        .request_async(&call)
        .await
        .map_err(|e| failure("oauth_token", token_error(&e)))?;
    Ok(tokens(&answer, now))
}

/// Refreshes the access token (expiry counted from `now`, as above).
pub(crate) async fn refresh(
    row: &OAuthRow,
    client_secret: Option<String>,
    refresh_token: String,
    timeout: Duration,
    now: DateTime<Utc>,
) -> std::result::Result<Tokens, Failure> {
    let oauth = token_client(row, client_secret)?;
    let http = client(timeout)?;
    let call = move |request| send(http.clone(), request);
    let token = RefreshToken::new(refresh_token);
    let answer = oauth
        .exchange_refresh_token(&token)
        .add_extra_param("resource", row.resource.clone())
        .request_async(&call)
        .await
        .map_err(|e| failure("oauth_refresh", token_error(&e)))?;
    Ok(tokens(&answer, now))
}

/// Revokes `tokens` at the revocation endpoint (RFC 7009); answers whether
/// every call succeeded.
pub(crate) async fn revoke(
    row: &OAuthRow,
    client_secret: Option<String>,
    tokens: Vec<StandardRevocableToken>,
    timeout: Duration,
) -> bool {
    let Some(endpoint) = &row.revocation_endpoint else {
        return false;
    };
    let Ok(url) = RevocationUrl::new(endpoint.clone()) else {
        return false;
    };
    let mut oauth = BasicClient::new(ClientId::new(row.client_id.clone())).set_revocation_url(url);
    if let Some(secret) = client_secret {
        oauth = oauth.set_client_secret(ClientSecret::new(secret));
    }
    let Ok(http) = client(timeout) else {
        return false;
    };
    let call = move |request| send(http.clone(), request);
    let mut all = true;
    for token in tokens {
        let done = match oauth.revoke_token(token.clone()) {
            Ok(request) => request.request_async(&call).await.is_ok(),
            // The oauth2 crate revokes only over https; a plain-http
            // endpoint (reachable only with private networks allowed, i.e.
            // development and tests) gets the same RFC 7009 form here.
            Err(oauth2::ConfigurationError::InsecureUrl(_)) => {
                revoke_plain(&row.client_id, endpoint, &token, timeout).await
            }
            Err(_) => false,
        };
        all &= done;
    }
    all
}

async fn revoke_plain(
    client_id: &str,
    endpoint: &str,
    token: &StandardRevocableToken,
    timeout: Duration,
) -> bool {
    let Ok(http) = client(timeout) else {
        return false;
    };
    let (secret, hint) = match token {
        StandardRevocableToken::AccessToken(t) => (t.secret(), "access_token"),
        StandardRevocableToken::RefreshToken(t) => (t.secret(), "refresh_token"),
        _ => return false,
    };
    let mut form = Url::parse("http://form.invalid/").expect("a constant URL");
    form.query_pairs_mut()
        .append_pair("token", secret)
        .append_pair("token_type_hint", hint)
        .append_pair("client_id", client_id);
    http.post(endpoint)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form.query().unwrap_or_default().to_owned())
        .send()
        .await
        .is_ok_and(|r| r.status().is_success())
}

/// A token error without any token in it (the server's error code and
/// description, or the kind of failure).
fn token_error<RE: std::error::Error + 'static>(
    e: &oauth2::RequestTokenError<RE, oauth2::basic::BasicErrorResponse>,
) -> String {
    match e {
        oauth2::RequestTokenError::ServerResponse(answer) => {
            format!("the authorization server refused: {}", answer.error())
        }
        oauth2::RequestTokenError::Request(e) => format!("the token request failed: {e}"),
        oauth2::RequestTokenError::Parse(_, _) => {
            "the token endpoint's answer is not a token response".into()
        }
        oauth2::RequestTokenError::Other(e) => e.clone(),
    }
}

/// Whether the access token should be refreshed before use.
pub(crate) fn needs_refresh(row: &OAuthRow, now: DateTime<Utc>) -> bool {
    row.expires_at
        .is_some_and(|at| at - chrono::Duration::seconds(REFRESH_MARGIN_SECONDS) <= now)
}
