//! The webhook outbox: the delivery rows an event write adds, in the same
//! transaction, for every enabled webhook of the event's tenant whose
//! `event_types` and `workspace_id` match it (issue 32).
//!
//! It sits below [`crate::events`] (which calls it where event rows are
//! written) and [`crate::webhooks`] (which owns the tables), so neither has
//! to import the other.
//!
//! Why it costs almost nothing when no webhook exists:
//! - on PostgreSQL the deliveries are a `WITH` part of the events' own
//!   statement ([`pg_statement`]): no extra round trip, and the join with an
//!   empty `webhooks` set is an index probe. It always runs there, so a
//!   webhook created on another replica is seen by the next event write;
//! - on SQLite (one process per database file) a second statement runs only
//!   once this process knows a webhook exists ([`note_webhook`]; set at
//!   start and by every create or enable, never cleared: a false "yes" only
//!   costs an empty select).
//!
//! Events written before a webhook existed are never delivered to it: the
//! match is made when the event is written. `webhook.test` events are never
//! matched; the test send writes its one delivery itself.

use crate::error::Result;
use crate::store::{Access, on_db};
use chrono::{DateTime, Utc};
use std::sync::atomic::{AtomicBool, Ordering};
use uuid::Uuid;

/// Whether a webhook may exist in this process's database.
static WEBHOOKS_MAY_EXIST: AtomicBool = AtomicBool::new(false);

/// The event type of a test send, never fanned out.
pub(crate) const TEST_EVENT: &str = "webhook.test";

/// Notes that a webhook exists (before the write that creates or enables
/// it commits).
pub(crate) fn note_webhook() {
    WEBHOOKS_MAY_EXIST.store(true, Ordering::SeqCst);
}

/// Whether a webhook may exist (so event writes may carry deliveries).
pub(crate) fn webhooks_may_exist() -> bool {
    WEBHOOKS_MAY_EXIST.load(Ordering::SeqCst)
}

/// The enabled webhooks' filters as this replica last read them (every
/// delivery job run, and after each local webhook write): committed events
/// are matched against them to wake the background runner only for an
/// event that has deliveries ([`crate::webhooks`]). Across tenants, so a
/// match may be a false "yes", never a false "no" for long.
#[derive(Debug, Default)]
pub(crate) struct Filters {
    started: AtomicBool,
    list: std::sync::RwLock<Vec<Filter>>,
}

/// One webhook's `event_types` and `workspace_id`.
#[derive(Debug, Clone)]
pub(crate) struct Filter {
    pub event_types: Vec<String>,
    pub workspace_id: Option<Uuid>,
}

impl Filters {
    /// `true` the first time only (the wake-ups start then).
    pub(crate) fn start(&self) -> bool {
        !self.started.swap(true, Ordering::SeqCst)
    }

    pub(crate) fn set(&self, list: Vec<Filter>) {
        *self.list.write().unwrap_or_else(|e| e.into_inner()) = list;
    }

    /// Whether some webhook wants an event of `event_type` in
    /// `workspace_id` (the SQL of `matches_sql!`, in memory).
    pub(crate) fn wants(&self, event_type: &str, workspace_id: Option<Uuid>) -> bool {
        let list = self.list.read().unwrap_or_else(|e| e.into_inner());
        event_type != TEST_EVENT
            && list.iter().any(|f| {
                f.workspace_id.is_none_or(|w| Some(w) == workspace_id)
                    && f.event_types.iter().any(|p| type_matches(p, event_type))
            })
    }
}

/// Whether `pattern` (an exact type or `prefix.*`) matches `event_type`.
pub(crate) fn type_matches(pattern: &str, event_type: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) if pattern.ends_with(".*") => event_type.starts_with(prefix),
        _ => pattern == event_type,
    }
}

/// Notes a webhook if the database has one (at start, before any event
/// write; and by the delivery job, for one created on another replica).
pub(crate) async fn load_webhook_flag(access: &mut (impl Access + ?Sized)) -> Result<()> {
    let found: Option<(i32,)> = on_db!(access, c => sqlx::query_as("SELECT 1 FROM webhooks LIMIT 1")
        .fetch_optional(c)
        .await)?;
    if found.is_some() {
        note_webhook();
    }
    Ok(())
}

