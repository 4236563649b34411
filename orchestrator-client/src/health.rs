//! `/healthz`, `/readyz` and `/api/v1/version`.

use crate::client::{Client, M};
use crate::error::Result;
use orchestrator_core::api::{Liveness, Readiness, ServerVersion};

/// The `Health` routes: get one from [`Client::health`](crate::Client::health).
pub struct Health<'c> {
    pub(crate) client: &'c Client,
}

impl Health<'_> {
    /// `GET /healthz`: the process answers.
    pub async fn live(&self) -> Result<Liveness> {
        self.client
            .data(self.client.request(M::GET, "/healthz"))
            .await
    }

    /// `GET /api/v1/version` (no credentials): the server's release.
    pub async fn version(&self) -> Result<ServerVersion> {
        self.client
            .data(self.client.request(M::GET, "/api/v1/version"))
            .await
    }

    /// `GET /readyz`: the process and its database answer.
    pub async fn ready(&self) -> Result<Readiness> {
        self.client
            .data(self.client.request(M::GET, "/readyz"))
            .await
    }
}
