//! `/healthz` and `/readyz`.

use crate::client::{Client, M};
use crate::error::Result;
use serde_json::Value;

pub struct Health<'c> {
    pub(crate) client: &'c Client,
}

impl Health<'_> {
    /// `GET /healthz`: the process answers.
    pub async fn live(&self) -> Result<Value> {
        self.client
            .data(self.client.request(M::GET, "/healthz"))
            .await
    }

    /// `GET /readyz`: the process and its database answer.
    pub async fn ready(&self) -> Result<Value> {
        self.client
            .data(self.client.request(M::GET, "/readyz"))
            .await
    }
}
