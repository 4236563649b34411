//! The HTTP plumbing every accessor shares: base URL, credentials, envelopes.

use crate::auth::Session;
use crate::error::{Error, Result};
use crate::session::{RefreshHook, ReloadHook, SessionAuth, SessionTokens};
use crate::{Agents, ApiKeys, Auth, Events, Health, Logs, Tasks, Tenants, Workers, Workflows};
use orchestrator_core::api::{DataEnvelope, ErrorEnvelope, ListEnvelope, Page};
use reqwest::header::AUTHORIZATION;
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde::de::DeserializeOwned;
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// A client for one deployment, with one credential. Cheap to clone.
///
/// Requests that are safe to repeat are retried on connection errors, `429`
/// (after the server's `Retry-After`) and `503` with jittered exponential
/// backoff: reads (`GET`, `HEAD`) always, writes only when their body carries
/// a `request_id` (the server then replays instead of acting twice). See
/// [`RetryPolicy`] and [`ClientBuilder::generate_request_ids`].
///
/// A client built from a refresh session ([`ClientBuilder::refresh_session`])
/// refreshes its access token before it expires and once after a `401`; its
/// clones share the session and never refresh twice at once.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    credential: Option<String>,
    session: Option<Arc<SessionAuth>>,
    retry: RetryPolicy,
    request_ids: bool,
    request_timeout: Option<Duration>,
}

/// How a [`Client`] retries a request that is safe to repeat.
///
/// `max_attempts` counts the first try: `1` turns retries off. The wait
/// before attempt `n + 1` is drawn between half of and the full
/// `base_delay * 2^(n-1)` (capped at `max_delay`); a `Retry-After` from the
/// server is waited out instead when it is longer (also capped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (at least 1).
    pub max_attempts: u32,
    /// The first backoff.
    pub base_delay: Duration,
    /// The longest single wait, `Retry-After` included.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// Three attempts, 250 ms first backoff, waits of at most 60 s.
    fn default() -> Self {
        Self {
            max_attempts: 3,
            base_delay: Duration::from_millis(250),
            max_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// No retries: every request is sent once.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// The wait before the attempt after `attempt` (1-based), jittered.
    fn backoff(&self, attempt: u32) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(16))
            .min(self.max_delay);
        let half = exp / 2;
        let spread = half.as_millis().max(1) as u64;
        let jitter = (Uuid::new_v4().as_u128() % u128::from(spread)) as u64;
        half + Duration::from_millis(jitter)
    }
}

impl std::fmt::Debug for Client {
    /// Never prints a credential.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base", &self.base)
            .field(
                "credential",
                &self.credential.as_ref().map(|_| "<redacted>"),
            )
            .field("session", &self.session)
            .field("retry", &self.retry)
            .field("request_ids", &self.request_ids)
            .field("request_timeout", &self.request_timeout)
            .finish_non_exhaustive()
    }
}

/// Options for [`Client`].
#[derive(Clone)]
pub struct ClientBuilder {
    base: String,
    credential: Option<String>,
    timeout: Option<Duration>,
    connect_timeout: Duration,
    retry: RetryPolicy,
    request_ids: bool,
    session: Option<SessionStart>,
    refresh_skew: Duration,
    on_refresh: Option<RefreshHook>,
    reload: Option<ReloadHook>,
}

/// What a session-backed client starts from.
#[derive(Clone)]
enum SessionStart {
    /// A whole session; its refresh token may be missing (then `build` fails).
    Session(Box<Session>),
    /// A refresh token alone.
    RefreshToken(String),
}

