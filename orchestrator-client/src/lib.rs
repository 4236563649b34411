//! # orchestrator-client
//!
//! A typed async SDK for the orch control-plane API.
//!
//! ```no_run
//! # async fn demo() -> Result<(), orchestrator_client::Error> {
//! let client = orchestrator_client::Client::new("http://127.0.0.1:8080")?.with_api_key("orch_admin_...");
//! let me = client.auth().me().await?;
//! println!("{} in tenant {}", me.scope, me.tenant_id);
//! let keys = client.api_keys().list(Default::default()).await?;
//! # Ok(()) }
//! ```
//!
//! Every route is one method on a per-resource accessor (`client.auth()`,
//! `client.api_keys()`, ...). Request and record types are the server's own
//! (`orchestrator_core::api`, re-exported as [`api`]). Failures are one
//! [`Error`]; an error answered by the server carries its status and envelope.
//!
//! Reads, and writes that carry a `request_id`, are retried on connection
//! errors, `429` (honouring `Retry-After`) and `503` ([`RetryPolicy`]);
//! [`ClientBuilder::generate_request_ids`] gives every such write an id.
//! Lists have a `list_all` that pages through everything as a `Stream`:
//!
//! ```no_run
//! # async fn demo(client: orchestrator_client::Client) -> Result<(), orchestrator_client::Error> {
//! use futures_util::TryStreamExt;
//! let tasks: Vec<_> = client.tasks().list_all(&Default::default()).try_collect().await?;
//! # Ok(()) }
//! ```
//!
//! A client built from a refresh session keeps its short-lived access token
//! fresh by itself (before expiry, and once after a `401`), one refresh at a
//! time across its clones:
//!
//! ```no_run
//! # fn save(_: Option<&str>) {}
//! # async fn demo(url: &str, key: &str) -> Result<(), orchestrator_client::Error> {
//! use orchestrator_client::Client;
//! let session = Client::new(url)?.auth().token(key, true).await?;
//! let client = Client::builder(url)
//!     .refresh_session(session)
//!     // The old refresh token stops working: keep the rotated one.
//!     .on_refresh(|s| save(s.refresh_token.as_deref()))
//!     .build()?;
//! let me = client.auth().me().await?;
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

mod agents;
mod api_keys;
mod auth;
mod catalog;
mod client;
mod decode;
mod environments;
mod error;
mod events;
mod fleet;
mod health;
mod logs;
mod paging;
mod playbooks;
mod schedules;
mod session;
mod sse;
mod tasks;
mod tenants;
mod worker_channel;
mod workflows;
mod workspaces;

pub use agents::{Agents, Workers};
pub use api_keys::ApiKeys;
pub use auth::Auth;
pub use catalog::Catalog;
pub use client::{Client, ClientBuilder, RetryPolicy, install_crypto_provider};
pub use environments::Environments;
pub use error::{Error, Result};
pub use events::Events;
pub use fleet::Fleet;
pub use health::Health;
pub use logs::{LogStreamItem, Logs, StreamFrom};
pub use orchestrator_core::api;
pub use playbooks::Playbooks;
pub use schedules::Schedules;
pub use session::{Session, SessionTokens};
pub use sse::SseEvent;
pub use tasks::{TaskOperation, Tasks};
pub use tenants::Tenants;
pub use worker_channel::WorkerChannel;
pub use workflows::Workflows;
pub use workspaces::{Downloaded, Workspaces};

// Integrations (A2A, ACP, claim credentials, remote MCP)
mod a2a;
mod acp;
mod bulk_actions;
mod limits;
mod remote_mcp;
mod settings;
mod webhooks;
pub use a2a::{A2a, A2aStreamItem};
pub use acp::Acp;
pub use bulk_actions::BulkActions;
pub use limits::Limits;
pub use remote_mcp::McpServers;
pub use settings::Settings;
pub use webhooks::Webhooks;
