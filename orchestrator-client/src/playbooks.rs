//! `/playbooks`.

use crate::client::{Client, JsonWithRequestId, M, page_query};
use crate::error::Result;
use crate::paging;
use futures_util::stream::BoxStream;
use orchestrator_core::api::playbooks::{
    ArchivePlaybook, CreatePlaybook, DeletedPlaybook, PatchPlaybook, Playbook,
    PlaybookDeleteImpact, PlaybookSummary,
};
use orchestrator_core::api::{Page, PageRequest};
use uuid::Uuid;

/// The `Playbooks` routes: get one from [`Client::playbooks`](crate::Client::playbooks).
pub struct Playbooks<'c> {
    pub(crate) client: &'c Client,
}

impl Playbooks<'_> {
    /// `GET /playbooks`: the current revision of every playbook.
    pub async fn list(&self, page: PageRequest) -> Result<Page<PlaybookSummary>> {
        self.client
            .page(
                self.client
                    .request(M::GET, "/api/v1/playbooks")
                    .query(&page_query(page)),
            )
            .await
    }

    /// `POST /playbooks`: version 1.
    pub async fn create(&self, request: &CreatePlaybook) -> Result<Playbook> {
        self.client
            .data(
                self.client
                    .request(M::POST, "/api/v1/playbooks")
                    .json_id(self.client, request),
            )
            .await
    }

    /// `GET /playbooks/:id`: the active revision with its definition.
    pub async fn get(&self, id: Uuid) -> Result<Playbook> {
        self.client
            .data(
                self.client
                    .request(M::GET, &format!("/api/v1/playbooks/{id}")),
            )
            .await
    }

    /// `GET /playbooks/:id/revisions`: every revision, newest first.
    pub async fn revisions(&self, id: Uuid, page: PageRequest) -> Result<Page<Playbook>> {
        self.client
            .page(
                self.client
                    .request(M::GET, &format!("/api/v1/playbooks/{id}/revisions"))
                    .query(&page_query(page)),
            )
            .await
    }

    /// `PATCH /playbooks/:id`: a new revision with these fields changed.
    pub async fn patch(&self, id: Uuid, request: &PatchPlaybook) -> Result<Playbook> {
        self.client
            .data(
                self.client
                    .request(M::PATCH, &format!("/api/v1/playbooks/{id}"))
                    .json_id(self.client, request),
            )
            .await
    }

    /// `PUT /playbooks/:id`: a new revision with exactly these fields.
    pub async fn replace(&self, id: Uuid, request: &CreatePlaybook) -> Result<Playbook> {
        self.client
            .data(
                self.client
                    .request(M::PUT, &format!("/api/v1/playbooks/{id}"))
                    .json_id(self.client, request),
            )
            .await
    }

    /// `PATCH /playbooks/:id/archive`.
    pub async fn archive(&self, id: Uuid, archived: bool) -> Result<Playbook> {
        self.client
            .data(
                self.client
                    .request(M::PATCH, &format!("/api/v1/playbooks/{id}/archive"))
                    .json(&ArchivePlaybook {
                        archived,
                        request_id: None,
                    }),
            )
            .await
    }

    /// `GET /playbooks/:id/delete-impact`.
    pub async fn delete_impact(&self, id: Uuid) -> Result<PlaybookDeleteImpact> {
        self.client
            .data(
                self.client
                    .request(M::GET, &format!("/api/v1/playbooks/{id}/delete-impact")),
            )
            .await
    }

    /// `DELETE /playbooks/:id` (409 while workflows reference it).
    pub async fn delete(&self, id: Uuid) -> Result<DeletedPlaybook> {
        self.client
            .data(
                self.client
                    .request(M::DELETE, &format!("/api/v1/playbooks/{id}")),
            )
            .await
    }

    /// `DELETE /playbooks/:id/permanent`.
    pub async fn delete_permanently(&self, id: Uuid) -> Result<DeletedPlaybook> {
        self.client
            .data(
                self.client
                    .request(M::DELETE, &format!("/api/v1/playbooks/{id}/permanent")),
            )
            .await
    }
}

impl Playbooks<'_> {
    /// Every playbook, read page after page (100 at a time) as one
    /// stream; an error ends it.
    pub fn list_all(&self) -> BoxStream<'static, Result<PlaybookSummary>> {
        let client = self.client.clone();
        paging::pages(move |page| {
            let client = client.clone();
            async move { client.playbooks().list(page).await }
        })
    }
}
