//! The `webhooks` and `webhook_deliveries` tables: rows, columns, reads
//! and the writes the operations and the delivery job share.

use crate::api::{DeliveryStatus, Timestamp, Webhook, WebhookDelivery};
use crate::caller::Caller;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::store::{Access, Tx, on_db};
use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::types::Json;
use uuid::Uuid;

#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct WebhookRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub url: String,
    pub description: Option<String>,
    pub event_types: Json<Vec<String>>,
    pub workspace_id: Option<Uuid>,
    pub enabled: bool,
    /// Sealed ([`super::fields::seal`]).
    pub secret: String,
    /// Sealed; valid until `previous_secret_until`.
    pub previous_secret: Option<String>,
    pub previous_secret_until: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

macro_rules! webhook_columns {
    () => {
        "id, tenant_id, url, description, event_types, workspace_id, enabled, secret, \
         previous_secret, previous_secret_until, created_at, updated_at"
    };
}
pub(crate) use webhook_columns;

impl WebhookRow {
    /// The record; `now` decides whether a rotation's overlap is still on.
    pub(crate) fn to_api(&self, now: DateTime<Utc>) -> Webhook {
        Webhook {
            id: self.id,
            url: self.url.clone(),
            event_types: self.event_types.0.clone(),
            workspace_id: self.workspace_id,
            description: self.description.clone(),
            enabled: self.enabled,
            previous_secret_expires_at: self
                .previous_secret_until
                .filter(|until| *until > now && self.previous_secret.is_some())
                .map(Timestamp::from),
            created_at: self.created_at.into(),
            updated_at: self.updated_at.into(),
        }
    }
}

/// A webhook of `tenant_id` by id, or 404.
pub(crate) async fn require_webhook(
    access: &mut (impl Access + ?Sized),
    tenant_id: Uuid,
    id: Uuid,
) -> Result<WebhookRow> {
    let row: Option<WebhookRow> = on_db!(access, c => sqlx::query_as(concat!(
        "SELECT ", webhook_columns!(), " FROM webhooks WHERE tenant_id = $1 AND id = $2"
    ))
    .bind(tenant_id)
    .bind(id)
    .fetch_optional(c)
    .await)?;
    row.ok_or(Error::not_found("webhook"))
}

/// Inserts or updates every column of `row`.
pub(crate) async fn save_webhook(
    access: &mut (impl Access + ?Sized),
    row: &WebhookRow,
) -> Result<()> {
    on_db!(access, c => sqlx::query(
        "INSERT INTO webhooks (id, tenant_id, url, description, event_types, workspace_id, enabled, \
         secret, previous_secret, previous_secret_until, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
         ON CONFLICT (id) DO UPDATE SET url = excluded.url, description = excluded.description, \
         event_types = excluded.event_types, workspace_id = excluded.workspace_id, \
         enabled = excluded.enabled, secret = excluded.secret, \
         previous_secret = excluded.previous_secret, \
         previous_secret_until = excluded.previous_secret_until, updated_at = excluded.updated_at"
    )
    .bind(row.id)
    .bind(row.tenant_id)
    .bind(&row.url)
    .bind(&row.description)
    .bind(&row.event_types)
    .bind(row.workspace_id)
    .bind(row.enabled)
    .bind(&row.secret)
    .bind(&row.previous_secret)
    .bind(row.previous_secret_until)
    .bind(row.created_at)
    .bind(row.updated_at)
    .execute(c)
    .await
    .map(|_| ()))?;
    Ok(())
}

/// One attempt of a delivery.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct DeliveryRow {
    pub row_id: Uuid,
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub webhook_id: Uuid,
    pub event_id: i64,
    pub event_type: String,
    pub attempt: i32,
    pub status: String,
    pub response_status: Option<i32>,
    pub last_error: Option<String>,
    pub next_attempt_at: DateTime<Utc>,
    pub locked_until: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub delivered_at: Option<DateTime<Utc>>,
}

macro_rules! delivery_columns {
    () => {
        "row_id, id, tenant_id, webhook_id, event_id, event_type, attempt, status, \
         response_status, last_error, next_attempt_at, locked_until, created_at, delivered_at"
    };
}
pub(crate) use delivery_columns;