impl std::fmt::Debug for ClientBuilder {
    /// Never prints a credential.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("base", &self.base)
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .field("session", &self.session.is_some())
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// Authenticates with a refresh session (from
    /// [`Auth::token`](crate::Auth::token) or [`Auth::refresh`](crate::Auth::refresh)):
    /// requests carry its access token, which the client refreshes through
    /// `POST /auth/refresh` when it nears expiry or a request meets `401`
    /// (that request is then sent once more). Replaces [`Self::bearer`].
    /// Save the rotated refresh token with [`Self::on_refresh`] to resume
    /// the session in another process. `build` fails when the session has
    /// no refresh token.
    pub fn refresh_session(mut self, session: Session) -> Self {
        self.session = Some(SessionStart::Session(Box::new(session)));
        self
    }

    /// Like [`Self::refresh_session`] from a saved refresh token alone: the
    /// first request refreshes to get an access token.
    pub fn refresh_token(mut self, refresh_token: impl Into<String>) -> Self {
        self.session = Some(SessionStart::RefreshToken(refresh_token.into()));
        self
    }

    /// How long before its expiry an access token is refreshed (60 s by
    /// default; at most half of what is left of a token's life, so tokens
    /// shorter-lived than this are not refreshed on every request). Zero
    /// refreshes at the expiry itself, or after a `401`.
    pub fn refresh_skew(mut self, skew: Duration) -> Self {
        self.refresh_skew = skew;
        self
    }

    /// Called after each refresh with the new session, whose
    /// `refresh_token` replaces the old one (which the server now refuses,
    /// and whose reuse would end the session). Runs while other requests
    /// wait for the refresh, so keep it short.
    pub fn on_refresh(mut self, hook: impl Fn(&Session) + Send + Sync + 'static) -> Self {
        self.on_refresh = Some(Arc::new(hook));
        self
    }

    /// For a session several processes share through saved tokens (say a
    /// CLI profile): called before each refresh to read what is saved now.
    /// When another process has refreshed since (the saved refresh token
    /// differs), the client takes the saved tokens instead of spending its
    /// own refresh token, which the server would take for a stolen one.
    pub fn reload_session(
        mut self,
        hook: impl Fn() -> Option<SessionTokens> + Send + Sync + 'static,
    ) -> Self {
        self.reload = Some(Arc::new(hook));
        self
    }

    /// The credential: an API key or an access token.
    pub fn bearer(mut self, credential: impl Into<String>) -> Self {
        self.credential = Some(credential.into());
        self
    }

    /// Upper bound of each request (none by default). It also bounds
    /// streams, so leave it unset for a client that follows logs or events;
    /// [`Client::with_timeout`] sets one for some calls only.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Upper bound of opening a connection (10 s by default).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The retry policy (default: [`RetryPolicy::default`]).
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Attempts in all, the first included (`1` turns retries off).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.retry.max_attempts = attempts.max(1);
        self
    }

    /// The first backoff of the retry policy.
    pub fn base_delay(mut self, delay: Duration) -> Self {
        self.retry.base_delay = delay;
        self
    }

    /// Turns retries off.
    pub fn no_retries(self) -> Self {
        self.retry(RetryPolicy::none())
    }

    /// When on, every write whose body has a `request_id` field and none
    /// set gets a fresh UUID, which makes it replay-safe and so retried.
    pub fn generate_request_ids(mut self, on: bool) -> Self {
        self.request_ids = on;
        self
    }

    /// The client.
    pub fn build(self) -> Result<Client> {
        install_crypto_provider();
        let base = self.base.trim_end_matches('/').to_owned();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(Error::InvalidUrl(self.base));
        }
        let mut http = reqwest::Client::builder()
            .user_agent(concat!("orch-sdk/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(self.connect_timeout);
        if let Some(timeout) = self.timeout {
            http = http.timeout(timeout);
        }
        let session = match self.session {
            None => None,
            Some(start) => {
                let (refresh, access) = match start {
                    SessionStart::Session(session) => {
                        let Some(refresh) = session.refresh_token else {
                            return Err(Error::MissingRefreshToken);
                        };
                        (refresh, Some((session.token, session.expires_at)))
                    }
                    SessionStart::RefreshToken(refresh) => (refresh, None),
                };
                Some(Arc::new(SessionAuth::new(
                    refresh,
                    access,
                    self.refresh_skew,
                    self.on_refresh,
                    self.reload,
                )))
            }
        };
        Ok(Client {
            http: http.build()?,
            base,
            credential: if session.is_some() {
                None
            } else {
                self.credential
            },
            session,
            retry: self.retry,
            request_ids: self.request_ids,
            request_timeout: None,
        })
    }
}

