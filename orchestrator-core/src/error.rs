//! The one error type of the core.
//!
//! Variants are named by kind; each kind has one machine code
//! ([`Error::code`]). The HTTP status of each code is decided in one table in
//! the server, so nothing here knows about HTTP.

use crate::api::{ErrorCode, Issues};
use serde_json::{Value, json};

/// A request over a route's body limit, in the words of its user: a size
/// in MiB and, on the upload routes, the per-file limit too.
fn too_large_message(limit: usize) -> String {
    let mib = limit as f64 / (1024.0 * 1024.0);
    if limit >= 16 * 1024 * 1024 {
        format!(
            "the request is larger than {mib:.0} MiB (files may be up to 10 MiB each, {mib:.0} MiB per request)"
        )
    } else {
        format!("the request body is larger than {mib:.0} MiB")
    }
}

/// The result of every fallible core operation; the error defaults to
/// [`Error`], the one the server turns into the error envelope.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Every way a core operation can fail, one variant per kind of failure
/// the client can tell apart; [`Error::code`] gives its machine code and
/// [`Error::details`] the structured part of the envelope.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request does not match its schema (wrong type, missing or unknown
    /// field, bad enum value, malformed JSON).
    #[error("{message}")]
    Schema {
        /// One line for people, naming the first faulty field.
        message: String,
        /// Every fault, by field, for the envelope's `details.issues`.
        issues: Issues,
    },
    /// A well-formed request that breaks a rule.
    #[error("{message}")]
    Validation {
        /// What rule was broken, for people.
        message: String,
        /// The faults by field when the rule belongs to fields; `None` for a
        /// rule of the request as a whole (no `details` then).
        issues: Option<Issues>,
    },
    /// No credential, or one that is unknown, expired or revoked.
    #[error("{message}")]
    Unauthorized {
        /// Which of those it was, for people.
        message: String,
    },
    /// A known caller without the right (scope, role, tenant) to do this.
    #[error("{message}")]
    Forbidden {
        /// The right that is missing, for people.
        message: String,
    },
    /// The named resource does not exist, or the caller may not see it
    /// (the two answer alike so ids of other tenants do not leak).
    #[error("{resource} not found")]
    NotFound {
        /// The kind of resource, as a word (`task`, `workflow`, ...).
        resource: &'static str,
    },
    /// The request clashes with the current state of the data (a duplicate
    /// name, a concurrent change that rolled it back); nothing was written.
    #[error("{message}")]
    Conflict {
        /// What it clashed with, for people.
        message: String,
        /// The envelope's `recovery_hint` (say, "retry the request");
        /// `None`: no hint.
        hint: Option<String>,
    },
    #[error("cannot move a {resource} from {current} to {requested}")]
    /// A state change the resource's state machine does not allow from
    /// where it is now.
    InvalidTransition {
        /// The kind of resource (`task`, `workflow`, ...).
        resource: &'static str,
        /// The state it is in (`details.current_state`).
        current: String,
        /// The state asked for (`details.requested_state`).
        requested: String,
    },
    /// Run control: the caller no longer holds the task's current attempt
    /// (its lease expired, or it names another attempt).
    #[error("{message}")]
    LeaseLost {
        /// Why the attempt is no longer the caller's, for people.
        message: String,
    },
    /// The request body is over the route's size limit.
    #[error("{}", too_large_message(*.limit))]
    PayloadTooLarge {
        /// The route's limit in bytes (`details.limit_bytes`).
        limit: usize,
    },
    /// The caller went over its request rate; nothing was done.
    #[error("too many requests")]
    RateLimited {
        /// Whole seconds until a retry can succeed (`Retry-After`).
        retry_after_secs: u64,
    },
    /// A check the caller asked for against an outside system failed (git
    /// access of a workspace, a remote MCP server); the request itself was
    /// well-formed.
    #[error("{message}")]
    VerificationFailed {
        /// The step that failed and why, for people.
        message: String,
        /// The envelope's `details`, as is: the failed step and its reason.
        details: Value,
    },
    /// The database cannot be reached (or the store's circuit breaker is
    /// open); the source goes to the log. Safe to retry later.
    #[error("the database is not reachable")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The database refused a write because its disk is full: not a fault
    /// of the request, and not an unreachable database either (the message
    /// says so, for the operator).
    #[error("the database's disk is full: writes fail until space is freed")]
    StorageFull(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A bug or an infrastructure failure; the source goes to the log, never to
    /// the client.
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl Error {
    /// A schema fault ([`Error::Schema`]) with its field issues.
    pub fn schema(message: impl Into<String>, issues: Issues) -> Self {
        Self::Schema {
            message: message.into(),
            issues,
        }
    }

    /// A broken rule of the request as a whole, tied to no field.
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

    /// The same error with `prefix` before each field it names: a fault of a
    /// nested body (a schedule's target) reported at the outer body's path.
    pub fn prefix_fields(self, prefix: &str) -> Self {
        let rename = |issues: Issues| Issues {
            field_errors: issues
                .field_errors
                .into_iter()
                .map(|(field, messages)| (format!("{prefix}{field}"), messages))
                .collect(),
            form_errors: issues.form_errors,
        };
        match self {
            Self::Schema { message, issues } => Self::Schema {
                message: format!("{prefix}{message}"),
                issues: rename(issues),
            },
            Self::Validation {
                message,
                issues: Some(issues),
            } => Self::Validation {
                message: format!("{prefix}{message}"),
                issues: Some(rename(issues)),
            },
            other => other,
        }
    }

    /// An [`Error::Unauthorized`] with this message.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::Unauthorized {
            message: message.into(),
        }
    }

    /// An [`Error::Forbidden`] with this message.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::Forbidden {
            message: message.into(),
        }
    }

    /// An [`Error::NotFound`] for this kind of resource.
    pub fn not_found(resource: &'static str) -> Self {
        Self::NotFound { resource }
    }

    /// An [`Error::Conflict`] without a recovery hint.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::Conflict {
            message: message.into(),
            hint: None,
        }
    }

    /// An [`Error::LeaseLost`] with this message.
    pub fn lease_lost(message: impl Into<String>) -> Self {
        Self::LeaseLost {
            message: message.into(),
        }
    }

    /// An [`Error::Internal`] keeping `source` for the log only.
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
            Self::Unavailable(_) | Self::StorageFull(_) => ErrorCode::ServiceUnavailable,
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

    /// A batch request's item count checked against
    /// [`crate::api::batch::MAX_BATCH`]: 1 to 256 `items`, else a 422
    /// naming the field (`create-batch`, `complete-batch`).
    pub(crate) fn check_batch_items(len: usize) -> Result<()> {
        use crate::api::batch::MAX_BATCH;
        if len == 0 || len as i64 > MAX_BATCH {
            return Err(Error::schema_field(
                "items",
                format!("must hold 1 to {MAX_BATCH} items"),
            ));
        }
        Ok(())
    }

    /// The `error` of one refused item of a batch request (`what` names the
    /// item, e.g. `task_id=...`); a server fault is logged here, as the
    /// server logs a failed request's.
    pub(crate) fn item_body(&self, what: &dyn std::fmt::Display) -> crate::api::ErrorBody {
        if matches!(
            self,
            Error::Internal(_) | Error::Unavailable(_) | Error::StorageFull(_)
        ) {
            tracing::error!(item = %what, error = %self, "a batch item failed");
        }
        self.body()
    }

    /// The envelope's `error` for this error, as the server renders it; the
    /// batch routes answer it per refused item.
    pub fn body(&self) -> crate::api::ErrorBody {
        crate::api::ErrorBody {
            code: self.code(),
            message: self.public_message(),
            recovery_hint: self.recovery_hint(),
            details: self.details(),
        }
    }
}

