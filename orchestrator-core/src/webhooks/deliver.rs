//! The delivery job: claims due attempts with a lease (one replica per
//! attempt), posts them, and records the outcome; a failed attempt with
//! retries left writes the next one on the schedule of [`BACKOFF_SECONDS`].
//!
//! A claim sets `locked_until` on pending rows in one statement (on
//! PostgreSQL with `FOR UPDATE SKIP LOCKED`), and the outcome is written
//! only while that lease is still the row's, so two replicas never make the
//! same attempt. A replica that dies mid-send leaves the lease to expire;
//! the attempt is then made again (at least once on the wire), but only
//! one outcome is ever recorded for it.

use super::rows::{
    DeliveryRow, LEASE, WebhookRow, delivery_columns, find_attempt, insert_attempt, require_webhook,
};
use super::sign::signature_header;
use super::stats::{Outcome, STATS};
use crate::api::{DeliveryStatus, Scope, Timestamp, WebhookPayload};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::store::{Access, on_db};
use chrono::{DateTime, Utc};
use sqlx::types::Json;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// The wait after each failed attempt before the next one: about 5 s,
/// 30 s, 2 min, 10 min, 30 min, 1 h, 3 h, 6 h; after the ninth attempt the
/// delivery is `failed`.
pub(crate) const BACKOFF_SECONDS: [i64; 8] = [5, 30, 120, 600, 1800, 3600, 10_800, 21_600];
/// Most attempts one delivery gets from the schedule.
const MAX_ATTEMPTS: i32 = BACKOFF_SECONDS.len() as i32 + 1;
/// Attempts one claim takes.
const BATCH: i64 = 32;
/// How long one post may take.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Most characters of an error kept on the attempt.
const MAX_ERROR_CHARS: usize = 500;

fn http_client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
        reqwest::Client::builder()
            .timeout(TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("orch-webhooks/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("an HTTP client with rustls")
    })
}

/// Who the control plane acts as when the job changes a webhook.
fn system(tenant_id: Uuid) -> Caller {
    Caller {
        tenant_id,
        scope: Scope::Service,
        key_id: Uuid::nil(),
        owner_type: "system".into(),
        owner_id: None,
    }
}

/// What one post came to.
enum Sent {
    Delivered(u16),
    /// An answer that is not 2xx, or no answer; `gone` for a `410`.
    Failed {
        status: Option<u16>,
        error: String,
        gone: bool,
        retry: bool,
    },
}

/// Claims up to `limit` due pending attempts (only `row_id` when given)
/// for `lease` (until then they are this replica's).
async fn claim(
    access: &mut (impl Access + ?Sized),
    now: DateTime<Utc>,
    lease: DateTime<Utc>,
    only: Option<Uuid>,
    limit: i64,
) -> Result<Vec<DeliveryRow>> {
    // The first attempt is due when its event commits (whatever its
    // `next_attempt_at`, which is the event's time); later ones at their
    // time.
    Ok(on_db!(access, c =>
        sqlite: sqlx::query_as(concat!(
            "UPDATE webhook_deliveries SET locked_until = $1 WHERE row_id IN (\
             SELECT row_id FROM webhook_deliveries WHERE status = 'pending' \
             AND ($3 IS NULL OR row_id = $3) \
             AND (attempt = 1 OR next_attempt_at <= $2) \
             AND (locked_until IS NULL OR locked_until <= $2) \
             ORDER BY next_attempt_at LIMIT $4) RETURNING ", delivery_columns!()
        ))
        .bind(lease).bind(now).bind(only).bind(limit)
        .fetch_all(c).await,
        postgres: sqlx::query_as(concat!(
            "UPDATE webhook_deliveries SET locked_until = $1 WHERE row_id IN (\
             SELECT row_id FROM webhook_deliveries WHERE status = 'pending' \
             AND ($3::uuid IS NULL OR row_id = $3) \
             AND (attempt = 1 OR next_attempt_at <= $2) \
             AND (locked_until IS NULL OR locked_until <= $2) \
             ORDER BY next_attempt_at LIMIT $4 FOR UPDATE SKIP LOCKED) RETURNING ", delivery_columns!()
        ))
        .bind(lease).bind(now).bind(only).bind(limit)
        .fetch_all(c).await,
    )?)
}