impl Client {
    /// A client for `base_url` (e.g. `http://127.0.0.1:8080`) with no credential.
    pub fn new(base_url: impl Into<String>) -> Result<Self> {
        Self::builder(base_url).build()
    }

    /// Options for a client of `base_url`.
    pub fn builder(base_url: impl Into<String>) -> ClientBuilder {
        ClientBuilder {
            base: base_url.into(),
            credential: None,
            timeout: None,
            connect_timeout: Duration::from_secs(10),
            retry: RetryPolicy::default(),
            request_ids: false,
            session: None,
            refresh_skew: Duration::from_secs(60),
            on_refresh: None,
            reload: None,
        }
    }

    /// This client with every request bounded by `timeout`: for one call,
    /// `client.with_timeout(d).tasks().get(id)`.
    pub fn with_timeout(&self, timeout: Duration) -> Self {
        let mut client = self.clone();
        client.request_timeout = Some(timeout);
        client
    }

    /// This client with another retry policy (e.g. [`RetryPolicy::none`]).
    pub fn with_retry(&self, policy: RetryPolicy) -> Self {
        let mut client = self.clone();
        client.retry = policy;
        client
    }

    /// This client generating a `request_id` for writes that take one (see
    /// [`ClientBuilder::generate_request_ids`]).
    pub fn with_request_ids(&self, on: bool) -> Self {
        let mut client = self.clone();
        client.request_ids = on;
        client
    }

    /// The retry policy in force.
    pub fn retry_policy(&self) -> RetryPolicy {
        self.retry
    }

    /// This client with an API key as its credential.
    pub fn with_api_key(self, api_key: impl Into<String>) -> Self {
        self.with_bearer(api_key)
    }

    /// This client with an access token as its credential.
    pub fn with_token(self, token: impl Into<String>) -> Self {
        self.with_bearer(token)
    }

    /// A fixed credential replaces a refresh session.
    fn with_bearer(mut self, credential: impl Into<String>) -> Self {
        self.credential = Some(credential.into());
        self.session = None;
        self
    }

    /// The refresh token of the client's session as it stands now (it
    /// rotates on every refresh), or `None` for a client without one.
    pub fn refresh_token(&self) -> Option<String> {
        self.session.as_ref().map(|s| s.refresh_token())
    }

    /// The access token of the client's session as it stands now (`None`
    /// for a client without a session, or before its first refresh).
    pub fn access_token(&self) -> Option<String> {
        self.session.as_ref().and_then(|s| s.access_token())
    }

    /// The base URL, without a trailing `/`.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// The bearer credential, if any (the worker channel's handshake): a
    /// session's access token is refreshed first when it nears expiry.
    pub(crate) async fn bearer(&self) -> Result<Option<String>> {
        match &self.session {
            Some(session) => Ok(Some(session.token(self).await?)),
            None => Ok(self.credential.clone()),
        }
    }

