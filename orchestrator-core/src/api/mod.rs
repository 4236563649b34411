//! Wire types: every request body and record that crosses the HTTP boundary.
//!
//! These types are defined once and shared by the server (which parses requests
//! into them and renders records from them), the SDK (which sends and decodes
//! them) and the CLI. This module compiles without the `store` feature so the
//! SDK does not pull in sqlx.
//!
//! Conventions every type here follows:
//! - request bodies are strict (`deny_unknown_fields`) except for fields that the
//!   contract calls arbitrary JSON;
//! - timestamps are [`Timestamp`] (RFC 3339 UTC, exactly three fractional digits);
//! - optional request fields are `Option` and absent optional response fields
//!   are serialized as `null` so clients see a stable shape.

pub mod agents;
pub mod answers;
pub mod api_keys;
pub mod auth;
pub mod batch;
pub mod bulk_actions;
pub mod catalog;
pub mod depth;
pub mod envelope;
pub mod environments;
pub mod error;
pub mod events;
pub mod fleet;
pub mod limits;
pub mod logs;
pub mod operations;
pub mod pagination;
pub mod playbooks;
pub mod run_control;
pub mod schedules;
pub mod task_operations;
pub mod tasks;
pub mod tenants;
mod time;
pub mod version;
mod wire_enum;
pub mod worker_channel;
pub mod workflows;
pub mod workspaces;

pub use agents::*;
pub use answers::{ClaimedCredentials, Liveness, Readiness, WorkerHeartbeatAck};
pub use api_keys::{ApiKey, CreateApiKey, CreatedApiKey};
pub use auth::{LoggedOut, Me, RefreshResponse, Scope, TokenRequest, TokenResponse};
pub use batch::{
    ClaimBatch, ClaimedTask, CompleteBatch, CompleteBatchItem, CompletedItem, CreateBatch,
    CreatedItem,
};
pub use depth::MAX_JSON_DEPTH;
pub use envelope::{DataEnvelope, ListEnvelope, ListMeta, ResponseMeta};
pub use error::{ErrorBody, ErrorCode, ErrorEnvelope, Issues};
pub use events::{Event, EventFilter, EventPage};
pub use limits::{ConcurrencyLimit, DeletedLimit, RateLimit, SetConcurrencyLimit, SetRateLimit};
pub use logs::{
    ExportFormat, IngestLogs, Ingested, LogActor, LogCategory, LogDetail, LogFilter, LogGroup,
    LogGroupBy, LogJson, LogLevel, LogPage, LogQuery, LogRow, LogSource, LogStats, LogStatus,
    NewLogEntry, SortOrder,
};
pub use operations::*;
pub use pagination::{Page, PageRequest};
pub use run_control::{RescheduleTask, RetryPolicy, TaskHeartbeat, TaskHeartbeatAck};
pub use task_operations::*;
pub use tasks::*;
pub use tenants::{CreateTenant, CreatedTenant, Tenant};
pub use time::Timestamp;
pub use version::ServerVersion;
pub use worker_channel::{ServerMessage, SignalKind, SignalSent, SignalWorker, WorkerMessage};
pub use workflows::*;

// Integrations (A2A, ACP, claim credentials, remote MCP)
pub mod a2a;
pub mod acp;
pub mod remote_mcp;
pub mod settings;
pub mod webhooks;
pub use a2a::*;
pub use acp::*;
pub use bulk_actions::*;
pub use remote_mcp::*;
pub use settings::*;
pub use webhooks::*;

/// The fixed id of the tenant every fresh installation starts with.
pub const DEFAULT_TENANT_ID: uuid::Uuid = uuid::Uuid::from_u128(1);
