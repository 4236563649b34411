//! `/webhooks` (admin): outbound webhooks signed as Standard Webhooks, their
//! delivery log, redeliver and test sends. The secret is in the answers of
//! [`Webhooks::create`] and [`Webhooks::rotate_secret`] only.

use crate::client::{Client, M, page_query};
use crate::error::Result;
use orchestrator_core::api::{
    CreateWebhook, DeletedWebhook, DeliveryFilter, Page, PageRequest, UpdateWebhook, Webhook,
    WebhookDelivery, WebhookWithSecret,
};
use uuid::Uuid;

/// The `/webhooks` routes.
pub struct Webhooks<'c> {
    pub(crate) client: &'c Client,
}

impl Client {
    /// Outbound webhooks (admin scope).
    pub fn webhooks(&self) -> Webhooks<'_> {
        Webhooks { client: self }
    }
}

impl Webhooks<'_> {
    fn path(id: Uuid, rest: &str) -> String {
        format!("/api/v1/webhooks/{id}{rest}")
    }

    /// `GET /webhooks`: newest first.
    pub async fn list(&self, page: PageRequest) -> Result<Page<Webhook>> {
        self.client
            .page(
                self.client
                    .request(M::GET, "/api/v1/webhooks")
                    .query(&page_query(page)),
            )
            .await
    }

    /// `POST /webhooks`: the record with its secret, shown this once.
    pub async fn create(&self, request: &CreateWebhook) -> Result<WebhookWithSecret> {
        self.client
            .data(
                self.client
                    .request(M::POST, "/api/v1/webhooks")
                    .json(request),
            )
            .await
    }

    /// `GET /webhooks/:id` (never the secret).
    pub async fn get(&self, id: Uuid) -> Result<Webhook> {
        self.client
            .data(self.client.request(M::GET, &Self::path(id, "")))
            .await
    }

    /// `PATCH /webhooks/:id`: the fields given change.
    pub async fn update(&self, id: Uuid, request: &UpdateWebhook) -> Result<Webhook> {
        self.client
            .data(
                self.client
                    .request(M::PATCH, &Self::path(id, ""))
                    .json(request),
            )
            .await
    }

    /// `DELETE /webhooks/:id`, with its deliveries.
    pub async fn delete(&self, id: Uuid) -> Result<DeletedWebhook> {
        self.client
            .data(self.client.request(M::DELETE, &Self::path(id, "")))
            .await
    }

    /// `POST /webhooks/:id/rotate-secret`: the new secret, shown once; the
    /// old one keeps signing (beside it) for 24 h.
    pub async fn rotate_secret(&self, id: Uuid) -> Result<WebhookWithSecret> {
        self.client
            .data(
                self.client
                    .request(M::POST, &Self::path(id, "/rotate-secret")),
            )
            .await
    }

    /// `POST /webhooks/:id/test`: a `webhook.test` event delivered now; the
    /// attempt as it ended.
    pub async fn test(&self, id: Uuid) -> Result<WebhookDelivery> {
        self.client
            .data(self.client.request(M::POST, &Self::path(id, "/test")))
            .await
    }

    /// `GET /webhooks/:id/deliveries`: every attempt, newest first.
    pub async fn deliveries(
        &self,
        id: Uuid,
        filter: &DeliveryFilter,
    ) -> Result<Page<WebhookDelivery>> {
        self.client
            .page(
                self.client
                    .request(M::GET, &Self::path(id, "/deliveries"))
                    .query(filter),
            )
            .await
    }

    /// `POST /webhooks/:id/deliveries/:delivery_id/redeliver`: a new attempt
    /// (same `webhook-id`), due now.
    pub async fn redeliver(&self, id: Uuid, delivery_id: Uuid) -> Result<WebhookDelivery> {
        self.client
            .data(self.client.request(
                M::POST,
                &Self::path(id, &format!("/deliveries/{delivery_id}/redeliver")),
            ))
            .await
    }
}