impl DeliveryRow {
    pub(crate) fn to_api(&self) -> WebhookDelivery {
        let status = DeliveryStatus::parse(&self.status).unwrap_or(DeliveryStatus::Failed);
        WebhookDelivery {
            id: self.id,
            event_id: self.event_id,
            event_type: self.event_type.clone(),
            attempt: u32::try_from(self.attempt).unwrap_or(1),
            status,
            response_status: self.response_status.and_then(|s| u16::try_from(s).ok()),
            last_error: self.last_error.clone(),
            next_attempt_at: (status == DeliveryStatus::Pending)
                .then(|| Timestamp::from(self.next_attempt_at)),
            created_at: self.created_at.into(),
            delivered_at: self.delivered_at.map(Timestamp::from),
        }
    }
}

/// An attempt by its row id.
pub(crate) async fn find_attempt(
    access: &mut (impl Access + ?Sized),
    row_id: Uuid,
) -> Result<Option<DeliveryRow>> {
    Ok(on_db!(access, c => sqlx::query_as(concat!(
        "SELECT ", delivery_columns!(), " FROM webhook_deliveries WHERE row_id = $1"
    ))
    .bind(row_id)
    .fetch_optional(c)
    .await)?)
}

/// The latest attempt of delivery `id` of `webhook_id`, or 404.
pub(crate) async fn latest_attempt(
    access: &mut (impl Access + ?Sized),
    tenant_id: Uuid,
    webhook_id: Uuid,
    id: Uuid,
) -> Result<DeliveryRow> {
    let row: Option<DeliveryRow> = on_db!(access, c => sqlx::query_as(concat!(
        "SELECT ", delivery_columns!(), " FROM webhook_deliveries \
         WHERE tenant_id = $1 AND webhook_id = $2 AND id = $3 ORDER BY attempt DESC LIMIT 1"
    ))
    .bind(tenant_id)
    .bind(webhook_id)
    .bind(id)
    .fetch_optional(c)
    .await)?;
    row.ok_or(Error::not_found("delivery"))
}

/// Writes attempt `attempt` of delivery `id`, pending and due at `due`;
/// `None` when that attempt exists or another one is pending (the unique
/// indexes decide, so concurrent writers never make two).
pub(crate) async fn insert_attempt(
    access: &mut (impl Access + ?Sized),
    previous: &DeliveryRow,
    attempt: i32,
    due: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Option<DeliveryRow>> {
    let row = DeliveryRow {
        row_id: Uuid::new_v4(),
        attempt,
        status: DeliveryStatus::Pending.as_str().into(),
        response_status: None,
        last_error: None,
        next_attempt_at: due,
        locked_until: None,
        // Never before the attempt it follows, so the log's order (newest
        // first) holds even when the event's time came from another clock.
        created_at: now.max(previous.created_at),
        delivered_at: None,
        ..previous.clone()
    };
    let written = on_db!(access, c => sqlx::query(
        "INSERT INTO webhook_deliveries (row_id, id, tenant_id, webhook_id, event_id, event_type, \
         attempt, status, next_attempt_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
         ON CONFLICT DO NOTHING"
    )
    .bind(row.row_id)
    .bind(row.id)
    .bind(row.tenant_id)
    .bind(row.webhook_id)
    .bind(row.event_id)
    .bind(&row.event_type)
    .bind(row.attempt)
    .bind(&row.status)
    .bind(row.next_attempt_at)
    .bind(row.created_at)
    .execute(c)
    .await
    .map(|r| r.rows_affected()))?;
    Ok((written == 1).then_some(row))
}

/// How long a claimed attempt is one replica's (well past the post's
/// timeout).
pub(crate) const LEASE: chrono::Duration = chrono::Duration::seconds(60);

/// Records `webhook.<what>` about `row` (never its secret).
pub(crate) async fn record_event(
    tx: &mut Tx,
    caller: &Caller,
    what: &'static str,
    row: &WebhookRow,
) -> Result<()> {
    let mut event = NewEvent::new(
        what,
        "webhook",
        row.id,
        json!({
            "url": row.url,
            "event_types": row.event_types.0,
            "workspace_id": row.workspace_id,
            "enabled": row.enabled,
        }),
    );
    event.workspace_id = row.workspace_id;
    events::record(tx, caller, row.tenant_id, event).await
}
