//! Verification of a remote MCP server with the official MCP SDK (`rmcp`,
//! client side): `initialize` (and `notifications/initialized`), then
//! `tools/list`, and `resources/list` / `prompts/list` when the server
//! declares them, each bounded by the server's `callTimeoutSeconds`.
//!
//! Over streamable HTTP with rmcp's own transport; over the older HTTP+SSE
//! transport with [`SseCompat`]; `auto` tries streamable HTTP first. A
//! failure names the step it stopped at (`connect`, `initialize`,
//! `list_tools`, `list_resources`, `list_prompts`) and a reason that never
//! holds a parameter value.

use super::sse_compat::SseCompat;
use crate::api::{McpCapabilities, McpCapability, McpTransport, TransportPreference};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Client, Url};
use rmcp::model::{ClientConfig, Implementation, ProtocolVersion};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

/// Where and how to reach a server: the endpoint, its parameters in clear
/// (headers and query pairs) and the bound of one call.
pub(crate) struct Target {
    pub endpoint: Url,
    pub headers: Vec<(String, String)>,
    pub query: Vec<(String, String)>,
    pub timeout: Duration,
    /// An OAuth access token, sent as `Authorization: Bearer`.
    pub bearer: Option<String>,
}

impl Target {
    fn url(&self) -> Url {
        let mut url = self.endpoint.clone();
        if !self.query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (key, value) in &self.query {
                pairs.append_pair(key, value);
            }
        }
        url
    }

    fn header_map(&self) -> HeaderMap {
        self.headers
            .iter()
            .filter_map(|(k, v)| {
                Some((
                    HeaderName::from_bytes(k.as_bytes()).ok()?,
                    HeaderValue::from_str(v).ok()?,
                ))
            })
            .collect()
    }
}

/// A successful verification.
#[derive(Debug)]
pub(crate) struct Verified {
    pub transport: McpTransport,
    pub capabilities: McpCapabilities,
}

/// A failed one: the step and why.
#[derive(Debug)]
pub(crate) struct Failure {
    pub step: &'static str,
    pub reason: String,
}

impl Failure {
    fn new(step: &'static str, reason: impl Into<String>) -> Self {
        Self {
            step,
            reason: reason.into(),
        }
    }
}

/// The client identity and protocol version orch offers.
#[derive(Clone)]
struct Probe(ProtocolVersion);

impl ClientHandler for Probe {
    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::default();
        config.protocol_version = self.0.clone();
        config.client_info = Implementation::new("orch", env!("CARGO_PKG_VERSION"));
        config
    }
}

fn http_client(timeout: Duration) -> Result<Client, Failure> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::builder()
        .connect_timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| Failure::new("connect", format!("no HTTP client: {e}")))
}

async fn bounded<T, E: std::fmt::Display>(
    step: &'static str,
    timeout: Duration,
    call: impl Future<Output = Result<T, E>>,
) -> Result<T, Failure> {
    match tokio::time::timeout(timeout, call).await {
        Err(_) => Err(Failure::new(
            step,
            format!("no answer within {} s", timeout.as_secs()),
        )),
        Ok(Err(e)) => Err(Failure::new(step, e.to_string())),
        Ok(Ok(value)) => Ok(value),
    }
}

/// The host answers TCP connections at all (else `connect`).
async fn reach(target: &Target) -> Result<(), Failure> {
    let host = target
        .endpoint
        .host_str()
        .ok_or_else(|| Failure::new("connect", "the endpoint names no host"))?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = target
        .endpoint
        .port_or_known_default()
        .ok_or_else(|| Failure::new("connect", "the endpoint names no port"))?;
    bounded(
        "connect",
        target.timeout,
        tokio::net::TcpStream::connect((host.as_str(), port)),
    )
    .await
    .map(drop)
}

fn capability(name: &str, description: Option<&str>) -> McpCapability {
    McpCapability {
        name: name.to_owned(),
        description: description.map(str::to_owned),
    }
}

