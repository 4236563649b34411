//! Real MCP servers on loopback for the remote MCP tests (the server's
//! `tests/remote_mcp.rs` and the CLI's): one built with rmcp's server side
//! over streamable HTTP, one hand-written for the older HTTP+SSE transport
//! (2024-11-05), a plain HTTP server that is no MCP server, a server that
//! never answers and a closed port. The MCP servers accept a request only
//! with the header [`SECRET_HEADER`] set to [`SECRET`].

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use rmcp::model::{
    ListPromptsResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams, Prompt,
    Resource, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

pub const SECRET: &str = "mcp-secret-token-31337";
pub const SECRET_HEADER: &str = "x-api-key";

type Body = BoxBody<Bytes, Infallible>;

fn text(status: u16, content_type: &str, body: &str) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(Full::new(Bytes::from(body.to_owned())).boxed())
        .unwrap()
}

/// Serves `handler` on a loopback port; answers the base URL.
async fn serve<F, Fut>(handler: F) -> String
where
    F: Fn(Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Response<Body>> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let handler = handler.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request| {
                    let handler = handler.clone();
                    async move { Ok::<_, Infallible>(handler(request).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    format!("http://{address}")
}

fn has_secret(request: &Request<Incoming>) -> bool {
    request
        .headers()
        .get(SECRET_HEADER)
        .and_then(|v| v.to_str().ok())
        == Some(SECRET)
}

/// The MCP server: a tool, a resource and a prompt.
#[derive(Clone)]
struct Demo;

impl ServerHandler for Demo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_prompts()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({ "type": "object" }).as_object().unwrap().clone();
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "echo",
            "Echoes its input",
            Arc::new(schema),
        )]))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new("file:///readme.md", "readme").with_description("The project readme"),
        ]))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            "review",
            Some("Reviews a change"),
            None,
        )]))
    }
}

/// A streamable HTTP MCP server (rmcp) behind a secret-header check; the
/// flag turns every request away (the server "changed its secret"); the
/// log holds every request's query.
pub struct McpServer {
    /// The endpoint (`.../mcp`).
    pub url: String,
    /// Set: every request is turned away with 401.
    pub refuse: Arc<AtomicBool>,
    /// The query string of every request.
    pub queries: Arc<Mutex<Vec<String>>>,
}

pub async fn streamable_server() -> McpServer {
    let service = StreamableHttpService::new(
        || Ok(Demo),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let refuse = Arc::new(AtomicBool::new(false));
    let queries = Arc::new(Mutex::new(Vec::new()));
    let (flag, seen) = (refuse.clone(), queries.clone());
    let base = serve(move |request: Request<Incoming>| {
        let (service, flag, seen) = (service.clone(), flag.clone(), seen.clone());
        async move {
            seen.lock()
                .unwrap()
                .push(request.uri().query().unwrap_or_default().to_owned());
            if !has_secret(&request) || flag.load(Ordering::SeqCst) {
                return text(401, "text/plain", "unauthorized");
            }
            service.handle(request).await
        }
    })
    .await;
    McpServer {
        url: format!("{base}/mcp"),
        refuse,
        queries,
    }
}

/// The answer of the legacy server to one JSON-RPC request.
fn legacy_answer(request: &Value) -> Value {
    let id = request["id"].clone();
    let result = match request["method"].as_str().unwrap_or_default() {
        "initialize" => json!({
            "protocolVersion": "2024-11-05",
            "capabilities": { "tools": {}, "prompts": {} },
            "serverInfo": { "name": "legacy", "version": "1.0.0" },
        }),
        "tools/list" => json!({ "tools": [
            { "name": "legacy_search", "description": "Searches", "inputSchema": { "type": "object" } }
        ] }),
        "prompts/list" => json!({ "prompts": [
            { "name": "summarize", "description": "Summarizes a text" }
        ] }),
        _ => {
            return json!({ "jsonrpc": "2.0", "id": id,
                "error": { "code": -32601, "message": "method not found" } });
        }
    };
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// A hand-written HTTP+SSE (2024-11-05) MCP server: `GET /sse` opens the
/// stream and names `/messages?session=N`; answers come on the stream.
pub async fn legacy_server() -> String {
    type Sessions = Arc<Mutex<HashMap<String, mpsc::UnboundedSender<String>>>>;
    let sessions: Sessions = Arc::default();
    let base = serve(move |request: Request<Incoming>| {
        let sessions = sessions.clone();
        async move {
            if !has_secret(&request) {
                return text(401, "text/plain", "unauthorized");
            }
            let path = request.uri().path().to_owned();
            let query = request.uri().query().unwrap_or_default().to_owned();
            match (request.method().as_str(), path.as_str()) {
                ("GET", "/sse") => {
                    let (sender, receiver) = mpsc::unbounded_channel::<String>();
                    let session = uuid::Uuid::new_v4().simple().to_string();
                    sender
                        .send(format!(
                            "event: endpoint\ndata: /messages?session={session}\n\n"
                        ))
                        .unwrap();
                    sessions.lock().unwrap().insert(session, sender);
                    let frames = futures_util::stream::unfold(receiver, |mut rx| async move {
                        let chunk = rx.recv().await?;
                        Some((Ok::<_, Infallible>(Frame::data(Bytes::from(chunk))), rx))
                    });
                    Response::builder()
                        .status(200)
                        .header("content-type", "text/event-stream")
                        .body(StreamBody::new(frames).boxed())
                        .unwrap()
                }
                ("POST", "/messages") => {
                    let session = query
                        .split('&')
                        .find_map(|pair| pair.strip_prefix("session="))
                        .unwrap_or_default()
                        .to_owned();
                    let Some(sender) = sessions.lock().unwrap().get(&session).cloned() else {
                        return text(404, "text/plain", "no such session");
                    };
                    let body = request.into_body().collect().await.unwrap().to_bytes();
                    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    if message.get("id").is_some() && message.get("method").is_some() {
                        let answer = legacy_answer(&message);
                        let _ = sender.send(format!("event: message\ndata: {answer}\n\n"));
                    }
                    text(202, "text/plain", "accepted")
                }
                _ => text(404, "text/plain", "not found"),
            }
        }
    })
    .await;
    format!("{base}/sse")
}

/// An HTTP server that is no MCP server.
pub async fn plain_http_server() -> String {
    serve(|_request: Request<Incoming>| async move {
        text(200, "text/html", "<html><body>hello</body></html>")
    })
    .await
}

/// A server that accepts connections and never answers.
pub async fn silent_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    format!("http://{address}/mcp")
}

/// A loopback port nobody listens on.
pub async fn closed_port() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{address}/mcp")
}