/// What a database error says about the database itself, beside the
/// request that met it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbFault {
    /// The connection is gone or the server is shutting down (SQLSTATE
    /// class 08, `57P01`-`57P03`, a broken socket, a pool that gave up).
    Unreachable,
    /// The disk is full (PostgreSQL `53100`, SQLite `SQLITE_FULL`, `ENOSPC`).
    DiskFull,
}

/// The database-wide fault `error` reports, if any.
pub fn db_fault(error: &sqlx::Error) -> Option<DbFault> {
    const ENOSPC: i32 = 28;
    match error {
        sqlx::Error::Io(e) if e.raw_os_error() == Some(ENOSPC) => Some(DbFault::DiskFull),
        sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::WorkerCrashed => Some(DbFault::Unreachable),
        sqlx::Error::Database(db) => sqlstate_fault(db.code().as_deref()?),
        // A deferred-row flush reports its cause as text (store::batch).
        sqlx::Error::Protocol(message) => text_fault(message),
        _ => None,
    }
}

/// The fault named by a SQLSTATE (PostgreSQL) or result code (SQLite).
fn sqlstate_fault(code: &str) -> Option<DbFault> {
    match code {
        // disk_full; SQLITE_FULL (13)
        "53100" | "13" => Some(DbFault::DiskFull),
        // admin_shutdown, crash_shutdown, cannot_connect_now
        "57P01" | "57P02" | "57P03" => Some(DbFault::Unreachable),
        // connection_exception and its subclasses
        c if c.starts_with("08") && c.len() == 5 => Some(DbFault::Unreachable),
        _ => None,
    }
}

