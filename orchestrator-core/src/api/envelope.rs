//! The success envelopes: `{data, meta}` for one resource, `{data: [...], meta}`
//! for a page. The server fills `request_id` and `timestamp` on every response.

use super::Timestamp;
use serde::{Deserialize, Serialize};

/// `meta` of a single-resource response.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ResponseMeta {
    pub request_id: String,
    pub timestamp: Timestamp,
}

/// `{data: T, meta}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DataEnvelope<T> {
    pub data: T,
    pub meta: ResponseMeta,
}

/// `meta` of a paginated list: the four integer pagination values beside the
/// request id and timestamp.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ListMeta {
    pub total: u64,
    pub page: u32,
    pub per_page: u32,
    pub pages: u64,
    pub request_id: String,
    pub timestamp: Timestamp,
}

/// `{data: [T], meta}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ListEnvelope<T> {
    pub data: Vec<T>,
    pub meta: ListMeta,
}
