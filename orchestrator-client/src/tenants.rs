//! `/tenants` (service scope).

use crate::client::{Client, JsonWithRequestId, M, page_query};
use crate::error::Result;
use crate::paging;
use futures_util::stream::BoxStream;
use orchestrator_core::api::{CreateTenant, CreatedTenant, Page, PageRequest, Tenant};

/// The `Tenants` routes: get one from [`Client::tenants`](crate::Client::tenants).
pub struct Tenants<'c> {
    pub(crate) client: &'c Client,
}

impl Tenants<'_> {
    /// `POST /tenants`: the tenant and its first admin key (shown once).
    pub async fn create(&self, request: &CreateTenant) -> Result<CreatedTenant> {
        self.client
            .data(
                self.client
                    .request(M::POST, "/api/v1/tenants")
                    .json_id(self.client, request),
            )
            .await
    }

    /// `GET /tenants`.
    pub async fn list(&self, page: PageRequest) -> Result<Page<Tenant>> {
        self.client
            .page(
                self.client
                    .request(M::GET, "/api/v1/tenants")
                    .query(&page_query(page)),
            )
            .await
    }
}

impl Tenants<'_> {
    /// Every tenant, read page after page (100 at a time) as one
    /// stream; an error ends it.
    pub fn list_all(&self) -> BoxStream<'static, Result<Tenant>> {
        let client = self.client.clone();
        paging::pages(move |page| {
            let client = client.clone();
            async move { client.tenants().list(page).await }
        })
    }
}
