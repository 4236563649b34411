//! The `/webhooks` operations: create, list, get, update, delete, rotate
//! the secret, test send, the delivery log and redeliver.

use super::fields::{self, open, seal};
use super::rows::{
    DeliveryRow, WebhookRow, delivery_columns, insert_attempt, latest_attempt, record_event,
    require_webhook, save_webhook, webhook_columns,
};
use super::sign::new_secret;
use crate::api::{
    CreateWebhook, DeletedWebhook, DeliveryFilter, DeliveryStatus, Page, PageRequest,
    UpdateWebhook, Webhook, WebhookDelivery, WebhookWithSecret,
};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::store::{Access, on_db};
use crate::webhook_outbox::{self, TEST_EVENT, note_webhook};
use serde_json::json;
use sqlx::types::Json;
use uuid::Uuid;

/// How long a rotated-out secret keeps signing deliveries.
pub(crate) const ROTATION_OVERLAP: chrono::Duration = chrono::Duration::hours(24);

/// Checks that `workspace_id` is one of the tenant's workspaces.
async fn check_workspace(
    access: &mut (impl Access + ?Sized),
    tenant_id: Uuid,
    workspace_id: Option<Uuid>,
) -> Result<()> {
    let Some(workspace_id) = workspace_id else {
        return Ok(());
    };
    let found: Option<(Uuid,)> = on_db!(access, c => sqlx::query_as(
        "SELECT id FROM workspaces WHERE tenant_id = $1 AND id = $2"
    )
    .bind(tenant_id)
    .bind(workspace_id)
    .fetch_optional(c)
    .await)?;
    match found {
        Some(_) => Ok(()),
        None => Err(Error::invalid_field(
            "workspace_id",
            "names no workspace of this tenant",
        )),
    }
}

impl ControlPlane {
    /// Refuses a URL whose host is (or resolves to) a loopback, link-local
    /// or private address unless the operator allows it; at create, update,
    /// and again before each send (DNS can change).
    pub(super) async fn check_webhook_url(&self, url: &reqwest::Url) -> Result<()> {
        if self.config().allow_private_network {
            return Ok(());
        }
        crate::git::check_public_host("url", url.host_str().unwrap_or_default()).await
    }

    /// `POST /webhooks` → the record with its secret, shown this once.
    pub async fn create_webhook(
        &self,
        caller: &Caller,
        request: CreateWebhook,
    ) -> Result<WebhookWithSecret> {
        let url = fields::url(&request.url)?;
        let event_types = fields::event_types(&request.event_types)?;
        let description = fields::description(request.description.as_deref())?;
        self.check_webhook_url(&url).await?;
        let id = Uuid::new_v4();
        let secret = new_secret();
        let now = self.now().as_datetime();
        let row = WebhookRow {
            id,
            tenant_id: caller.tenant_id,
            url: url.to_string(),
            description,
            event_types: Json(event_types),
            workspace_id: request.workspace_id,
            enabled: request.enabled.unwrap_or(true),
            secret: seal(self.secrets(), id, &secret),
            previous_secret: None,
            previous_secret_until: None,
            created_at: now,
            updated_at: now,
        };
        note_webhook();
        let mut tx = self.store().begin().await?;
        check_workspace(&mut tx, caller.tenant_id, row.workspace_id).await?;
        save_webhook(&mut tx, &row).await?;
        record_event(&mut tx, caller, "webhook.created", &row).await?;
        tx.commit().await?;
        self.refresh_webhook_filters().await?;
        Ok(WebhookWithSecret {
            webhook: row.to_api(now),
            secret,
        })
    }

