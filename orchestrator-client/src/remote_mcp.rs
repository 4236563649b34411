//! `/remote-mcp-servers` (admin): remote MCP servers, verified by the
//! server before they are stored. Secret parameter values read back as
//! `"********"`; sending the mask in a replace keeps the stored value.

use crate::client::{Client, M, page_query};
use crate::error::Result;
use orchestrator_core::api::{
    OAuthAuthorization, Page, PageRequest, RemoteMcpServer, RemoteMcpServerRequest,
};
use uuid::Uuid;

/// The `/remote-mcp-servers` routes.
pub struct McpServers<'c> {
    pub(crate) client: &'c Client,
}

impl McpServers<'_> {
    fn path(id: Uuid, rest: &str) -> String {
        format!("/api/v1/remote-mcp-servers/{id}{rest}")
    }

    /// `GET /remote-mcp-servers`: newest first.
    pub async fn list(&self, page: PageRequest) -> Result<Page<RemoteMcpServer>> {
        self.client
            .page(
                self.client
                    .request(M::GET, "/api/v1/remote-mcp-servers")
                    .query(&page_query(page)),
            )
            .await
    }

    /// `POST /remote-mcp-servers`: verified against the server first (a
    /// failure is `400 VERIFICATION_FAILED` with `details.failed_step`).
    pub async fn create(&self, request: &RemoteMcpServerRequest) -> Result<RemoteMcpServer> {
        self.client
            .data(
                self.client
                    .request(M::POST, "/api/v1/remote-mcp-servers")
                    .json(request),
            )
            .await
    }

    /// `GET /remote-mcp-servers/:id`.
    pub async fn get(&self, id: Uuid) -> Result<RemoteMcpServer> {
        self.client
            .data(self.client.request(M::GET, &Self::path(id, "")))
            .await
    }

    /// `PUT /remote-mcp-servers/:id`: a replace, verified first.
    pub async fn replace(
        &self,
        id: Uuid,
        request: &RemoteMcpServerRequest,
    ) -> Result<RemoteMcpServer> {
        self.client
            .data(
                self.client
                    .request(M::PUT, &Self::path(id, ""))
                    .json(request),
            )
            .await
    }

    /// `POST /remote-mcp-servers/:id/reverify`: the record with the outcome
    /// (`verificationStatus` `verified` or `failed`).
    pub async fn reverify(&self, id: Uuid) -> Result<RemoteMcpServer> {
        self.client
            .data(self.client.request(M::POST, &Self::path(id, "/reverify")))
            .await
    }

    /// `DELETE /remote-mcp-servers/:id`: the deleted record.
    pub async fn delete(&self, id: Uuid) -> Result<RemoteMcpServer> {
        self.client
            .data(self.client.request(M::DELETE, &Self::path(id, "")))
            .await
    }

    /// `POST /remote-mcp-servers/:id/oauth/reconnect` (`authMode: oauth`):
    /// the `authorization_url` an admin opens in a browser; the server's
    /// callback then stores the tokens and verifies the server.
    pub async fn oauth_reconnect(&self, id: Uuid) -> Result<OAuthAuthorization> {
        self.client
            .data(
                self.client
                    .request(M::POST, &Self::path(id, "/oauth/reconnect")),
            )
            .await
    }

    /// `POST /remote-mcp-servers/:id/oauth/disconnect`: revokes and deletes
    /// the tokens; the record with `oauthStatus: disconnected`.
    pub async fn oauth_disconnect(&self, id: Uuid) -> Result<RemoteMcpServer> {
        self.client
            .data(
                self.client
                    .request(M::POST, &Self::path(id, "/oauth/disconnect")),
            )
            .await
    }
}
