//! `/workspaces`.

use crate::client::{Client, M, page_query};
use crate::error::Result;
use orchestrator_core::api::workspaces::{
    CreateWorkspace, PatchWorkspace, SetMemory, Workspace, WorkspaceFilter,
};
use orchestrator_core::api::{Page, PageRequest};
use uuid::Uuid;

pub struct Workspaces<'c> {
    pub(crate) client: &'c Client,
}

impl Workspaces<'_> {
    /// `GET /workspaces` with `q` and `is_active` filters.
    pub async fn list(
        &self,
        filter: &WorkspaceFilter,
        page: PageRequest,
    ) -> Result<Page<Workspace>> {
        self.client
            .page(
                self.client
                    .request(M::GET, "/api/v1/workspaces")
                    .query(filter)
                    .query(&page_query(page)),
            )
            .await
    }

    /// `POST /workspaces`.
    pub async fn create(&self, request: &CreateWorkspace) -> Result<Workspace> {
        self.client
            .data(
                self.client
                    .request(M::POST, "/api/v1/workspaces")
                    .json(request),
            )
            .await
    }

    /// `GET /workspaces/:id`.
    pub async fn get(&self, id: Uuid) -> Result<Workspace> {
        self.client
            .data(
                self.client
                    .request(M::GET, &format!("/api/v1/workspaces/{id}")),
            )
            .await
    }

    /// `PATCH /workspaces/:id` (at least one field).
    pub async fn patch(&self, id: Uuid, request: &PatchWorkspace) -> Result<Workspace> {
        self.client
            .data(
                self.client
                    .request(M::PATCH, &format!("/api/v1/workspaces/{id}"))
                    .json(request),
            )
            .await
    }

    /// `PATCH /workspaces/:id/memory`: sets one key.
    pub async fn set_memory(
        &self,
        id: Uuid,
        key: &str,
        value: serde_json::Value,
    ) -> Result<Workspace> {
        self.client
            .data(
                self.client
                    .request(M::PATCH, &format!("/api/v1/workspaces/{id}/memory"))
                    .json(&SetMemory {
                        key: key.to_owned(),
                        value,
                        request_id: None,
                    }),
            )
            .await
    }

    /// `DELETE /workspaces/:id/memory/:key`.
    pub async fn delete_memory(&self, id: Uuid, key: &str) -> Result<Workspace> {
        let mut url = reqwest::Url::parse("http://x/").expect("static URL");
        url.path_segments_mut().expect("base URL").extend([
            "api",
            "v1",
            "workspaces",
            &id.to_string(),
            "memory",
            key,
        ]);
        self.client
            .data(self.client.request(M::DELETE, url.path()))
            .await
    }
}
