//! `/settings/llm` (admin): the tenant's LLM provider.

use crate::client::{Client, M};
use crate::error::Result;
use orchestrator_core::api::{LlmSettings, PutLlmSettings};

/// The `Settings` routes: get one from [`Client::settings`](crate::Client::settings).
pub struct Settings<'c> {
    pub(crate) client: &'c Client,
}

impl Settings<'_> {
    /// `GET /settings/llm`: secrets read back as `"********"`.
    pub async fn llm(&self) -> Result<LlmSettings> {
        self.client
            .data(self.client.request(M::GET, "/api/v1/settings/llm"))
            .await
    }

    /// `PUT /settings/llm`: replaces the settings (`"********"` keeps a
    /// stored secret, an absent one removes it).
    pub async fn put_llm(&self, request: &PutLlmSettings) -> Result<LlmSettings> {
        self.client
            .data(
                self.client
                    .request(M::PUT, "/api/v1/settings/llm")
                    .json(request),
            )
            .await
    }
}