    /// `GET /webhooks`: newest first.
    pub async fn list_webhooks(&self, caller: &Caller, page: PageRequest) -> Result<Page<Webhook>> {
        let mut conn = self.store().read().await?;
        let (total,): (i64,) = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT COUNT(*) FROM webhooks WHERE tenant_id = $1"
        )
        .bind(caller.tenant_id)
        .fetch_one(c)
        .await)?;
        let rows: Vec<WebhookRow> = on_db!(&mut conn, c => sqlx::query_as(concat!(
            "SELECT ", webhook_columns!(), " FROM webhooks WHERE tenant_id = $1 \
             ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3"
        ))
        .bind(caller.tenant_id)
        .bind(i64::from(page.per_page))
        .bind(page.offset() as i64)
        .fetch_all(c)
        .await)?;
        let now = self.now().as_datetime();
        let items = rows.iter().map(|r| r.to_api(now)).collect();
        Ok(Page::new(items, total as u64, page))
    }

    /// `GET /webhooks/:id`.
    pub async fn get_webhook(&self, caller: &Caller, id: Uuid) -> Result<Webhook> {
        let mut conn = self.store().read().await?;
        let row = require_webhook(&mut conn, caller.tenant_id, id).await?;
        Ok(row.to_api(self.now().as_datetime()))
    }

    /// `PATCH /webhooks/:id`: the fields given change (a new URL is checked
    /// as at create).
    pub async fn update_webhook(
        &self,
        caller: &Caller,
        id: Uuid,
        request: UpdateWebhook,
    ) -> Result<Webhook> {
        let url = match &request.url {
            Some(text) => {
                let url = fields::url(text)?;
                self.check_webhook_url(&url).await?;
                Some(url.to_string())
            }
            None => None,
        };
        let event_types = match &request.event_types {
            Some(types) => Some(fields::event_types(types)?),
            None => None,
        };
        let description = match &request.description {
            Some(text) => Some(fields::description(text.as_deref())?),
            None => None,
        };
        if request.enabled == Some(true) {
            note_webhook();
        }
        let mut tx = self.store().begin().await?;
        let stored = require_webhook(&mut tx, caller.tenant_id, id).await?;
        if let Some(Some(workspace_id)) = request.workspace_id {
            check_workspace(&mut tx, caller.tenant_id, Some(workspace_id)).await?;
        }
        let now = self.now().as_datetime();
        let row = WebhookRow {
            url: url.unwrap_or(stored.url.clone()),
            event_types: event_types.map(Json).unwrap_or(stored.event_types.clone()),
            description: description.unwrap_or(stored.description.clone()),
            workspace_id: request.workspace_id.unwrap_or(stored.workspace_id),
            enabled: request.enabled.unwrap_or(stored.enabled),
            updated_at: now,
            ..stored
        };
        save_webhook(&mut tx, &row).await?;
        record_event(&mut tx, caller, "webhook.updated", &row).await?;
        tx.commit().await?;
        self.refresh_webhook_filters().await?;
        Ok(row.to_api(now))
    }

    /// `DELETE /webhooks/:id`: its deliveries go with it.
    pub async fn delete_webhook(&self, caller: &Caller, id: Uuid) -> Result<DeletedWebhook> {
        let mut tx = self.store().begin().await?;
        let row = require_webhook(&mut tx, caller.tenant_id, id).await?;
        on_db!(&mut tx, c => sqlx::query("DELETE FROM webhooks WHERE id = $1")
            .bind(id)
            .execute(c)
            .await
            .map(|_| ()))?;
        record_event(&mut tx, caller, "webhook.deleted", &row).await?;
        tx.commit().await?;
        self.refresh_webhook_filters().await?;
        Ok(DeletedWebhook { id, deleted: true })
    }

    /// `POST /webhooks/:id/rotate-secret`: a new secret, shown once; the
    /// old one keeps signing (beside it) for 24 h.
    pub async fn rotate_webhook_secret(
        &self,
        caller: &Caller,
        id: Uuid,
    ) -> Result<WebhookWithSecret> {
        let secret = new_secret();
        let now = self.now().as_datetime();
        let mut tx = self.store().begin().await?;
        let stored = require_webhook(&mut tx, caller.tenant_id, id).await?;
        let row = WebhookRow {
            secret: seal(self.secrets(), id, &secret),
            previous_secret: Some(stored.secret.clone()),
            previous_secret_until: Some(now + ROTATION_OVERLAP),
            updated_at: now,
            ..stored
        };
        save_webhook(&mut tx, &row).await?;
        record_event(&mut tx, caller, "webhook.secret_rotated", &row).await?;
        tx.commit().await?;
        Ok(WebhookWithSecret {
            webhook: row.to_api(now),
            secret,
        })
    }

    /// The secrets a delivery is signed with now: the current one, and the
    /// rotated-out one during its overlap.
    pub(super) fn signing_secrets(&self, row: &WebhookRow) -> Result<Vec<String>> {
        let mut secrets = vec![open(self.secrets(), row.id, &row.secret)?];
        if let (Some(previous), Some(until)) = (&row.previous_secret, row.previous_secret_until)
            && until > self.now().as_datetime()
        {
            secrets.push(open(self.secrets(), row.id, previous)?);
        }
        Ok(secrets)
    }

    /// `POST /webhooks/:id/test`: records a `webhook.test` event, delivers
    /// it to this webhook only, now, and answers the attempt as it ended
    /// (or still pending, if another replica is sending it).
    pub async fn test_webhook(&self, caller: &Caller, id: Uuid) -> Result<WebhookDelivery> {
        let now = self.now().as_datetime();
        let mut tx = self.store().begin().await?;
        let row = require_webhook(&mut tx, caller.tenant_id, id).await?;
        let mut event = NewEvent::new(
            TEST_EVENT,
            "webhook",
            row.id,
            json!({ "webhook_id": row.id, "url": row.url, "test": true }),
        );
        event.workspace_id = row.workspace_id;
        let event = events::record_now(&mut tx, caller, caller.tenant_id, event).await?;
        // Leased to this request from the start: the runner never takes it.
        let lease = now + super::rows::LEASE;
        let row_id = webhook_outbox::insert_delivery(
            &mut tx,
            (caller.tenant_id, row.id),
            (event.id, TEST_EVENT),
            now,
            Some(lease),
        )
        .await?;
        tx.commit().await?;
        let attempt = self.send_leased(row_id).await?;
        Ok(attempt.to_api())
    }

    /// `GET /webhooks/:id/deliveries`: every attempt, newest first.
    pub async fn list_webhook_deliveries(
        &self,
        caller: &Caller,
        id: Uuid,
        filter: DeliveryFilter,
    ) -> Result<Page<WebhookDelivery>> {
        let page = PageRequest::parse(
            filter.page.map(|p| p.to_string()).as_deref(),
            filter.per_page.map(|p| p.to_string()).as_deref(),
        )
        .map_err(|e| Error::invalid_field(e.field, e.message))?;
        let status = filter.status.map(DeliveryStatus::as_str);
        let mut conn = self.store().read().await?;
        require_webhook(&mut conn, caller.tenant_id, id).await?;
        let (total,): (i64,) = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id = $1 \
             AND ($2 IS NULL OR status = $2)"
        )
        .bind(id)
        .bind(status)
        .fetch_one(c)
        .await)?;
        let rows: Vec<DeliveryRow> = on_db!(&mut conn, c => sqlx::query_as(concat!(
            "SELECT ", delivery_columns!(), " FROM webhook_deliveries WHERE webhook_id = $1 \
             AND ($2 IS NULL OR status = $2) \
             ORDER BY created_at DESC, attempt DESC, row_id DESC LIMIT $3 OFFSET $4"
        ))
        .bind(id)
        .bind(status)
        .bind(i64::from(page.per_page))
        .bind(page.offset() as i64)
        .fetch_all(c)
        .await)?;
        let items = rows.iter().map(DeliveryRow::to_api).collect();
        Ok(Page::new(items, total as u64, page))
    }

    /// `POST /webhooks/:id/deliveries/:delivery_id/redeliver`: a new attempt
    /// of the delivery (same `webhook-id`), due now; `409` while one is
    /// pending.
    pub async fn redeliver_webhook_delivery(
        &self,
        caller: &Caller,
        id: Uuid,
        delivery_id: Uuid,
    ) -> Result<WebhookDelivery> {
        let now = self.now().as_datetime();
        let mut tx = self.store().begin().await?;
        require_webhook(&mut tx, caller.tenant_id, id).await?;
        let latest = latest_attempt(&mut tx, caller.tenant_id, id, delivery_id).await?;
        if latest.status == DeliveryStatus::Pending.as_str() {
            return Err(pending_conflict());
        }
        let row = insert_attempt(&mut tx, &latest, latest.attempt + 1, now, now)
            .await?
            .ok_or_else(pending_conflict)?;
        tx.commit().await?;
        self.wake_background(now);
        Ok(row.to_api())
    }
}

fn pending_conflict() -> Error {
    Error::Conflict {
        message: "this delivery already has a pending attempt".into(),
        hint: Some("wait for it, or read the delivery log".into()),
    }
}