/// The state of [`oauth_server`]: what the test looks at and turns.
#[derive(Default)]
pub struct OAuthState {
    /// `client_id` → registered redirect URIs.
    pub clients: HashMap<String, Vec<String>>,
    /// code → (client_id, redirect_uri, code_challenge, scope, resource).
    codes: HashMap<String, (String, String, String, String, String)>,
    /// Live access tokens.
    pub access_tokens: Vec<String>,
    /// Live refresh tokens.
    pub refresh_tokens: Vec<String>,
    /// Revoked tokens, in order.
    pub revoked: Vec<String>,
    /// The `scope` and `resource` of every authorization request.
    pub authorizations: Vec<(String, String)>,
    /// Refresh grants served.
    pub refreshes: usize,
    /// Token requests refused (bad PKCE verifier, unknown code...).
    pub refused: Vec<String>,
    /// `expires_in` of the access tokens issued next.
    pub expires_in: u64,
    counter: usize,
}

/// A loopback OAuth 2.1 authorization server and the MCP server it guards,
/// on one port: RFC 9728 protected-resource metadata, RFC 8414 metadata
/// (issuer `{base}/as`), RFC 7591 registration, an authorize endpoint that
/// approves at once (redirects to the client with code and state), a token
/// endpoint that checks PKCE S256 and rotates refresh tokens, RFC 7009
/// revocation; the MCP server (rmcp) at `{base}/mcp` answers only a live
/// bearer token, else 401 with the `resource_metadata` hint.
pub struct OAuthServer {
    /// The MCP endpoint.
    pub url: String,
    pub state: Arc<Mutex<OAuthState>>,
}

fn form(body: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

fn json_answer(status: u16, value: Value) -> Response<Body> {
    text(status, "application/json", &value.to_string())
}

fn s256(verifier: &str) -> String {
    use base64::Engine;
    use sha2::Digest;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier))
}