    /// Authentication: token exchange, refresh, logout, whoami.
    pub fn auth(&self) -> Auth<'_> {
        Auth { client: self }
    }

    /// API keys (admin).
    pub fn api_keys(&self) -> ApiKeys<'_> {
        ApiKeys { client: self }
    }

    /// Tenants (service scope).
    pub fn tenants(&self) -> Tenants<'_> {
        Tenants { client: self }
    }

    /// Platform logs.
    pub fn logs(&self) -> Logs<'_> {
        Logs { client: self }
    }

    /// Entity events.
    pub fn events(&self) -> Events<'_> {
        Events { client: self }
    }

    /// Health, readiness and version.
    pub fn health(&self) -> Health<'_> {
        Health { client: self }
    }

    /// Agents.
    pub fn agents(&self) -> Agents<'_> {
        Agents { client: self }
    }

    /// Workers.
    pub fn workers(&self) -> Workers<'_> {
        Workers { client: self }
    }

    /// Tasks.
    pub fn tasks(&self) -> Tasks<'_> {
        Tasks { client: self }
    }

    /// Workflows, work items, activations and stages.
    pub fn workflows(&self) -> Workflows<'_> {
        Workflows { client: self }
    }

    /// Playbooks.
    pub fn playbooks(&self) -> crate::Playbooks<'_> {
        crate::Playbooks { client: self }
    }

    /// Workspaces, their memory, spec, files and artifacts.
    pub fn workspaces(&self) -> crate::Workspaces<'_> {
        crate::Workspaces { client: self }
    }

    /// Execution environments (issue 11).
    pub fn environments(&self) -> crate::Environments<'_> {
        crate::Environments { client: self }
    }

    /// Fleet and containers (issue 11).
    pub fn fleet(&self) -> crate::Fleet<'_> {
        crate::Fleet { client: self }
    }

    /// The community catalog, specialists and skills.
    pub fn catalog(&self) -> crate::Catalog<'_> {
        crate::Catalog { client: self }
    }

    // Integrations (A2A, ACP, claim credentials, remote MCP)
    /// A2A task ingress.
    pub fn a2a(&self) -> crate::A2a<'_> {
        crate::A2a { client: self }
    }

    /// ACP sessions.
    pub fn acp(&self) -> crate::Acp<'_> {
        crate::Acp { client: self }
    }

    /// Tenant settings (admin).
    pub fn settings(&self) -> crate::Settings<'_> {
        crate::Settings { client: self }
    }

    /// Remote MCP servers (admin).
    pub fn mcp_servers(&self) -> crate::McpServers<'_> {
        crate::McpServers { client: self }
    }

    /// A request to `path` (which starts with `/`) with the credential set.
    pub(crate) fn request(&self, method: Method, path: &str) -> RequestBuilder {
        let mut builder = self.http.request(method, format!("{}{}", self.base, path));
        if let Some(timeout) = self.request_timeout {
            builder = builder.timeout(timeout);
        }
        match &self.credential {
            Some(credential) => builder.bearer_auth(credential),
            None => builder,
        }
    }

    /// A request with an explicit bearer instead of the client's credential.
    pub(crate) fn request_with_bearer(
        &self,
        method: Method,
        path: &str,
        bearer: &str,
    ) -> RequestBuilder {
        let builder = self
            .http
            .request(method, format!("{}{}", self.base, path))
            .bearer_auth(bearer);
        match self.request_timeout {
            Some(timeout) => builder.timeout(timeout),
            None => builder,
        }
    }

    /// `builder.json(request)`, with a fresh `request_id` when the client
    /// generates them and the request has none.
    pub(crate) fn json<T: CarriesRequestId>(
        &self,
        builder: RequestBuilder,
        request: &T,
    ) -> RequestBuilder {
        if self.request_ids && request.request_id().is_none() {
            let mut request = request.clone();
            request.set_request_id(Uuid::new_v4().to_string());
            builder.json(&request)
        } else {
            builder.json(request)
        }
    }

    /// Sends `builder`, retrying as the policy says when the request is safe
    /// to repeat (a read, or a write with a `request_id`). With a refresh
    /// session, a request without its own `Authorization` gets the
    /// session's access token, and one `401` refreshes it and sends again.
    pub(crate) async fn send(&self, builder: RequestBuilder) -> Result<Response> {
        let mut request = builder.build()?;
        let Some(session) = self
            .session
            .as_ref()
            .filter(|_| !request.headers().contains_key(AUTHORIZATION))
        else {
            return self.execute(request).await;
        };
        let token = session.token(self).await?;
        set_bearer(&mut request, &token)?;
        let again = request.try_clone();
        let response = self.execute(request).await?;
        if response.status() != StatusCode::UNAUTHORIZED {
            return Ok(response);
        }
        let Some(mut again) = again else {
            return Ok(response);
        };
        let token = session.refresh(self, Some(&token)).await?;
        set_bearer(&mut again, &token)?;
        self.execute(again).await
    }

    /// `POST /auth/refresh` with `refresh_token`, outside the session logic
    /// (which calls it).
    pub(crate) async fn exchange_refresh(&self, refresh_token: &str) -> Result<Session> {
        let request = self
            .request_with_bearer(Method::POST, "/api/v1/auth/refresh", refresh_token)
            .build()?;
        crate::auth::refreshed_session(self.execute(request).await?).await
    }

    /// Sends `request`, retrying as the policy says.
    async fn execute(&self, request: reqwest::Request) -> Result<Response> {
        if self.retry.max_attempts <= 1 || !repeatable(&request) {
            return Ok(self.http.execute(request).await?);
        }
        let mut attempt = 1;
        loop {
            let Some(this) = request.try_clone() else {
                return Ok(self.http.execute(request).await?);
            };
            let outcome = self.http.execute(this).await;
            let wait = match &outcome {
                Ok(response)
                    if matches!(
                        response.status(),
                        StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE
                    ) =>
                {
                    let backoff = self.retry.backoff(attempt);
                    Some(
                        retry_after(response)
                            .map_or(backoff, |after| after.max(backoff))
                            .min(self.retry.max_delay),
                    )
                }
                Err(e) if e.is_connect() => Some(self.retry.backoff(attempt)),
                _ => None,
            };
            match wait {
                Some(wait) if attempt < self.retry.max_attempts => {
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                _ => return Ok(outcome?),
            }
        }
    }

    /// Sends and decodes `{data: T}`.
    pub(crate) async fn data<T: DeserializeOwned>(&self, request: RequestBuilder) -> Result<T> {
        let response = self.send(request).await?;
        Ok(decode::<DataEnvelope<T>>(response).await?.data)
    }

    /// Sends and decodes `{data: T}`, or `None` on 204.
    #[allow(dead_code)]
    pub(crate) async fn data_or_none<T: DeserializeOwned>(
        &self,
        request: RequestBuilder,
    ) -> Result<Option<T>> {
        let response = self.send(request).await?;
        if response.status() == StatusCode::NO_CONTENT {
            return Ok(None);
        }
        Ok(Some(decode::<DataEnvelope<T>>(response).await?.data))
    }

    /// Sends and decodes a page `{data: [T], meta}`.
    pub(crate) async fn page<T: DeserializeOwned>(
        &self,
        request: RequestBuilder,
    ) -> Result<Page<T>> {
        let response = self.send(request).await?;
        let list = decode::<ListEnvelope<T>>(response).await?;
        Ok(Page {
            items: list.data,
            total: list.meta.total,
            page: list.meta.page,
            per_page: list.meta.per_page,
        })
    }
}

