//! The request pipeline, in order: route → credentials → scope → rate limit →
//! body → handler. Every step fails into the error envelope.

use crate::credentials::{self, Presented};
use crate::error::ApiError;
use crate::metrics::Metrics;
use crate::rate_limit::{Budget, Limiter};
use crate::request::Req;
use crate::response::Body;
use crate::router::Router;
use crate::routes::{self, Access, Route};
use bytes::Bytes;
use futures_util::FutureExt;
use http::{HeaderMap, HeaderValue, Request, Response, header};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use orchestrator_core::{Caller, ControlPlane, Error};
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;
use tracing::Instrument;
use uuid::Uuid;

/// The pause before a write that wrote nothing runs again.
const RETRY_PAUSE: std::time::Duration = std::time::Duration::from_millis(50);

pub(crate) struct App {
    pub core: ControlPlane,
    router: Router,
    limiter: Option<Limiter>,
    /// Request, claim and stream instruments (`GET /metrics`).
    pub metrics: Arc<Metrics>,
    /// Turns `true` when the server shuts down; streams end on it.
    pub stopping: tokio::sync::watch::Receiver<bool>,
    /// The cap on event streams open at once.
    pub streams: crate::sse::StreamCap,
}

impl App {
    pub fn new(
        core: ControlPlane,
        rate_limit_per_minute: u32,
        max_streams: usize,
        stopping: tokio::sync::watch::Receiver<bool>,
    ) -> Self {
        Self {
            core,
            router: Router::new(routes::table()),
            limiter: Limiter::new(rate_limit_per_minute),
            metrics: Arc::new(Metrics::new()),
            stopping,
            streams: crate::sse::StreamCap::new(max_streams),
        }
    }

    /// The application of the `--metrics-listen` address: only
    /// `GET /metrics`, without credentials, reading `main`'s instruments.
    pub fn metrics_only(main: &App) -> Self {
        Self {
            core: main.core.clone(),
            router: Router::new(routes::metrics_table()),
            limiter: None,
            metrics: Arc::clone(&main.metrics),
            stopping: main.stopping.clone(),
            streams: crate::sse::StreamCap::new(0),
        }
    }

    /// Serves one request; never fails (every error is a response).
    pub async fn handle(
        self: Arc<Self>,
        request: Request<Incoming>,
        peer: SocketAddr,
    ) -> Response<Body> {
        let started = Instant::now();
        let request_id = request_id_of(request.headers());
        let method = request.method().clone();
        let path = request.uri().path().to_owned();
        let span = tracing::info_span!(
            "request",
            request_id = %request_id,
            method = %method,
            route = tracing::field::Empty,
        );
        let (route_label, result) = match self.router.find(&method, &path) {
            Ok(matched) => {
                let label = matched.route.path;
                span.record("route", label);
                (
                    label,
                    self.run(matched.route, matched.params, request, peer, &request_id)
                        .instrument(span)
                        .await,
                )
            }
            Err(e) => ("(unmatched)", Err(e)),
        };
        let mut response = result.unwrap_or_else(|e| e.into_response(&request_id));
        if response.status() == http::StatusCode::PAYLOAD_TOO_LARGE {
            // The rest of a refused body may still be on the wire: close the
            // connection rather than read it as the next request.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        if let Ok(value) = HeaderValue::from_str(&request_id) {
            response.headers_mut().insert("x-request-id", value);
        }
        self.metrics.observe(
            method.as_str(),
            route_label,
            response.status(),
            started.elapsed(),
        );
        tracing::info!(
            target: "orch::http",
            method = %method,
            route = route_label,
            status = response.status().as_u16(),
            latency_ms = started.elapsed().as_secs_f64() * 1000.0,
            request_id = %request_id,
            "request"
        );
        response
    }

