//! [`Route`]: one row of the route table ([`super::table`]) and the
//! builders its rows are written with.

use crate::app::App;
use crate::config::DEFAULT_JSON_BODY_LIMIT;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use http::Method;
use orchestrator_core::api::Scope;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

pub(crate) type HandlerFuture = Pin<Box<dyn Future<Output = Result<Reply, ApiError>> + Send>>;
pub(crate) type Handler = Arc<dyn Fn(Arc<App>, Req) -> HandlerFuture + Send + Sync>;

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// No credential needed (health, the token exchange, refresh, logout).
    Public,
    /// A credential of this scope or higher.
    Scoped(Scope),
}

pub(crate) struct Route {
    pub method: Method,
    /// matchit syntax: `/api/v1/api-keys/{id}`.
    pub path: &'static str,
    pub access: Access,
    pub body_limit: usize,
    /// Whether requests spend the caller's rate-limit budget.
    pub rate_limited: bool,
    pub handler: Handler,
    /// Where a websocket upgrade of this route goes instead (a `GET` with
    /// `Upgrade: websocket` and `Connection: upgrade`), with its own scope;
    /// upgrades are never rate limited.
    pub upgrade: Option<(Scope, Handler)>,
}

impl Route {
    pub(super) fn new<F, Fut>(
        method: Method,
        path: &'static str,
        access: Access,
        handler: F,
    ) -> Self
    where
        F: Fn(Arc<App>, Req) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Reply, ApiError>> + Send + 'static,
    {
        Self {
            method,
            path,
            access,
            body_limit: DEFAULT_JSON_BODY_LIMIT,
            rate_limited: true,
            handler: Arc::new(move |app, req| Box::pin(handler(app, req))),
            upgrade: None,
        }
    }

    pub(super) fn scoped<F, Fut>(
        method: Method,
        path: &'static str,
        scope: Scope,
        handler: F,
    ) -> Self
    where
        F: Fn(Arc<App>, Req) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Reply, ApiError>> + Send + 'static,
    {
        Self::new(method, path, Access::Scoped(scope), handler)
    }

    pub(super) fn public<F, Fut>(method: Method, path: &'static str, handler: F) -> Self
    where
        F: Fn(Arc<App>, Req) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Reply, ApiError>> + Send + 'static,
    {
        Self::new(method, path, Access::Public, handler)
    }

    /// Sets the route's body limit (upload routes).
    pub(super) fn body_limit(mut self, limit: usize) -> Self {
        self.body_limit = limit;
        self
    }

    /// Sends websocket upgrades of this route to `handler` (scope `scope`).
    pub(super) fn upgrade<F, Fut>(mut self, scope: Scope, handler: F) -> Self
    where
        F: Fn(Arc<App>, Req) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Reply, ApiError>> + Send + 'static,
    {
        self.upgrade = Some((scope, Arc::new(move |app, req| Box::pin(handler(app, req)))));
        self
    }

    /// Exempts the route from the rate limiter (health checks, streams).
    pub(super) fn unlimited(mut self) -> Self {
        self.rate_limited = false;
        self
    }
}