/// The SQL condition "webhook `w` wants event `e`" (the event's columns
/// `tenant_id`, `type`, `workspace_id`), per dialect.
macro_rules! matches_sql {
    (sqlite, $e:literal) => {
        concat!(
            "w.tenant_id = ", $e, ".tenant_id AND w.enabled = 1 \
             AND (w.workspace_id IS NULL OR w.workspace_id = ", $e, ".workspace_id) \
             AND ", $e, ".type <> 'webhook.test' \
             AND EXISTS (SELECT 1 FROM json_each(w.event_types) p WHERE p.value = ", $e, ".type \
             OR (substr(p.value, -2) = '.*' \
             AND substr(", $e, ".type, 1, length(p.value) - 1) = substr(p.value, 1, length(p.value) - 1)))"
        )
    };
    (postgres, $e:literal) => {
        concat!(
            "w.tenant_id = ", $e, ".tenant_id AND w.enabled \
             AND (w.workspace_id IS NULL OR w.workspace_id = ", $e, ".workspace_id) \
             AND ", $e, ".type <> 'webhook.test' \
             AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(w.event_types) p(v) WHERE p.v = ", $e, ".type \
             OR (right(p.v, 2) = '.*' \
             AND left(", $e, ".type, length(p.v) - 1) = left(p.v, length(p.v) - 1)))"
        )
    };
}

/// The `WITH` part that writes the deliveries of the events a preceding
/// part `ev` inserted (PostgreSQL; `ev` returns `id, tenant_id, type,
/// workspace_id, created_at`).
pub(crate) const PG_DELIVERIES_PART: &str = concat!(
    "wd AS (INSERT INTO webhook_deliveries (row_id, id, tenant_id, webhook_id, event_id, \
     event_type, attempt, status, next_attempt_at, created_at) \
     SELECT gen_random_uuid(), gen_random_uuid(), ev.tenant_id, w.id, ev.id, ev.type, 1, \
     'pending', ev.created_at, ev.created_at FROM ev JOIN webhooks w ON ",
    matches_sql!(postgres, "ev"),
    ")"
);

/// `insert` (an `INSERT INTO events ...`) with the deliveries of its events
/// written by the same statement (PostgreSQL), answering the events' ids.
/// `with` is the statement's other `WITH` parts, joined by commas, if any.
pub(crate) fn pg_statement(with: &str, insert: &str) -> String {
    let with = match with.is_empty() {
        true => String::new(),
        false => format!("{with}, "),
    };
    format!(
        "WITH {with}ev AS ({insert} RETURNING id, tenant_id, type, workspace_id, created_at), \
         {PG_DELIVERIES_PART} SELECT id FROM ev"
    )
}

#[derive(sqlx::FromRow)]
struct Match {
    event_id: i64,
    tenant_id: Uuid,
    webhook_id: Uuid,
    event_type: String,
    created_at: DateTime<Utc>,
}

/// SQLite: writes the deliveries of the events with ids `first..=last`
/// (just inserted by one statement of this transaction). A no-op until a
/// webhook exists.
pub(crate) async fn sqlite_deliveries(
    db: &mut (impl Access + ?Sized),
    first: i64,
    last: i64,
) -> Result<()> {
    if !webhooks_may_exist() {
        return Ok(());
    }
    let matches: Vec<Match> = on_db!(db, c => sqlx::query_as(concat!(
        "SELECT e.id AS event_id, e.tenant_id, w.id AS webhook_id, e.type AS event_type, \
         e.created_at FROM events e JOIN webhooks w ON ",
        matches_sql!(sqlite, "e"),
        " WHERE e.id >= $1 AND e.id <= $2"
    ))
    .bind(first)
    .bind(last)
    .fetch_all(c)
    .await)?;
    for m in matches {
        insert_delivery(
            db,
            (m.tenant_id, m.webhook_id),
            (m.event_id, &m.event_type),
            m.created_at,
            None,
        )
        .await?;
    }
    Ok(())
}

/// Writes the first attempt of a delivery of event `event_id` to
/// `webhook_id`, due at once, leased until `locked_until` when given (to
/// the writer, which makes it itself); answers the attempt's row id.
pub(crate) async fn insert_delivery(
    db: &mut (impl Access + ?Sized),
    (tenant_id, webhook_id): (Uuid, Uuid),
    (event_id, event_type): (i64, &str),
    now: DateTime<Utc>,
    locked_until: Option<DateTime<Utc>>,
) -> Result<Uuid> {
    let row_id = Uuid::new_v4();
    on_db!(db, c => sqlx::query(
        "INSERT INTO webhook_deliveries (row_id, id, tenant_id, webhook_id, event_id, event_type, \
         attempt, status, next_attempt_at, created_at, locked_until) \
         VALUES ($1, $2, $3, $4, $5, $6, 1, 'pending', $7, $7, $8)"
    )
    .bind(row_id)
    .bind(Uuid::new_v4())
    .bind(tenant_id)
    .bind(webhook_id)
    .bind(event_id)
    .bind(event_type)
    .bind(now)
    .bind(locked_until)
    .execute(c)
    .await
    .map(|_| ()))?;
    Ok(row_id)
}
