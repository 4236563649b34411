//! # orchestrator-core
//!
//! The orch control plane as a library. Everything the HTTP server does is a
//! method on [`ControlPlane`]; the server only parses, authenticates and renders.
//! A Rust program can embed the same control plane in-process.
//!
//! How the modules fit:
//! - [`api`]: wire types shared with the server and the SDK (always compiled);
//! - [`error`]: the one error type every operation returns;
//! - `store`: the sqlx storage layer over SQLite (default) or PostgreSQL, with
//!   migrations, transactions that publish events after commit, and the
//!   dialect switch;
//! - one module per resource ([`auth`], [`api_keys`], [`tenants`], [`events`]),
//!   each holding its service, its rows and its rules;
//! - [`idempotency`]: the `request_id` replay mechanism every mutating write uses;
//! - [`secrets`]: the master key, token signing and encryption at rest;
//! - [`maintenance`]: retention sweeps (idempotency records, dead sessions);
//! - [`retention`]: history retention (ended runs, events, logs);
//! - [`clock`] and [`background`]: the time every operation reads, and the
//!   one runner per replica that does work when it falls due (liveness,
//!   retention, and whatever else a module lists in its job table);
//! - the work: [`agents`], [`workers`], [`tasks`] (the state machine in
//!   `tasks::state`, the claim engine in `tasks::claim`), [`workflows`]
//!   (stages, work items, activations, the event feed, operations packets)
//!   and [`liveness`] (heartbeat expiry, task release and timeouts).
//!
//! Without the `store` feature only [`api`] is built; that is what the SDK uses.

#![warn(missing_docs)]

pub mod api;

#[cfg(feature = "store")]
pub mod agents;

#[cfg(feature = "store")]
pub mod api_keys;
#[cfg(feature = "store")]
pub mod auth;
#[cfg(feature = "store")]
pub mod background;
#[cfg(feature = "store")]
pub mod bulk;
#[cfg(feature = "store")]
pub mod caller;
#[cfg(feature = "store")]
pub mod catalog;
#[cfg(feature = "store")]
mod claim_cache;
#[cfg(feature = "store")]
pub mod clock;
#[cfg(feature = "store")]
pub mod config;
#[cfg(feature = "store")]
pub mod control_plane;
mod credential_cache;
#[cfg(feature = "store")]
pub mod environments;
#[cfg(feature = "store")]
pub mod error;
#[cfg(feature = "store")]
pub mod events;
#[cfg(feature = "store")]
pub mod files;
#[cfg(feature = "store")]
pub mod fleet;
#[cfg(feature = "store")]
pub mod gauges;
#[cfg(feature = "store")]
pub mod git;
#[cfg(feature = "store")]
mod id_filter;
#[cfg(feature = "store")]
pub mod idempotency;
#[cfg(feature = "store")]
pub mod keys;
#[cfg(feature = "store")]
pub mod lifecycle;
#[cfg(feature = "store")]
pub mod limits;
#[cfg(feature = "store")]
pub mod liveness;
#[cfg(feature = "store")]
pub mod logs;
#[cfg(feature = "store")]
pub mod maintenance;
#[cfg(feature = "store")]
pub mod playbooks;
#[cfg(feature = "store")]
pub mod retention;
#[cfg(feature = "store")]
pub mod schedules;
#[cfg(feature = "store")]
pub mod secrets;
#[cfg(feature = "store")]
mod startup;
#[cfg(feature = "store")]
pub mod statistics;
#[cfg(feature = "store")]
pub mod store;
#[cfg(feature = "store")]
pub mod tags;
#[cfg(feature = "store")]
pub mod tasks;
#[cfg(feature = "store")]
pub mod tenants;
#[cfg(feature = "store")]
mod wakeup;
#[cfg(feature = "store")]
mod webhook_outbox;
#[cfg(feature = "store")]
pub mod webhooks;
#[cfg(feature = "store")]
pub mod workers;
#[cfg(feature = "store")]
pub mod workflows;
#[cfg(feature = "store")]
pub mod workspaces;

// Integrations (A2A, ACP, claim credentials, remote MCP)
#[cfg(feature = "store")]
pub mod a2a;
#[cfg(feature = "store")]
pub mod acp;
#[cfg(feature = "store")]
pub mod remote_mcp;
#[cfg(feature = "store")]
pub mod settings;

#[cfg(feature = "store")]
pub use {
    caller::Caller,
    config::CoreConfig,
    control_plane::ControlPlane,
    error::{Error, Result},
};
