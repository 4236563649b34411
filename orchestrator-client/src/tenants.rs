//! `/tenants` (service scope).

use crate::client::{Client, M, page_query};
use crate::error::Result;
use orchestrator_core::api::{CreateTenant, CreatedTenant, Page, PageRequest, Tenant};

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
                    .json(request),
            )
            .await
    }

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
