//! Outbound webhooks (admin, issue 32): the `webhooks` resource, the
//! delivery log, and the job that posts deliveries.
//!
//! How a delivery comes to be: the event write adds it in its own
//! transaction ([`crate::webhook_outbox`]), so a rolled-back event has none
//! and a committed one is never lost. The job of [`deliver`] then claims it
//! with a lease, posts it signed as Standard Webhooks says ([`sign`]) and
//! records the attempt; each attempt is a row of the log
//! (`GET /webhooks/:id/deliveries`).
//!
//! Secrets are sealed with the deployment's key ([`fields::seal`]) and
//! shown only in the answers of a create and a rotation; events about a
//! webhook carry its URL and filters, never a secret.

mod deliver;
mod fields;
mod operations;
mod rows;
mod shim;
mod sign;
pub mod stats;

pub use stats::{DeliveryStats, Outcome, delivery_stats};

use crate::control_plane::ControlPlane;
use crate::webhook_outbox::{load_webhook_flag, webhooks_may_exist};

impl ControlPlane {
    /// Wakes the background runner when an event commits here while a
    /// webhook may exist, so the deliveries that event wrote go out at once
    /// (not at the runner's next safety-net run). Started by the delivery
    /// job's first run; ends with the control plane.
    async fn start_webhook_wakeups(&self) -> crate::error::Result<()> {
        if !webhooks_may_exist() {
            // Another replica may have created the first one.
            load_webhook_flag(&mut self.store().read().await?).await?;
        }
        if !self.webhook_wakeups_started() {
            return Ok(());
        }
        let mut bus = self.store().subscribe();
        let weak = self.downgrade();
        tokio::spawn(async move {
            use tokio::sync::broadcast::error::RecvError;
            loop {
                match bus.recv().await {
                    Ok(_) | Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => break,
                }
                if !webhooks_may_exist() {
                    continue;
                }
                let Some(core) = weak.upgrade() else { break };
                core.wake_background(core.now().as_datetime());
            }
        });
        Ok(())
    }
}
