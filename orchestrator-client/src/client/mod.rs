//! The HTTP plumbing every accessor shares: base URL, credentials, envelopes.
//!
//! `Client` and its accessors live here; how it is built is in `builder`,
//! how a request is sent (credentials, refresh, retries, envelopes) in
//! `send`, the retry policy in `retry`, and the request-id bodies in
//! `request_id`. None of them depends on a resource module: resources depend
//! on the client, never the other way round.

mod builder;
mod request_id;
mod retry;
mod send;

use crate::error::Result;
use crate::session::SessionAuth;
use crate::{Agents, ApiKeys, Auth, Events, Health, Logs, Tasks, Tenants, Workers, Workflows};
use std::sync::Arc;
use std::time::Duration;

pub(crate) use crate::decode::{decode, page_query};
pub use builder::ClientBuilder;
pub(crate) use request_id::JsonWithRequestId;
pub(crate) use reqwest::Method as M;
pub use retry::RetryPolicy;

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

impl Client {
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
            Some(session) => Ok(Some(session.token(|r| self.exchange_refresh(r)).await?)),
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
}

/// Installs the TLS crypto provider (ring) for the process, once. reqwest is
/// built without a bundled provider to keep builds lean; call this before
/// building a `reqwest::Client` of your own next to the SDK.
pub fn install_crypto_provider() {
    // Fails only when a provider is already installed, which is what we want.
    let _ = rustls::crypto::ring::default_provider().install_default();
}
