//! `/api-keys`.

use crate::client::{Client, JsonWithRequestId, M, page_query};
use crate::error::Result;
use crate::paging;
use futures_util::stream::BoxStream;
use orchestrator_core::api::{ApiKey, CreateApiKey, CreatedApiKey, Page, PageRequest};
use uuid::Uuid;

/// The `ApiKeys` routes: get one from [`Client::api_keys`](crate::Client::api_keys).
pub struct ApiKeys<'c> {
    pub(crate) client: &'c Client,
}

impl ApiKeys<'_> {
    /// `GET /api-keys`: the tenant's keys, newest first.
    pub async fn list(&self, page: PageRequest) -> Result<Page<ApiKey>> {
        self.client
            .page(
                self.client
                    .request(M::GET, "/api/v1/api-keys")
                    .query(&page_query(page)),
            )
            .await
    }

    /// `POST /api-keys`: the new key is in `api_key`, shown this once.
    pub async fn create(&self, request: &CreateApiKey) -> Result<CreatedApiKey> {
        self.client
            .data(
                self.client
                    .request(M::POST, "/api/v1/api-keys")
                    .json_id(self.client, request),
            )
            .await
    }

    /// `DELETE /api-keys/:id`.
    pub async fn revoke(&self, id: Uuid) -> Result<ApiKey> {
        self.client
            .data(
                self.client
                    .request(M::DELETE, &format!("/api/v1/api-keys/{id}")),
            )
            .await
    }
}

impl ApiKeys<'_> {
    /// Every API key, read page after page (100 at a time) as one
    /// stream; an error ends it.
    pub fn list_all(&self) -> BoxStream<'static, Result<ApiKey>> {
        let client = self.client.clone();
        paging::pages(move |page| {
            let client = client.clone();
            async move { client.api_keys().list(page).await }
        })
    }
}
