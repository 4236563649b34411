//! The SDK's one error type.

use orchestrator_core::api::{ErrorBody, ErrorCode};

/// The SDK's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
/// Everything an SDK call can fail with.
pub enum Error {
    /// The server answered with an error envelope.
    #[error("{status} {}: {}", .error.code, .error.message)]
    Api {
        /// The HTTP status.
        status: u16,
        /// The envelope's `error`: code, message, details, recovery hint.
        error: ErrorBody,
        /// The `X-Request-Id` of the answer, to quote in a bug report.
        request_id: Option<String>,
    },
    /// The server answered with something that is not the expected shape.
    #[error("unexpected response ({status}): {message}")]
    Decode {
        /// The HTTP status (0 when there was none).
        status: u16,
        /// What did not decode, or the start of the body.
        message: String,
    },
    /// The request did not get an answer (connection refused, timeout, ...).
    #[error("request failed: {0}")]
    Transport(#[from] reqwest::Error),
    /// The base URL cannot be used.
    #[error("invalid base URL `{0}`")]
    InvalidUrl(String),
    /// The worker channel's websocket failed (handshake or transport).
    #[error("websocket: {0}")]
    WebSocket(String),
    /// [`ClientBuilder::refresh_session`](crate::ClientBuilder::refresh_session)
    /// got a session without a refresh token (the answer set no refresh cookie).
    #[error("the session has no refresh token to renew its access token with")]
    MissingRefreshToken,
}

impl Error {
    /// The machine code of an API error.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Self::Api { error, .. } => Some(error.code),
            _ => None,
        }
    }

    /// The HTTP status, when the server answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Api { status, .. } | Self::Decode { status, .. } => Some(*status),
            Self::Transport(e) => e.status().map(|s| s.as_u16()),
            Self::InvalidUrl(_) | Self::WebSocket(_) | Self::MissingRefreshToken => None,
        }
    }

    /// `error.details.issues.fieldErrors` of a schema or validation failure.
    pub fn field_errors(&self) -> Option<&serde_json::Map<String, serde_json::Value>> {
        match self {
            Self::Api { error, .. } => error
                .details
                .as_ref()?
                .get("issues")?
                .get("fieldErrors")?
                .as_object(),
            _ => None,
        }
    }
}
