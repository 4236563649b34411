//! `/community-catalog/playbooks`, and the tenant's `/specialists` and `/skills`.

use crate::client::{Client, JsonWithRequestId, M, page_query};
use crate::error::Result;
use orchestrator_core::api::catalog::{
    CatalogDetail, CatalogEntry, ImportPreview, ImportRequest, ImportResult, LibraryItem,
};
use orchestrator_core::api::{Page, PageRequest};

/// The `Catalog` routes: get one from [`Client::catalog`](crate::Client::catalog).
pub struct Catalog<'c> {
    pub(crate) client: &'c Client,
}

fn path(id: &str, tail: &str) -> String {
    let mut url = reqwest::Url::parse("http://x/").expect("static URL");
    url.path_segments_mut().expect("base URL").extend([
        "api",
        "v1",
        "community-catalog",
        "playbooks",
        id,
    ]);
    format!("{}{tail}", url.path())
}

impl Catalog<'_> {
    /// `GET /community-catalog/playbooks`.
    pub async fn list(&self) -> Result<Vec<CatalogEntry>> {
        self.client
            .data(
                self.client
                    .request(M::GET, "/api/v1/community-catalog/playbooks"),
            )
            .await
    }

    /// `GET /community-catalog/playbooks/:id`.
    pub async fn get(&self, id: &str) -> Result<CatalogDetail> {
        self.client
            .data(self.client.request(M::GET, &path(id, "")))
            .await
    }

    /// `POST /community-catalog/playbooks/:id/import-preview`.
    pub async fn preview(&self, id: &str) -> Result<ImportPreview> {
        self.client
            .data(self.client.request(M::POST, &path(id, "/import-preview")))
            .await
    }

    /// `POST /community-catalog/playbooks/:id/import`.
    pub async fn import(&self, id: &str, request: &ImportRequest) -> Result<ImportResult> {
        self.client
            .data(
                self.client
                    .request(M::POST, &path(id, "/import"))
                    .json_id(self.client, request),
            )
            .await
    }

    /// `GET /specialists`: the tenant's specialists.
    pub async fn specialists(&self, page: PageRequest) -> Result<Page<LibraryItem>> {
        self.client
            .page(
                self.client
                    .request(M::GET, "/api/v1/specialists")
                    .query(&page_query(page)),
            )
            .await
    }

    /// `GET /skills`: the tenant's skills.
    pub async fn skills(&self, page: PageRequest) -> Result<Page<LibraryItem>> {
        self.client
            .page(
                self.client
                    .request(M::GET, "/api/v1/skills")
                    .query(&page_query(page)),
            )
            .await
    }
}