/// Sets `Authorization: Bearer token` on a built request.
fn set_bearer(request: &mut reqwest::Request, token: &str) -> Result<()> {
    let value =
        reqwest::header::HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
            Error::Decode {
                status: 200,
                message: "the access token is not a valid header value".into(),
            }
        })?;
    request.headers_mut().insert(AUTHORIZATION, value);
    Ok(())
}

/// Whether `request` may be sent again: a read, or a body with a
/// `request_id` string.
fn repeatable(request: &reqwest::Request) -> bool {
    if matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    ) {
        return true;
    }
    request
        .body()
        .and_then(reqwest::Body::as_bytes)
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(bytes).ok())
        .is_some_and(|body| {
            body.get("request_id")
                .is_some_and(serde_json::Value::is_string)
        })
}

/// `Retry-After` in seconds.
fn retry_after(response: &Response) -> Option<Duration> {
    let secs: u64 = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_secs(secs))
}

/// A request body with a `request_id` field.
pub(crate) trait CarriesRequestId: serde::Serialize + Clone {
    fn request_id(&self) -> Option<&str>;
    fn set_request_id(&mut self, id: String);
}

macro_rules! carries_request_id {
    ($($t:ty),* $(,)?) => {$(
        impl CarriesRequestId for $t {
            fn request_id(&self) -> Option<&str> {
                self.request_id.as_deref()
            }
            fn set_request_id(&mut self, id: String) {
                self.request_id = Some(id);
            }
        }
    )*};
}