/// `initialize` through listing over a connected transport.
async fn run_session<T, E, A>(
    transport: T,
    version: ProtocolVersion,
    timeout: Duration,
) -> Result<McpCapabilities, Failure>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let client = bounded("initialize", timeout, Probe(version).serve(transport)).await?;
    let declared = client.peer_info().map(|info| info.capabilities.clone());
    let outcome = async {
        let mut found = McpCapabilities::default();
        let declares_tools = declared.as_ref().is_some_and(|c| c.tools.is_some());
        match bounded("list_tools", timeout, client.list_all_tools()).await {
            Ok(tools) => {
                found.tools = tools
                    .iter()
                    .map(|t| capability(&t.name, t.description.as_deref()))
                    .collect();
            }
            // A server without tools may refuse the call.
            Err(_) if !declares_tools => {}
            Err(failure) => return Err(failure),
        }
        if declared.as_ref().is_some_and(|c| c.resources.is_some()) {
            found.resources = bounded("list_resources", timeout, client.list_all_resources())
                .await?
                .iter()
                .map(|r| capability(&r.name, r.description.as_deref()))
                .collect();
        }
        if declared.as_ref().is_some_and(|c| c.prompts.is_some()) {
            found.prompts = bounded("list_prompts", timeout, client.list_all_prompts())
                .await?
                .iter()
                .map(|p| capability(&p.name, p.description.as_deref()))
                .collect();
        }
        Ok(found)
    }
    .await;
    let _ = tokio::time::timeout(timeout, client.cancel()).await;
    outcome
}

async fn over_streamable_http(target: &Target) -> Result<Verified, Failure> {
    let http = http_client(target.timeout)?;
    let headers: HashMap<HeaderName, HeaderValue> =
        target
            .header_map()
            .into_iter()
            .fold(HashMap::new(), |mut map, (name, value)| {
                if let Some(name) = name {
                    map.insert(name, value);
                }
                map
            });
    let mut config = StreamableHttpClientTransportConfig::with_uri(target.url().as_str())
        .custom_headers(headers);
    if let Some(token) = &target.bearer {
        config = config.auth_header(token.clone());
    }
    let transport = StreamableHttpClientTransport::with_client(http, config);
    let capabilities =
        run_session(transport, ProtocolVersion::V_2025_06_18, target.timeout).await?;
    Ok(Verified {
        transport: McpTransport::StreamableHttp,
        capabilities,
    })
}

async fn over_http_sse(target: &Target) -> Result<Verified, Failure> {
    let http = http_client(target.timeout)?;
    let mut headers = target.header_map();
    if let Some(value) = target
        .bearer
        .as_ref()
        .and_then(|token| HeaderValue::from_str(&format!("Bearer {token}")).ok())
    {
        headers.insert(reqwest::header::AUTHORIZATION, value);
    }
    let transport = bounded(
        "connect",
        target.timeout,
        SseCompat::connect(http, target.url(), headers, &target.query),
    )
    .await?;
    let capabilities =
        run_session(transport, ProtocolVersion::V_2024_11_05, target.timeout).await?;
    Ok(Verified {
        transport: McpTransport::HttpSseCompat,
        capabilities,
    })
}

/// Verifies the server over the preferred transport (`auto`: streamable
/// HTTP, then HTTP+SSE; when both fail, the failure of the attempt that got
/// further is reported).
pub(crate) async fn verify(
    target: &Target,
    preference: TransportPreference,
) -> Result<Verified, Failure> {
    reach(target).await?;
    match preference {
        TransportPreference::StreamableHttp => over_streamable_http(target).await,
        TransportPreference::HttpSseCompat => over_http_sse(target).await,
        TransportPreference::Auto => match over_streamable_http(target).await {
            Ok(verified) => Ok(verified),
            Err(first) => match over_http_sse(target).await {
                Ok(verified) => Ok(verified),
                Err(second) if second.step == "connect" => Err(Failure::new(
                    first.step,
                    format!(
                        "{} (streamable HTTP); HTTP+SSE: {}",
                        first.reason, second.reason
                    ),
                )),
                Err(second) => Err(second),
            },
        },
    }
}
