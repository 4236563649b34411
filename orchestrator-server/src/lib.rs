//! # orchestrator-server
//!
//! The HTTP face of [`orchestrator_core::ControlPlane`], on hyper.
//!
//! A request goes through `app` in one direction:
//! route lookup (`router`: 404 for an unknown path, 405 with `Allow` for a
//! wrong method) → credentials (`credentials`: bearer or cookie, CSRF) →
//! the route's scope → the per-key rate limit (`rate_limit`) → the body,
//! within the route's size limit → the handler in `routes`, which parses
//! (`request`, `schema`), calls one core method and renders the envelope
//! (`response`). Every failure becomes the error envelope through one table
//! (`error`). `server` owns sockets, graceful shutdown and the per-request
//! log line. A route may also take websocket upgrades (`Route::upgrade`, with
//! its own scope, never rate limited; `ws`): `GET /api/v1/events` is the
//! event list, or with `Upgrade: websocket` the worker channel.

mod app;
pub mod config;
mod connections;
mod credentials;
mod dashboard;
mod download;
mod error;
mod metrics;
mod openapi;
#[cfg(feature = "otel")]
pub mod otel;
mod rate_limit;
mod request;
mod response;
mod router;
mod routes;
mod schema;
mod server;
mod sse;
mod task_tokens;
mod ws;

pub use config::ServerConfig;
/// The route table as (method, path) pairs (the reliability suite walks it).
pub use routes::route_list;
pub use server::{ServeError, ServerHandle, serve, start};
