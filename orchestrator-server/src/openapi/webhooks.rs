//! Outbound webhooks: each route's input and output types.

use super::describe::*;
use http::Method as M;
use orchestrator_core::api::*;

/// Outbound webhooks.
pub(super) fn docs() -> Vec<Doc> {
    vec![
        op(M::GET, "/api/v1/webhooks", "List webhooks (never their secrets)", page::<Webhook>()).paged(),
        op(M::POST, "/api/v1/webhooks", "Create a webhook; the answer shows its secret this once", created::<WebhookWithSecret>()).body::<CreateWebhook>(),
        op(M::GET, "/api/v1/webhooks/{id}", "Get a webhook", ok::<Webhook>()),
        op(M::PATCH, "/api/v1/webhooks/{id}", "Change a webhook's URL, event types, workspace, description or enabled flag", ok::<Webhook>()).body::<UpdateWebhook>(),
        op(M::DELETE, "/api/v1/webhooks/{id}", "Delete a webhook and its delivery log", ok::<DeletedWebhook>()),
        op(M::POST, "/api/v1/webhooks/{id}/rotate-secret", "A new secret, shown once; the old one also signs for 24 h", ok::<WebhookWithSecret>()),
        op(M::POST, "/api/v1/webhooks/{id}/test", "Deliver a webhook.test event now; the attempt as it ended", ok::<WebhookDelivery>()),
        op(M::GET, "/api/v1/webhooks/{id}/deliveries", "Every delivery attempt, newest first", page::<WebhookDelivery>()).query::<DeliveryFilter>(),
        op(M::POST, "/api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver", "Queue a new attempt of a delivery (same webhook-id)", accepted::<WebhookDelivery>()),
    ]
}