/// When the job next has work: the earliest retry, or lease expiry of an
/// attempt some replica holds.
async fn next_due(access: &mut (impl Access + ?Sized)) -> Result<Option<DateTime<Utc>>> {
    let (due,): (Option<DateTime<Utc>>,) = on_db!(access, c => sqlx::query_as(
        "SELECT MIN(CASE WHEN locked_until IS NOT NULL AND locked_until > next_attempt_at \
         THEN locked_until ELSE next_attempt_at END) FROM webhook_deliveries WHERE status = 'pending'"
    )
    .fetch_one(c)
    .await)?;
    Ok(due)
}

/// `text` cut to [`MAX_ERROR_CHARS`].
fn short(text: impl std::fmt::Display) -> String {
    let text = text.to_string();
    match text.char_indices().nth(MAX_ERROR_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

impl ControlPlane {
    /// The background job (one line in the runner's table): makes every due
    /// attempt, then answers when the next one is due.
    pub(crate) async fn webhook_delivery_job(&self) -> Result<Option<DateTime<Utc>>> {
        self.start_webhook_wakeups().await?;
        loop {
            let now = self.now().as_datetime();
            let claimed = {
                let mut tx = self.store().begin().await?;
                let rows = claim(&mut tx, now, now + LEASE, None, BATCH).await?;
                tx.commit().await?;
                rows
            };
            let full = claimed.len() as i64 == BATCH;
            if claimed.is_empty() {
                break;
            }
            let sends = claimed.into_iter().map(|row| self.make_attempt(row));
            for outcome in futures_util::future::join_all(sends).await {
                if let Err(error) = outcome {
                    tracing::warn!(%error, "a webhook delivery attempt could not be recorded");
                }
            }
            if !full {
                break;
            }
        }
        let mut conn = self.store().read().await?;
        next_due(&mut conn).await
    }

    /// Makes attempt `row_id`, leased to the caller when it was written,
    /// now, and answers it as it ended.
    pub(super) async fn send_leased(&self, row_id: Uuid) -> Result<DeliveryRow> {
        let row = find_attempt(&mut self.store().read().await?, row_id)
            .await?
            .ok_or(Error::not_found("delivery"))?;
        self.make_attempt(row).await?;
        find_attempt(&mut self.store().read().await?, row_id)
            .await?
            .ok_or(Error::not_found("delivery"))
    }

    /// Posts one claimed attempt and records what came of it.
    async fn make_attempt(&self, row: DeliveryRow) -> Result<()> {
        let webhook = {
            let mut conn = self.store().read().await?;
            match require_webhook(&mut conn, row.tenant_id, row.webhook_id).await {
                Ok(webhook) => webhook,
                // Deleted meanwhile: its deliveries went with it.
                Err(Error::NotFound { .. }) => return Ok(()),
                Err(e) => return Err(e),
            }
        };
        let started = Instant::now();
        let sent = match webhook.enabled {
            false => Sent::Failed {
                status: None,
                error: "the webhook is disabled".into(),
                gone: false,
                retry: false,
            },
            true => self.post(&webhook, &row).await,
        };
        self.record_attempt(&webhook, &row, sent, started.elapsed())
            .await
    }

    /// The post itself: the event as the body, signed.
    async fn post(&self, webhook: &WebhookRow, row: &DeliveryRow) -> Sent {
        let failed = |error: String| Sent::Failed {
            status: None,
            error,
            gone: false,
            retry: true,
        };
        let url = match reqwest::Url::parse(&webhook.url) {
            Ok(url) => url,
            Err(e) => return failed(format!("the URL does not parse: {e}")),
        };
        if let Err(error) = self.check_webhook_url(&url).await {
            return failed(short(error));
        }
        let body = match self.payload(row).await {
            Ok(body) => body,
            Err(error) => return failed(short(error)),
        };
        let timestamp = self.now().as_datetime().timestamp();
        let secrets = match self.signing_secrets(webhook) {
            Ok(secrets) => secrets,
            Err(error) => return failed(short(error)),
        };
        let refs: Vec<&str> = secrets.iter().map(String::as_str).collect();
        let id = row.id.to_string();
        let signature = match signature_header(&refs, &id, timestamp, &body) {
            Ok(signature) => signature,
            Err(error) => return failed(short(error)),
        };
        let answer = http_client()
            .post(url)
            .header("content-type", "application/json")
            .header("webhook-id", id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(body)
            .send()
            .await;
        match answer {
            Ok(answer) if answer.status().is_success() => Sent::Delivered(answer.status().as_u16()),
            Ok(answer) => {
                let status = answer.status();
                Sent::Failed {
                    status: Some(status.as_u16()),
                    error: format!("the receiver answered {status}"),
                    gone: status.as_u16() == 410,
                    retry: status.as_u16() != 410,
                }
            }
            Err(e) if e.is_timeout() => failed(format!("no answer within {} s", TIMEOUT.as_secs())),
            Err(e) => failed(short(format!("could not post: {e}"))),
        }
    }

    /// The body of an attempt: `{id, type, created_at, data}` of its event.
    async fn payload(&self, row: &DeliveryRow) -> Result<Vec<u8>> {
        let mut conn = self.store().read().await?;
        let found: Option<(i64, String, DateTime<Utc>, Json<serde_json::Value>)> = on_db!(&mut conn, c => sqlx::query_as(
                "SELECT id, type, created_at, data FROM events WHERE tenant_id = $1 AND id = $2"
            )
            .bind(row.tenant_id)
            .bind(row.event_id)
            .fetch_optional(c)
            .await)?;
        let (id, event_type, created_at, data) =
            found.ok_or_else(|| Error::internal("the delivery's event is gone"))?;
        Ok(serde_json::to_vec(&WebhookPayload {
            id,
            event_type,
            created_at: Timestamp::from(created_at),
            data: data.0,
        })?)
    }

    /// Writes the outcome while the lease is still ours: the attempt's
    /// status, the next attempt when retries are left, and for a `410` the
    /// webhook disabled (with a `webhook.disabled` event).
    async fn record_attempt(
        &self,
        webhook: &WebhookRow,
        row: &DeliveryRow,
        sent: Sent,
        took: Duration,
    ) -> Result<()> {
        let now = self.now().as_datetime();
        let (status, response, error, retry, gone) = match &sent {
            Sent::Delivered(code) => (DeliveryStatus::Delivered, Some(*code), None, false, false),
            Sent::Failed {
                status,
                error,
                gone,
                retry,
            } => (
                DeliveryStatus::Failed,
                *status,
                Some(error.clone()),
                *retry,
                *gone,
            ),
        };
        let mut tx = self.store().begin().await?;
        let written = on_db!(&mut tx, c => sqlx::query(
            "UPDATE webhook_deliveries SET status = $1, response_status = $2, last_error = $3, \
             delivered_at = $4, duration_ms = $5, locked_until = NULL \
             WHERE row_id = $6 AND status = 'pending' AND locked_until = $7"
        )
        .bind(status.as_str())
        .bind(response.map(i32::from))
        .bind(&error)
        .bind((status == DeliveryStatus::Delivered).then_some(now))
        .bind(i64::try_from(took.as_millis()).unwrap_or(i64::MAX))
        .bind(row.row_id)
        .bind(row.locked_until)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
        if written == 0 {
            // The lease ran out and another replica took the attempt over.
            return Ok(());
        }
        let mut outcome = match status {
            DeliveryStatus::Delivered => Outcome::Delivered,
            _ => Outcome::Failed,
        };
        if retry && row.attempt < MAX_ATTEMPTS {
            let wait = BACKOFF_SECONDS[usize::try_from(row.attempt - 1).unwrap_or(0)];
            let due = now + chrono::Duration::seconds(wait);
            insert_attempt(&mut tx, row, row.attempt + 1, due, now).await?;
            outcome = Outcome::Retrying;
        }
        if gone {
            outcome = Outcome::Gone;
            let disabled = on_db!(&mut tx, c => sqlx::query(
                "UPDATE webhooks SET enabled = $1, updated_at = $2 WHERE id = $3 AND enabled = $4"
            )
            .bind(false)
            .bind(now)
            .bind(webhook.id)
            .bind(true)
            .execute(c)
            .await
            .map(|r| r.rows_affected()))?;
            if disabled == 1 {
                let row = WebhookRow {
                    enabled: false,
                    ..webhook.clone()
                };
                super::rows::record_event(
                    &mut tx,
                    &system(webhook.tenant_id),
                    "webhook.disabled",
                    &row,
                )
                .await?;
            }
        }
        tx.commit().await?;
        STATS.observe(outcome, took);
        if outcome == Outcome::Retrying {
            self.wake_background(now + chrono::Duration::seconds(BACKOFF_SECONDS[0]));
        }
        Ok(())
    }
}
