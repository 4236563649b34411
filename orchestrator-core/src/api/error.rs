//! The error envelope and the closed set of machine codes.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::ResponseMeta;

/// Machine-readable error codes. The HTTP status of each code is fixed in one
/// table in the server; clients should branch on the code, never on messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// 422: the body or query does not match its schema (malformed JSON, wrong
    /// types, unknown fields, bad enum values, missing fields);
    /// `details.issues` names every field at fault.
    SchemaValidationFailed,
    /// 400: a well-formed request that breaks a rule.
    ValidationError,
    /// 401: no credential, or one that is unknown, expired or revoked.
    Unauthorized,
    /// 403: the credential's scope or binding does not allow the route.
    Forbidden,
    /// 404: the resource does not exist in the caller's tenant, or the route is
    /// unknown.
    NotFound,
    /// 405: the path exists but not with this method (the answer lists
    /// `Allow`).
    MethodNotAllowed,
    /// 409: the request conflicts with the current state (a reused `request_id`
    /// with another body, a taken name, a transaction PostgreSQL aborted).
    Conflict,
    /// 409: the resource's state does not allow the change; `details` has
    /// `current_state` and `requested_state`.
    InvalidStateTransition,
    /// Run control: the caller's lease on the task is gone (another attempt).
    LeaseLost,
    /// 413: the body is over the route's size limit (1 MiB for most routes).
    PayloadTooLarge,
    /// 429: over the rate limit; retry after `Retry-After` seconds.
    RateLimited,
    /// 400: a remote MCP server failed its verification; `details` names the
    /// failed step and the reason.
    VerificationFailed,
    /// 503: the server cannot take the request now (at its stream cap, shutting
    /// down, database unreachable).
    ServiceUnavailable,
    /// 500: an unexpected fault in the server.
    InternalError,
    /// A code this SDK version does not know yet (the set may grow).
    #[serde(other)]
    Unknown,
}

impl ErrorCode {
    /// The code as it appears on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SchemaValidationFailed => "SCHEMA_VALIDATION_FAILED",
            Self::ValidationError => "VALIDATION_ERROR",
            Self::Unauthorized => "UNAUTHORIZED",
            Self::Forbidden => "FORBIDDEN",
            Self::NotFound => "NOT_FOUND",
            Self::MethodNotAllowed => "METHOD_NOT_ALLOWED",
            Self::Conflict => "CONFLICT",
            Self::InvalidStateTransition => "INVALID_STATE_TRANSITION",
            Self::LeaseLost => "LEASE_LOST",
            Self::PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            Self::RateLimited => "RATE_LIMITED",
            Self::VerificationFailed => "VERIFICATION_FAILED",
            Self::ServiceUnavailable => "SERVICE_UNAVAILABLE",
            Self::InternalError => "INTERNAL_ERROR",
            Self::Unknown => "UNKNOWN",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Field-level problems of a rejected request: `fieldErrors` maps a field path
/// (`budget.token_budget`) to its messages, `formErrors` holds the rest.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Issues {
    /// Messages by field path (`budget.token_budget`).
    #[serde(rename = "fieldErrors")]
    pub field_errors: BTreeMap<String, Vec<String>>,
    /// Messages about the request as a whole.
    #[serde(rename = "formErrors")]
    pub form_errors: Vec<String>,
}

impl Issues {
    /// Issues with one message for one field.
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        let mut issues = Self::default();
        issues.add_field(field, message);
        issues
    }

    /// Issues with one message about the request as a whole.
    pub fn form(message: impl Into<String>) -> Self {
        Self {
            field_errors: BTreeMap::new(),
            form_errors: vec![message.into()],
        }
    }

    /// Adds one message for one field, keeping earlier ones.
    pub fn add_field(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.field_errors
            .entry(field.into())
            .or_default()
            .push(message.into());
    }

    /// Whether there is no message at all.
    pub fn is_empty(&self) -> bool {
        self.field_errors.is_empty() && self.form_errors.is_empty()
    }
}

/// `error` of the envelope.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ErrorBody {
    /// The machine code to branch on.
    pub code: ErrorCode,
    /// What went wrong, for people (do not parse it).
    pub message: String,
    /// What the caller can do about it (`retry the request`), when there is
    /// advice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_hint: Option<String>,
    /// Structured detail: `issues` for schema errors, the states of a refused
    /// transition, the failed step of a verification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
}

/// `{error, meta}`: the body of every error response except the few plain
/// error objects the contract names.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ErrorEnvelope {
    /// The error.
    pub error: ErrorBody,
    /// The request id and time of the answer.
    pub meta: ResponseMeta,
}
