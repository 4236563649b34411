//! Every failure of a request, and the one table that turns each into a
//! status and the error envelope.

use crate::response::{Body, full};
use http::{HeaderValue, Response, StatusCode, header};
use orchestrator_core::Error;
use orchestrator_core::api::{ErrorBody, ErrorCode, ErrorEnvelope, ResponseMeta, Timestamp};

/// What a handler or the request pipeline can fail with.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ApiError {
    #[error(transparent)]
    Core(#[from] Error),
    #[error("no route for {path}")]
    RouteNotFound { path: String },
    #[error("method {method} is not allowed here")]
    MethodNotAllowed { method: String, allow: String },
    /// This replica is at one of its own limits (open connections, open
    /// streams): `503` with `Retry-After`, the database being fine.
    #[error("{message}")]
    Busy {
        message: String,
        retry_after_secs: u64,
    },
}

/// The HTTP status of each machine code: the only place statuses are chosen.
pub(crate) fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::SchemaValidationFailed => StatusCode::UNPROCESSABLE_ENTITY,
        ErrorCode::ValidationError | ErrorCode::VerificationFailed => StatusCode::BAD_REQUEST,
        ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
        ErrorCode::Forbidden => StatusCode::FORBIDDEN,
        ErrorCode::NotFound => StatusCode::NOT_FOUND,
        ErrorCode::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
        ErrorCode::Conflict | ErrorCode::InvalidStateTransition | ErrorCode::LeaseLost => {
            StatusCode::CONFLICT
        }
        ErrorCode::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::RateLimited => StatusCode::TOO_MANY_REQUESTS,
        ErrorCode::ServiceUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::InternalError | ErrorCode::Unknown => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl ApiError {
    pub(crate) fn code(&self) -> ErrorCode {
        match self {
            Self::Core(e) => e.code(),
            Self::RouteNotFound { .. } => ErrorCode::NotFound,
            Self::MethodNotAllowed { .. } => ErrorCode::MethodNotAllowed,
            Self::Busy { .. } => ErrorCode::ServiceUnavailable,
        }
    }

    /// The answer as bytes on the wire (`HTTP/1.1`, `Connection: close`),
    /// for a connection refused before any HTTP machinery takes it.
    pub(crate) fn into_raw_response(self, request_id: &str) -> Vec<u8> {
        let (status, extra, body) = self.envelope(request_id);
        let mut out = format!(
            "HTTP/1.1 {} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
            status.as_u16(),
            status.canonical_reason().unwrap_or(""),
            body.len()
        );
        for (name, value) in extra {
            if let Ok(value) = value.to_str() {
                out.push_str(&format!("{name}: {value}\r\n"));
            }
        }
        out.push_str("\r\n");
        let mut bytes = out.into_bytes();
        bytes.extend_from_slice(&body);
        bytes
    }

    /// Renders the envelope. Internal causes are logged here, with the
    /// request id, and never sent.
    pub(crate) fn into_response(self, request_id: &str) -> Response<Body> {
        let (status, extra, bytes) = self.envelope(request_id);
        let mut response = Response::new(full(bytes));
        *response.status_mut() = status;
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        for (name, value) in extra {
            response.headers_mut().insert(name, value);
        }
        response
    }

    /// The status, the headers beyond `Content-Type` and the envelope.
    fn envelope(
        self,
        request_id: &str,
    ) -> (StatusCode, Vec<(header::HeaderName, HeaderValue)>, Vec<u8>) {
        // An internal error whose cause is the database going away or its
        // disk filling up is that, not a bug: 503, however it was wrapped.
        let this = match self {
            Self::Core(Error::Internal(source)) => {
                let e = Error::Internal(source);
                match e.fault() {
                    Some(fault) => Self::Core(Error::from_fault(fault, e)),
                    None => Self::Core(e),
                }
            }
            other => other,
        };
        let code = this.code();
        let status = status_of(code);
        if let Self::Core(
            Error::Internal(source) | Error::Unavailable(source) | Error::StorageFull(source),
        ) = &this
        {
            tracing::error!(request_id, error = %source, debug = ?source, "request failed");
        }
        let mut extra: Vec<(header::HeaderName, HeaderValue)> = Vec::new();
        let body = match &this {
            Self::Core(e) => {
                if let Error::RateLimited { retry_after_secs } = e {
                    extra.push((header::RETRY_AFTER, HeaderValue::from(*retry_after_secs)));
                }
                ErrorBody {
                    code,
                    message: e.public_message(),
                    recovery_hint: e.recovery_hint(),
                    details: e.details(),
                }
            }
            Self::RouteNotFound { path } => ErrorBody {
                code,
                message: format!("no route matches {path}"),
                recovery_hint: Some(
                    "every route lives under /api/v1/; see the API reference".into(),
                ),
                details: None,
            },
            Self::MethodNotAllowed { method, allow } => {
                if let Ok(value) = HeaderValue::from_str(allow) {
                    extra.push((header::ALLOW, value));
                }
                ErrorBody {
                    code,
                    message: format!("method {method} is not allowed on this route"),
                    recovery_hint: Some(format!("allowed: {allow}")),
                    details: None,
                }
            }
            Self::Busy {
                message,
                retry_after_secs,
            } => {
                extra.push((header::RETRY_AFTER, HeaderValue::from(*retry_after_secs)));
                ErrorBody {
                    code,
                    message: message.clone(),
                    recovery_hint: Some(
                        "retry after the Retry-After delay, or on another replica".into(),
                    ),
                    details: None,
                }
            }
        };
        let envelope = ErrorEnvelope {
            error: body,
            meta: ResponseMeta {
                request_id: request_id.to_owned(),
                timestamp: Timestamp::now(),
            },
        };
        let bytes = serde_json::to_vec(&envelope).unwrap_or_else(|_| b"{}".to_vec());
        (status, extra, bytes)
    }
}
