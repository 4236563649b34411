//! `/execution-environments`.

use crate::client::{Client, JsonWithRequestId, M, page_query};
use crate::error::Result;
use crate::paging;
use futures_util::stream::BoxStream;
use orchestrator_core::api::environments::{
    CreateExecutionEnvironment, CreateFromCatalog, EnvironmentCatalogEntry, EnvironmentFilter,
    ExecutionEnvironment, PatchExecutionEnvironment, SetSupportStatus, SupportStatus, Verification,
};
use orchestrator_core::api::{Page, PageRequest};
use uuid::Uuid;

/// The `Environments` routes: get one from [`Client::environments`](crate::Client::environments).
pub struct Environments<'c> {
    pub(crate) client: &'c Client,
}

impl Environments<'_> {
    fn path(id: Uuid, rest: &str) -> String {
        format!("/api/v1/execution-environments/{id}{rest}")
    }

    /// `GET /execution-environments` with `compatibility_status`,
    /// `support_status` and `q` filters.
    pub async fn list(
        &self,
        filter: &EnvironmentFilter,
        page: PageRequest,
    ) -> Result<Page<ExecutionEnvironment>> {
        self.client
            .page(
                self.client
                    .request(M::GET, "/api/v1/execution-environments")
                    .query(filter)
                    .query(&page_query(page)),
            )
            .await
    }

    /// `POST /execution-environments`.
    pub async fn create(
        &self,
        request: &CreateExecutionEnvironment,
    ) -> Result<ExecutionEnvironment> {
        self.client
            .data(
                self.client
                    .request(M::POST, "/api/v1/execution-environments")
                    .json_id(self.client, request),
            )
            .await
    }

    /// `GET /execution-environments/catalog`: the base environments.
    pub async fn catalog(&self) -> Result<Vec<EnvironmentCatalogEntry>> {
        self.client
            .data(
                self.client
                    .request(M::GET, "/api/v1/execution-environments/catalog"),
            )
            .await
    }

    /// `POST /execution-environments/from-catalog`.
    pub async fn from_catalog(&self, request: &CreateFromCatalog) -> Result<ExecutionEnvironment> {
        self.client
            .data(
                self.client
                    .request(M::POST, "/api/v1/execution-environments/from-catalog")
                    .json_id(self.client, request),
            )
            .await
    }

    /// `GET /execution-environments/:id`.
    pub async fn get(&self, id: Uuid) -> Result<ExecutionEnvironment> {
        self.client
            .data(self.client.request(M::GET, &Self::path(id, "")))
            .await
    }

    /// `PATCH /execution-environments/:id` (at least one field).
    pub async fn patch(
        &self,
        id: Uuid,
        request: &PatchExecutionEnvironment,
    ) -> Result<ExecutionEnvironment> {
        self.client
            .data(
                self.client
                    .request(M::PATCH, &Self::path(id, ""))
                    .json_id(self.client, request),
            )
            .await
    }

    /// `DELETE /execution-environments/:id` (409 while tasks name it).
    pub async fn delete(&self, id: Uuid) -> Result<ExecutionEnvironment> {
        self.client
            .data(self.client.request(M::DELETE, &Self::path(id, "")))
            .await
    }

    /// `POST /execution-environments/:id/verify`: runs the probe and stores
    /// the verdict.
    pub async fn verify(&self, id: Uuid) -> Result<Verification> {
        self.client
            .data(self.client.request(M::POST, &Self::path(id, "/verify")))
            .await
    }

    /// `POST /execution-environments/:id/support`: `None` clears the posture.
    pub async fn set_support(
        &self,
        id: Uuid,
        support_status: Option<SupportStatus>,
    ) -> Result<ExecutionEnvironment> {
        self.client
            .data(
                self.client
                    .request(M::POST, &Self::path(id, "/support"))
                    .json(&SetSupportStatus { support_status }),
            )
            .await
    }
}

impl Environments<'_> {
    /// Every execution environment matching `filter`, read page after page (100 at a
    /// time) as one stream; an error ends it.
    pub fn list_all(
        &self,
        filter: &EnvironmentFilter,
    ) -> BoxStream<'static, Result<ExecutionEnvironment>> {
        let client = self.client.clone();
        let filter = filter.clone();
        paging::pages(move |page| {
            let client = client.clone();
            let filter = filter.clone();
            async move { client.environments().list(&filter, page).await }
        })
    }
}
