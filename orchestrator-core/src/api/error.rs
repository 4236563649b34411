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
    SchemaValidationFailed,
    ValidationError,
    Unauthorized,
    Forbidden,
    NotFound,
    MethodNotAllowed,
    Conflict,
    InvalidStateTransition,
    /// Run control: the caller's lease on the task is gone (another attempt).
    LeaseLost,
    PayloadTooLarge,
    RateLimited,
    VerificationFailed,
    ServiceUnavailable,
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
    #[serde(rename = "fieldErrors")]
    pub field_errors: BTreeMap<String, Vec<String>>,
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

    pub fn add_field(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.field_errors
            .entry(field.into())
            .or_default()
            .push(message.into());
    }

    pub fn is_empty(&self) -> bool {
        self.field_errors.is_empty() && self.form_errors.is_empty()
    }
}

/// `error` of the envelope.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ErrorBody {
    pub code: ErrorCode,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_hint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
}

/// `{error, meta}`: the body of every error response except the few plain
/// error objects the contract names.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ErrorEnvelope {
    pub error: ErrorBody,
    pub meta: ResponseMeta,
}