    async fn run(
        self: &Arc<Self>,
        route: &Route,
        params: Vec<(String, String)>,
        request: Request<Incoming>,
        peer: SocketAddr,
        request_id: &str,
    ) -> Result<Response<Body>, ApiError> {
        let (parts, body) = request.into_parts();
        // A websocket upgrade of a route that takes one goes to the upgrade
        // handler, with its scope, never rate limited.
        let upgrade = route
            .upgrade
            .as_ref()
            .filter(|_| crate::ws::is_upgrade(&parts.method, &parts.headers));
        let (access, rate_limited, handler) = match upgrade {
            Some((scope, handler)) => (Access::Scoped(*scope), false, handler),
            None => (route.access, route.rate_limited, &route.handler),
        };
        // A task token (issue 11) reaches only its own task's routes.
        let mut task_bound = None;
        let caller = match access {
            Access::Public => None,
            Access::Scoped(scope) => {
                let caller = match task_token_of(&parts.headers) {
                    Some(token) => {
                        let (caller, task_id) = self.core.authenticate_task_token(&token).await?;
                        crate::task_tokens::check_route(
                            &parts.method,
                            route.path,
                            &params,
                            task_id,
                            caller.owner_id,
                        )?;
                        task_bound = Some(task_id);
                        caller
                    }
                    None => self.authenticate(&parts.method, &parts.headers).await?,
                };
                caller.require(scope)?;
                Some(caller)
            }
        };
        if rate_limited && let Some(limiter) = &self.limiter {
            let budget = caller
                .as_ref()
                .map_or(Budget::Address(peer.ip()), |c| Budget::Key(c.key_id));
            limiter.check(&budget)?;
        }
        crate::request::check_uri(&parts.uri)?;
        let body = read_body(&parts.headers, body, route.body_limit).await?;
        if let Some(task_id) = task_bound {
            crate::task_tokens::check_body(route.path, &body, task_id)?;
        }
        let req = Req {
            parts,
            params,
            body,
            caller,
            request_id: request_id.to_owned(),
        };
        // A write whose batch failed before its commit was sent wrote
        // nothing (a lost connection, another member's failure): it runs
        // once more, on a fresh connection, before the client hears 503.
        let again = (upgrade.is_none() && credentials::is_state_changing(&req.parts.method))
            .then(|| req.replay());
        let mut result = self.call(handler, req).await;
        let wrote_nothing = matches!(&result, Err(ApiError::Core(e)) if e.nothing_committed());
        if let Some(again) = again.filter(|_| wrote_nothing) {
            tokio::time::sleep(RETRY_PAUSE).await;
            result = self.call(handler, again).await;
        }
        if let Err(ApiError::Core(e)) = &result {
            self.core.store().saw_fault(e.fault());
        }
        Ok(result?.into_response())
    }

    /// Runs a handler. A bug in it answers 500 with the envelope instead of
    /// dropping the connection.
    async fn call(
        self: &Arc<Self>,
        handler: &routes::Handler,
        req: Req,
    ) -> Result<crate::response::Reply, ApiError> {
        match AssertUnwindSafe(handler(Arc::clone(self), req))
            .catch_unwind()
            .await
        {
            Ok(result) => result,
            Err(panic) => {
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "handler panicked".to_owned());
                Err(Error::internal(format!("handler panicked: {message}")).into())
            }
        }
    }

    /// Bearer header first, then the access cookie (with the CSRF rule for
    /// state-changing methods).
    async fn authenticate(
        &self,
        method: &http::Method,
        headers: &HeaderMap,
    ) -> Result<Caller, Error> {
        match credentials::presented(headers)? {
            Presented::Bearer(token) => self.core.authenticate(&token).await,
            Presented::Cookie(token) if credentials::is_state_changing(method) => {
                self.core
                    .authenticate_cookie_write(&token, credentials::csrf_header(headers))
                    .await
            }
            Presented::Cookie(token) => self.core.authenticate(&token).await,
            Presented::None => Err(Error::unauthorized(
                "missing credentials: send `Authorization: Bearer <API key or access token>` or sign in for a session cookie",
            )),
        }
    }
}

/// The bearer credential when it is a task token.
fn task_token_of(headers: &HeaderMap) -> Option<String> {
    match credentials::presented(headers) {
        Ok(Presented::Bearer(token))
            if orchestrator_core::lifecycle::task_token::is_task_token(&token) =>
        {
            Some(token)
        }
        _ => None,
    }
}

/// Reads the whole body, refusing it with 413 past `limit` bytes (by
/// `Content-Length` up front, or while reading a body without one).
async fn read_body(headers: &HeaderMap, body: Incoming, limit: usize) -> Result<Bytes, Error> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > limit as u64) {
        return Err(Error::PayloadTooLarge { limit });
    }
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e)
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            Err(Error::PayloadTooLarge { limit })
        }
        Err(e) => Err(Error::validation(format!(
            "could not read the request body: {e}"
        ))),
    }
}

/// The caller's `X-Request-Id` when it is sane, else a new UUID.
fn request_id_of(headers: &HeaderMap) -> String {
    headers
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty() && v.len() <= 128 && v.bytes().all(|b| b.is_ascii_graphic()))
        .map(str::to_owned)
        .unwrap_or_else(|| Uuid::new_v4().to_string())
}
