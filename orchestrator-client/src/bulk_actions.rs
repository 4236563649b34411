//! `/bulk-actions` (admin): one action over many tasks or workflows,
//! chosen by ids or a filter, run by the server in the background.

use crate::client::{Client, M, page_query};
use crate::error::Result;
use orchestrator_core::api::{BulkAction, CreateBulkAction, Page, PageRequest};
use uuid::Uuid;

/// The `/bulk-actions` routes.
pub struct BulkActions<'c> {
    pub(crate) client: &'c Client,
}

impl Client {
    /// Bulk actions (admin scope).
    pub fn bulk_actions(&self) -> BulkActions<'_> {
        BulkActions { client: self }
    }
}

impl BulkActions<'_> {
    /// `POST /bulk-actions` (`202`): the action, `running` (or `completed`
    /// for a dry run, with only `counts.matched`).
    pub async fn create(&self, request: &CreateBulkAction) -> Result<BulkAction> {
        self.client
            .data(
                self.client
                    .request(M::POST, "/api/v1/bulk-actions")
                    .json(request),
            )
            .await
    }

    /// `GET /bulk-actions`: newest first.
    pub async fn list(&self, page: PageRequest) -> Result<Page<BulkAction>> {
        self.client
            .page(
                self.client
                    .request(M::GET, "/api/v1/bulk-actions")
                    .query(&page_query(page)),
            )
            .await
    }

    /// `GET /bulk-actions/:id`: its status and counts.
    pub async fn get(&self, id: Uuid) -> Result<BulkAction> {
        self.client
            .data(
                self.client
                    .request(M::GET, &format!("/api/v1/bulk-actions/{id}")),
            )
            .await
    }

    /// `POST /bulk-actions/:id/cancel`: the rest is not applied.
    pub async fn cancel(&self, id: Uuid) -> Result<BulkAction> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/bulk-actions/{id}/cancel")),
            )
            .await
    }
}