/// The fault of an error known only by its text (an error wrapped as a
/// message on its way through a write batch).
pub fn text_fault(message: &str) -> Option<DbFault> {
    let lower = message.to_ascii_lowercase();
    if [
        "53100",
        "disk is full",
        "database or disk is full",
        "no space left",
    ]
    .iter()
    .any(|m| lower.contains(m))
    {
        return Some(DbFault::DiskFull);
    }
    [
        "57p01",
        "57p02",
        "57p03",
        "terminating connection",
        "connection reset",
        "connection refused",
        "broken pipe",
        "unexpected eof",
        "pool timed out",
        "the database is not reachable",
        "error communicating with database",
    ]
    .iter()
    .any(|m| lower.contains(m))
    .then_some(DbFault::Unreachable)
}

/// A write batch that failed before its `COMMIT` was sent: nothing of the
/// request was written, so running it again is safe.
#[derive(Debug, thiserror::Error)]
#[error("the write batch failed before its commit was sent: {0}")]
pub struct NotCommitted(pub String);

/// The message of a request the database rolled back because of another
/// transaction ([`Error::is_race`]).
const RACED: &str = "the request raced a concurrent change and was rolled back";

impl Error {
    /// Whether the database rolled the request's statement back because of
    /// another transaction: a deadlock, a serialization failure, or a row
    /// lock waited for past the `lock_timeout` of a writer that gives way
    /// (`crate::store::PG_GIVE_WAY_AFTER`); SQLite: busy. Its savepoint
    /// rolled back with it, so nothing of it was written and it can run
    /// again once the other transaction has committed.
    pub(crate) fn is_race(&self) -> bool {
        matches!(self, Self::Conflict { message, .. } if message == RACED)
    }

    /// Whether the request failed in a write batch that never sent its
    /// commit ([`NotCommitted`]): it wrote nothing and may run again.
    pub fn nothing_committed(&self) -> bool {
        matches!(self, Self::Unavailable(source) if source.is::<NotCommitted>())
    }

    /// The error for a database fault, keeping its cause for the log.
    pub fn from_fault(
        fault: DbFault,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        match fault {
            DbFault::Unreachable => Self::Unavailable(source.into()),
            DbFault::DiskFull => Self::StorageFull(source.into()),
        }
    }

    /// The database fault behind this error, if it is one (an internal
    /// error is searched through its causes).
    pub fn fault(&self) -> Option<DbFault> {
        match self {
            Self::Unavailable(_) => Some(DbFault::Unreachable),
            // `/readyz` repeating what the store remembers: no new fault.
            Self::StorageFull(source) if source.is::<RememberedDiskFull>() => None,
            Self::StorageFull(_) => Some(DbFault::DiskFull),
            Self::Internal(source) => {
                let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(source.as_ref());
                while let Some(e) = cause {
                    if let Some(sqlx) = e.downcast_ref::<sqlx::Error>()
                        && let Some(fault) = db_fault(sqlx)
                    {
                        return Some(fault);
                    }
                    cause = e.source();
                }
                None
            }
            _ => None,
        }
    }
}

impl From<sqlx::Error> for Error {
    fn from(error: sqlx::Error) -> Self {
        if let Some(fault) = db_fault(&error) {
            return Self::from_fault(fault, error);
        }
        match error {
            // PostgreSQL gave up on this statement because of another
            // transaction (deadlock detected, serialization failure, a lock
            // waited for past a writer's `lock_timeout`; SQLite: busy): a
            // concurrent change the caller can retry, not a bug. Nothing of
            // the request was written, since its savepoint rolled back.
            sqlx::Error::Database(ref db)
                if matches!(
                    db.code().as_deref(),
                    Some("40P01" | "40001" | "55P03" | "5" | "517")
                ) =>
            {
                Self::Conflict {
                    message: RACED.into(),
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

/// Why `/readyz` fails while the disk flag is set: the flag, not a new
/// refusal. [`Error::fault`] reports no fault for it: reported as a full
/// disk (the server reports every error's fault), each probe renewed the
/// flag, and a replica with nothing to write stayed unready for as long as
/// its probes came after space was freed.
#[derive(Debug)]
pub(crate) struct RememberedDiskFull;

impl std::fmt::Display for RememberedDiskFull {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("writes failed for lack of space")
    }
}

impl std::error::Error for RememberedDiskFull {}
