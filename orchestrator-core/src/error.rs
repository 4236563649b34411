//! The one error type of the core.
//!
//! Variants are named by kind; each kind has one machine code
//! ([`Error::code`]). The HTTP status of each code is decided in one table in
//! the server, so nothing here knows about HTTP.

use crate::api::{ErrorCode, Issues};
use serde_json::{Value, json};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request does not match its schema (wrong type, missing or unknown
    /// field, bad enum value, malformed JSON).
    #[error("{message}")]
    Schema { message: String, issues: Issues },
    /// A well-formed request that breaks a rule.
    #[error("{message}")]
    Validation {
        message: String,
        issues: Option<Issues>,
    },
    #[error("{message}")]
    Unauthorized { message: String },
    #[error("{message}")]
    Forbidden { message: String },
    #[error("{resource} not found")]
    NotFound { resource: &'static str },
    #[error("{message}")]
    Conflict {
        message: String,
        hint: Option<String>,
    },
    #[error("cannot move a {resource} from {current} to {requested}")]
    InvalidTransition {
        resource: &'static str,
        current: String,
        requested: String,
    },
    /// Run control: the caller no longer holds the task's current attempt
    /// (its lease expired, or it names another attempt).
    #[error("{message}")]
    LeaseLost { message: String },
    #[error("request body is larger than {limit} bytes")]
    PayloadTooLarge { limit: usize },
    #[error("too many requests")]
    RateLimited { retry_after_secs: u64 },
    #[error("{message}")]
    VerificationFailed { message: String, details: Value },
    #[error("the database is not reachable")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A bug or an infrastructure failure; the source goes to the log, never to
    /// the client.
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl Error {
    pub fn schema(message: impl Into<String>, issues: Issues) -> Self {
        Self::Schema {
            message: message.into(),
            issues,
        }
    }

    pub fn validation(message: impl Into<String>) -> Self {
        Self::Validation {
            message: message.into(),
            issues: None,
        }
    }

    /// A rule broken by one field.
    pub fn invalid_field(field: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        Self::Validation {
            message: format!("{field}: {message}"),
            issues: Some(Issues::field(field, message)),
        }
    }

    /// A type or format fault in one field that serde cannot see (a `Value`
    /// field that must be an object, a malformed URL or enum word): 422
    /// `SCHEMA_VALIDATION_FAILED` like serde's own faults. `400` is only for
    /// rules between valid fields.
    pub fn schema_field(field: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        Self::Schema {
            message: format!("{field}: {message}"),
            issues: Issues::field(field, message),
        }
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::Unauthorized {
            message: message.into(),
        }
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::Forbidden {
            message: message.into(),
        }
    }

    pub fn not_found(resource: &'static str) -> Self {
        Self::NotFound { resource }
    }

    pub fn conflict(message: impl Into<String>) -> Self {
        Self::Conflict {
            message: message.into(),
            hint: None,
        }
    }

    pub fn lease_lost(message: impl Into<String>) -> Self {
        Self::LeaseLost {
            message: message.into(),
        }
    }

    pub fn internal(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::Internal(source.into())
    }

    /// The machine code clients see.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Schema { .. } => ErrorCode::SchemaValidationFailed,
            Self::Validation { .. } => ErrorCode::ValidationError,
            Self::Unauthorized { .. } => ErrorCode::Unauthorized,
            Self::Forbidden { .. } => ErrorCode::Forbidden,
            Self::NotFound { .. } => ErrorCode::NotFound,
            Self::Conflict { .. } => ErrorCode::Conflict,
            Self::InvalidTransition { .. } => ErrorCode::InvalidStateTransition,
            Self::LeaseLost { .. } => ErrorCode::LeaseLost,
            Self::PayloadTooLarge { .. } => ErrorCode::PayloadTooLarge,
            Self::RateLimited { .. } => ErrorCode::RateLimited,
            Self::VerificationFailed { .. } => ErrorCode::VerificationFailed,
            Self::Unavailable(_) => ErrorCode::ServiceUnavailable,
            Self::Internal(_) => ErrorCode::InternalError,
        }
    }

    /// `error.details` of the envelope, when the kind has any.
    pub fn details(&self) -> Option<Value> {
        match self {
            Self::Schema { issues, .. } => Some(json!({ "issues": issues })),
            Self::Validation {
                issues: Some(issues),
                ..
            } => Some(json!({ "issues": issues })),
            Self::InvalidTransition {
                current, requested, ..
            } => Some(json!({ "current_state": current, "requested_state": requested })),
            Self::PayloadTooLarge { limit } => Some(json!({ "limit_bytes": limit })),
            Self::RateLimited { retry_after_secs } => {
                Some(json!({ "retry_after_seconds": retry_after_secs }))
            }
            Self::VerificationFailed { details, .. } => Some(details.clone()),
            _ => None,
        }
    }

    /// `error.recovery_hint`, when the kind has one.
    pub fn recovery_hint(&self) -> Option<String> {
        match self {
            Self::Conflict { hint, .. } => hint.clone(),
            Self::Unauthorized { .. } => {
                Some("send a valid API key or access token as `Authorization: Bearer ...`".into())
            }
            Self::RateLimited { retry_after_secs } => {
                Some(format!("retry after {retry_after_secs} s"))
            }
            Self::LeaseLost { .. } => {
                Some("stop working on this attempt; claim again for new work".into())
            }
            _ => None,
        }
    }

    /// The message safe to show a client (internal causes are never shown).
    pub fn public_message(&self) -> String {
        self.to_string()
    }
}

impl From<sqlx::Error> for Error {
    fn from(error: sqlx::Error) -> Self {
        match error {
            sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) => {
                Self::Unavailable(Box::new(error))
            }
            // PostgreSQL gave up on this transaction because of another one
            // (deadlock detected, serialization failure; SQLite: busy): a
            // concurrent change the caller can retry, not a bug. Nothing was
            // written, since the transaction rolled back.
            sqlx::Error::Database(ref db)
                if matches!(db.code().as_deref(), Some("40P01" | "40001" | "5" | "517")) =>
            {
                Self::Conflict {
                    message: "the request raced a concurrent change and was rolled back".into(),
                    hint: Some("retry the request".into()),
                }
            }
            other => Self::Internal(Box::new(other)),
        }
    }
}

impl From<serde_json::Error> for Error {
    fn from(error: serde_json::Error) -> Self {
        Self::Internal(Box::new(error))
    }
}
