//! Outbound webhooks (admin, issue 32): the `webhooks` resource, the
//! delivery log, and the job that posts deliveries.
//!
//! How a delivery comes to be: the event write adds it in its own
//! transaction (`crate::webhook_outbox`), so a rolled-back event has none
//! and a committed one is never lost. The job of `deliver` then claims it
//! with a lease, posts it signed as Standard Webhooks says (`sign`) and
//! records the attempt; each attempt is a row of the log
//! (`GET /webhooks/:id/deliveries`).
//!
//! Secrets are sealed with the deployment's key (`fields::seal`) and
//! shown only in the answers of a create and a rotation; events about a
//! webhook carry its URL and filters, never a secret.

mod deliver;
mod fields;
mod operations;
mod rows;
mod sign;
pub mod stats;

pub use stats::{DeliveryStats, Outcome, delivery_stats};

use crate::control_plane::ControlPlane;
use crate::error::Result;
use crate::store::on_db;
use crate::webhook_outbox::{Filter, note_webhook};
use sqlx::types::Json;
use uuid::Uuid;

impl ControlPlane {
    /// Reads the enabled webhooks' filters for the wake-ups.
    pub(crate) async fn refresh_webhook_filters(&self) -> Result<()> {
        let mut conn = self.store().read().await?;
        let rows: Vec<(Json<Vec<String>>, Option<Uuid>)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT event_types, workspace_id FROM webhooks WHERE enabled = $1"
        )
        .bind(true)
        .fetch_all(c)
        .await)?;
        if !rows.is_empty() {
            // One created on another replica: event writes here carry
            // deliveries from now on (SQLite has one process anyway).
            note_webhook();
        }
        self.webhook_filters().set(
            rows.into_iter()
                .map(|(types, workspace_id)| Filter {
                    event_types: types.0,
                    workspace_id,
                })
                .collect(),
        );
        Ok(())
    }

    /// Wakes the background runner when an event that some webhook wants
    /// commits here, so its deliveries go out at once rather than at the
    /// runner's next safety-net run. Started by the delivery job's first
    /// run; ends with the control plane.
    async fn start_webhook_wakeups(&self) -> Result<()> {
        self.refresh_webhook_filters().await?;
        if !self.webhook_filters().start() {
            return Ok(());
        }
        let mut bus = self.store().subscribe();
        let weak = self.downgrade();
        tokio::spawn(async move {
            use tokio::sync::broadcast::error::RecvError;
            loop {
                let event = match bus.recv().await {
                    Ok(event) => Some(event),
                    Err(RecvError::Lagged(_)) => None,
                    Err(RecvError::Closed) => break,
                };
                let Some(core) = weak.upgrade() else { break };
                let wanted = event
                    .is_none_or(|e| core.webhook_filters().wants(&e.event_type, e.workspace_id));
                if wanted {
                    core.wake_background(core.clock().now());
                }
            }
        });
        Ok(())
    }
}
