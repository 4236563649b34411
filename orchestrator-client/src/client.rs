//! The HTTP plumbing every accessor shares: base URL, credentials, envelopes.

use crate::error::{Error, Result};
use crate::{Agents, ApiKeys, Auth, Events, Health, Logs, Tasks, Tenants, Workers, Workflows};
use orchestrator_core::api::{DataEnvelope, ErrorEnvelope, ListEnvelope, Page};
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde::de::DeserializeOwned;
use std::time::Duration;

/// A client for one deployment, with one credential. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    credential: Option<String>,
}

/// Options for [`Client`].
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    base: String,
    credential: Option<String>,
    timeout: Option<Duration>,
    connect_timeout: Duration,
}

impl ClientBuilder {
    /// The credential: an API key or an access token.
    pub fn bearer(mut self, credential: impl Into<String>) -> Self {
        self.credential = Some(credential.into());
        self
    }

    /// Upper bound of one request (none by default: streams stay open).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

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
        Ok(Client {
            http: http.build()?,
            base,
            credential: self.credential,
        })
    }
}

impl Client {
    /// A client for `base_url` (e.g. `http://127.0.0.1:8080`) with no credential.
    pub fn new(base_url: impl Into<String>) -> Result<Self> {
        Self::builder(base_url).build()
    }

    pub fn builder(base_url: impl Into<String>) -> ClientBuilder {
        ClientBuilder {
            base: base_url.into(),
            credential: None,
            timeout: None,
            connect_timeout: Duration::from_secs(10),
        }
    }

    /// This client with an API key as its credential.
    pub fn with_api_key(self, api_key: impl Into<String>) -> Self {
        self.with_bearer(api_key)
    }

    /// This client with an access token as its credential.
    pub fn with_token(self, token: impl Into<String>) -> Self {
        self.with_bearer(token)
    }

    fn with_bearer(mut self, credential: impl Into<String>) -> Self {
        self.credential = Some(credential.into());
        self
    }

    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// The bearer credential, if any (the worker channel's handshake).
    pub(crate) fn credential(&self) -> Option<&str> {
        self.credential.as_deref()
    }

    pub fn auth(&self) -> Auth<'_> {
        Auth { client: self }
    }

    pub fn api_keys(&self) -> ApiKeys<'_> {
        ApiKeys { client: self }
    }

    pub fn tenants(&self) -> Tenants<'_> {
        Tenants { client: self }
    }

    pub fn logs(&self) -> Logs<'_> {
        Logs { client: self }
    }

    pub fn events(&self) -> Events<'_> {
        Events { client: self }
    }

    pub fn health(&self) -> Health<'_> {
        Health { client: self }
    }

    pub fn agents(&self) -> Agents<'_> {
        Agents { client: self }
    }

    pub fn workers(&self) -> Workers<'_> {
        Workers { client: self }
    }

    pub fn tasks(&self) -> Tasks<'_> {
        Tasks { client: self }
    }

    pub fn workflows(&self) -> Workflows<'_> {
        Workflows { client: self }
    }

    pub fn playbooks(&self) -> crate::Playbooks<'_> {
        crate::Playbooks { client: self }
    }

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

    pub fn catalog(&self) -> crate::Catalog<'_> {
        crate::Catalog { client: self }
    }

    // Integrations (A2A, ACP, claim credentials, remote MCP)
    pub fn a2a(&self) -> crate::A2a<'_> {
        crate::A2a { client: self }
    }

    pub fn acp(&self) -> crate::Acp<'_> {
        crate::Acp { client: self }
    }

    pub fn settings(&self) -> crate::Settings<'_> {
        crate::Settings { client: self }
    }

    pub fn mcp_servers(&self) -> crate::McpServers<'_> {
        crate::McpServers { client: self }
    }

    /// A request to `path` (which starts with `/`) with the credential set.
    pub(crate) fn request(&self, method: Method, path: &str) -> RequestBuilder {
        let builder = self.http.request(method, format!("{}{}", self.base, path));
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
        self.http
            .request(method, format!("{}{}", self.base, path))
            .bearer_auth(bearer)
    }

    /// Sends and decodes `{data: T}`.
    pub(crate) async fn data<T: DeserializeOwned>(&self, request: RequestBuilder) -> Result<T> {
        let response = request.send().await?;
        Ok(decode::<DataEnvelope<T>>(response).await?.data)
    }

    /// Sends and decodes `{data: T}`, or `None` on 204.
    #[allow(dead_code)]
    pub(crate) async fn data_or_none<T: DeserializeOwned>(
        &self,
        request: RequestBuilder,
    ) -> Result<Option<T>> {
        let response = request.send().await?;
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
        let response = request.send().await?;
        let list = decode::<ListEnvelope<T>>(response).await?;
        Ok(Page {
            items: list.data,
            total: list.meta.total,
            page: list.meta.page,
            per_page: list.meta.per_page,
        })
    }
}

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
