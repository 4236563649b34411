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