use orchestrator_core::api as w;
carries_request_id!(
    w::SubmitA2aTask,
    w::RegisterAgent,
    w::RegisterWorker,
    w::CreateApiKey,
    w::catalog::ImportRequest,
    w::environments::CreateExecutionEnvironment,
    w::environments::PatchExecutionEnvironment,
    w::environments::CreateFromCatalog,
    w::playbooks::CreatePlaybook,
    w::playbooks::PatchPlaybook,
    w::playbooks::ArchivePlaybook,
    w::CreateTask,
    w::CreateHandoff,
    w::StartTask,
    w::CompleteTask,
    w::TaskArtifact,
    w::FailTask,
    w::TaskAction,
    w::CreateTenant,
    w::CreateWorkflow,
    w::CreateWorkItem,
    w::EnqueueActivation,
    w::RedriveWorkflow,
    w::WorkflowAction,
    w::PlanningWorkflow,
    w::workspaces::CreateWorkspace,
    w::workspaces::PatchWorkspace,
    w::workspaces::SetMemory,
    w::workspaces::PutWorkspaceSpec,
    w::workspaces::FileUpload,
    w::workspaces::BatchUpload,
    w::workspaces::UploadArtifact,
    w::workspaces::VerifyGitAccess,
);

/// Installs the TLS crypto provider (ring) for the process, once. reqwest is
/// built without a bundled provider to keep builds lean; call this before
/// building a `reqwest::Client` of your own next to the SDK.
pub fn install_crypto_provider() {
    // Fails only when a provider is already installed, which is what we want.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Decodes a success body as `T`, or an error response as [`Error::Api`].
pub(crate) async fn decode<T: DeserializeOwned>(response: Response) -> Result<T> {
    let status = response.status();
    let request_id = response
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let bytes = response.bytes().await?;
    if status.is_success() {
        return serde_json::from_slice(&bytes).map_err(|e| Error::Decode {
            status: status.as_u16(),
            message: e.to_string(),
        });
    }
    match serde_json::from_slice::<ErrorEnvelope>(&bytes) {
        Ok(envelope) => Err(Error::Api {
            status: status.as_u16(),
            error: envelope.error,
            request_id,
        }),
        Err(_) => Err(Error::Decode {
            status: status.as_u16(),
            message: String::from_utf8_lossy(&bytes).chars().take(500).collect(),
        }),
    }
}

/// `page` and `per_page` as query pairs.
pub(crate) fn page_query(page: orchestrator_core::api::PageRequest) -> [(&'static str, u32); 2] {
    [("page", page.page), ("per_page", page.per_page)]
}

pub(crate) use reqwest::Method as M;

/// `.json_id(client, request)`: [`Client::json`] in builder position.
pub(crate) trait JsonWithRequestId {
    fn json_id<T: CarriesRequestId>(self, client: &Client, request: &T) -> Self;
}

impl JsonWithRequestId for RequestBuilder {
    fn json_id<T: CarriesRequestId>(self, client: &Client, request: &T) -> Self {
        client.json(self, request)
    }
}