pub async fn oauth_server() -> OAuthServer {
    let service = StreamableHttpService::new(
        || Ok(Demo),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let state = Arc::new(Mutex::new(OAuthState {
        expires_in: 3600,
        ..OAuthState::default()
    }));
    let base_cell: Arc<Mutex<String>> = Arc::default();
    let (shared, base_of) = (state.clone(), base_cell.clone());
    let base = serve(move |request: Request<Incoming>| {
        let (service, state, base) = (service.clone(), shared.clone(), base_of.clone());
        async move {
            let base = base.lock().unwrap().clone();
            let path = request.uri().path().to_owned();
            let query = form(request.uri().query().unwrap_or_default().as_bytes());
            match (request.method().as_str(), path.as_str()) {
                ("GET", "/.well-known/oauth-protected-resource/mcp")
                | ("GET", "/.well-known/oauth-protected-resource") => json_answer(
                    200,
                    json!({
                        "resource": format!("{base}/mcp"),
                        "authorization_servers": [format!("{base}/as")],
                        "scopes_supported": ["mcp.tools", "mcp.read"],
                        "bearer_methods_supported": ["header"],
                    }),
                ),
                ("GET", "/.well-known/oauth-authorization-server/as") => json_answer(
                    200,
                    json!({
                        "issuer": format!("{base}/as"),
                        "authorization_endpoint": format!("{base}/as/authorize"),
                        "token_endpoint": format!("{base}/as/token"),
                        "registration_endpoint": format!("{base}/as/register"),
                        "revocation_endpoint": format!("{base}/as/revoke"),
                        "response_types_supported": ["code"],
                        "grant_types_supported": ["authorization_code", "refresh_token"],
                        "code_challenge_methods_supported": ["S256"],
                        "token_endpoint_auth_methods_supported": ["none"],
                    }),
                ),
                ("POST", "/as/register") => {
                    let body = request.into_body().collect().await.unwrap().to_bytes();
                    let body: Value = serde_json::from_slice(&body).unwrap_or_default();
                    let redirects: Vec<String> = body["redirect_uris"]
                        .as_array()
                        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
                        .unwrap_or_default();
                    if redirects.is_empty() {
                        return json_answer(400, json!({"error": "invalid_redirect_uri"}));
                    }
                    let mut state = state.lock().unwrap();
                    state.counter += 1;
                    let client_id = format!("client-{}", state.counter);
                    state.clients.insert(client_id.clone(), redirects.clone());
                    json_answer(
                        201,
                        json!({
                            "client_id": client_id,
                            "redirect_uris": redirects,
                            "token_endpoint_auth_method": "none",
                        }),
                    )
                }
                ("GET", "/as/authorize") => {
                    let get = |k: &str| query.get(k).cloned().unwrap_or_default();
                    let mut state = state.lock().unwrap();
                    let client = get("client_id");
                    let redirect = get("redirect_uri");
                    let known = state
                        .clients
                        .get(&client)
                        .is_some_and(|uris| uris.contains(&redirect));
                    if !known
                        || get("response_type") != "code"
                        || get("code_challenge_method") != "S256"
                        || get("code_challenge").is_empty()
                    {
                        return text(400, "text/plain", "bad authorization request");
                    }
                    state.counter += 1;
                    let code = format!("code-{}", state.counter);
                    state
                        .authorizations
                        .push((get("scope"), get("resource")));
                    state.codes.insert(
                        code.clone(),
                        (client, redirect.clone(), get("code_challenge"), get("scope"), get("resource")),
                    );
                    let mut location = url::Url::parse(&redirect).unwrap();
                    location
                        .query_pairs_mut()
                        .append_pair("code", &code)
                        .append_pair("state", &get("state"));
                    Response::builder()
                        .status(302)
                        .header("location", location.as_str())
                        .body(Full::new(Bytes::new()).boxed())
                        .unwrap()
                }
                ("POST", "/as/token") => {
                    let body = request.into_body().collect().await.unwrap().to_bytes();
                    let params = form(&body);
                    let get = |k: &str| params.get(k).cloned().unwrap_or_default();
                    let mut state = state.lock().unwrap();
                    let granted = match get("grant_type").as_str() {
                        "authorization_code" => matches!(
                            state.codes.remove(&get("code")),
                            Some((client, redirect, challenge, _, _))
                                if client == get("client_id")
                                    && redirect == get("redirect_uri")
                                    && s256(&get("code_verifier")) == challenge
                        ),
                        "refresh_token" => {
                            let old = get("refresh_token");
                            let live = state.refresh_tokens.contains(&old);
                            if live {
                                // Rotation: the old refresh token is spent
                                // (access tokens stay valid until revoked).
                                state.refresh_tokens.retain(|t| *t != old);
                                state.refreshes += 1;
                            }
                            live
                        }
                        _ => false,
                    };
                    if !granted {
                        state.refused.push(get("grant_type"));
                        return json_answer(400, json!({"error": "invalid_grant"}));
                    }
                    state.counter += 1;
                    let access = format!("at-{}-{}", state.counter, s256(&state.counter.to_string()));
                    let refresh = format!("rt-{}-{}", state.counter, s256(&format!("r{}", state.counter)));
                    state.access_tokens.push(access.clone());
                    state.refresh_tokens.push(refresh.clone());
                    json_answer(
                        200,
                        json!({
                            "access_token": access,
                            "token_type": "Bearer",
                            "expires_in": state.expires_in,
                            "refresh_token": refresh,
                            "scope": "mcp.tools mcp.read",
                        }),
                    )
                }
                ("POST", "/as/revoke") => {
                    let body = request.into_body().collect().await.unwrap().to_bytes();
                    let token = form(&body).get("token").cloned().unwrap_or_default();
                    let mut state = state.lock().unwrap();
                    state.access_tokens.retain(|t| *t != token);
                    state.refresh_tokens.retain(|t| *t != token);
                    state.revoked.push(token);
                    text(200, "text/plain", "")
                }
                (_, "/mcp") => {
                    let bearer = request
                        .headers()
                        .get("authorization")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.strip_prefix("Bearer "))
                        .map(str::to_owned);
                    let live = bearer.is_some_and(|b| state.lock().unwrap().access_tokens.contains(&b));
                    if !live {
                        return Response::builder()
                            .status(401)
                            .header(
                                "www-authenticate",
                                format!(
                                    "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\", scope=\"mcp.tools\""
                                ),
                            )
                            .body(Full::new(Bytes::from_static(b"unauthorized")).boxed())
                            .unwrap();
                    }
                    service.handle(request).await
                }
                _ => text(404, "text/plain", "not found"),
            }
        }
    })
    .await;
    *base_cell.lock().unwrap() = base.clone();
    OAuthServer {
        url: format!("{base}/mcp"),
        state,
    }
}
