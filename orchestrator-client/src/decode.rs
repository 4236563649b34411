//! Decoding answers: a success body, or the error envelope as [`Error::Api`].

use crate::error::{Error, Result};
use orchestrator_core::api::ErrorEnvelope;
use reqwest::Response;
use serde::de::DeserializeOwned;

/// Decodes a success body as `T`, or an error response as [`Error::Api`].
pub(crate) async fn decode<T: DeserializeOwned>(response: Response) -> Result<T> {
    let status = response.status();
    let request_id = response
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let bytes = response.bytes().await?;
    if status.is_success() {
        return serde_json::from_slice(&bytes).map_err(|e| Error::Decode {
            status: status.as_u16(),
            message: e.to_string(),
        });
    }
    match serde_json::from_slice::<ErrorEnvelope>(&bytes) {
        Ok(envelope) => Err(Error::Api {
            status: status.as_u16(),
            error: envelope.error,
            request_id,
        }),
        Err(_) => Err(Error::Decode {
            status: status.as_u16(),
            message: String::from_utf8_lossy(&bytes).chars().take(500).collect(),
        }),
    }
}

/// `page` and `per_page` as query pairs.
pub(crate) fn page_query(page: orchestrator_core::api::PageRequest) -> [(&'static str, u32); 2] {
    [("page", page.page), ("per_page", page.per_page)]
}
