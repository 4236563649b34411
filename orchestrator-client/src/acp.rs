//! `/acp`: ACP sessions and the claim that opens one.

use crate::client::{Client, M, page_query};
use crate::error::Result;
use orchestrator_core::api::{
    AcpClaim, AcpClaimed, AcpHeartbeat, AcpSession, AcpSessionFilter, CreateAcpSession, Page,
    PageRequest,
};
use uuid::Uuid;

/// The `Acp` routes: get one from [`Client::acp`](crate::Client::acp).
pub struct Acp<'c> {
    pub(crate) client: &'c Client,
}

impl Acp<'_> {
    /// `POST /acp/sessions`: a new session, or a reused one (`reused: true`).
    pub async fn create_session(&self, request: &CreateAcpSession) -> Result<AcpSession> {
        self.client
            .data(
                self.client
                    .request(M::POST, "/api/v1/acp/sessions")
                    .json(request),
            )
            .await
    }

    /// `GET /acp/sessions`: newest first.
    pub async fn list_sessions(
        &self,
        filter: &AcpSessionFilter,
        page: PageRequest,
    ) -> Result<Page<AcpSession>> {
        self.client
            .page(
                self.client
                    .request(M::GET, "/api/v1/acp/sessions")
                    .query(filter)
                    .query(&page_query(page)),
            )
            .await
    }

    /// `GET /acp/sessions/:id`.
    pub async fn get_session(&self, id: Uuid) -> Result<AcpSession> {
        self.client
            .data(
                self.client
                    .request(M::GET, &format!("/api/v1/acp/sessions/{id}")),
            )
            .await
    }

    /// `POST /acp/sessions/:id/heartbeat`.
    pub async fn heartbeat(&self, id: Uuid, request: &AcpHeartbeat) -> Result<AcpSession> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/acp/sessions/{id}/heartbeat"))
                    .json(request),
            )
            .await
    }

    /// `POST /acp/sessions/:id/close`.
    pub async fn close(&self, id: Uuid) -> Result<AcpSession> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/acp/sessions/{id}/close"))
                    .json(&serde_json::json!({})),
            )
            .await
    }

    /// `POST /acp/claim`: `None` when nothing is claimable (204).
    pub async fn claim(&self, request: &AcpClaim) -> Result<Option<AcpClaimed>> {
        self.client
            .data_or_none(
                self.client
                    .request(M::POST, "/api/v1/acp/claim")
                    .json(request),
            )
            .await
    }
}
