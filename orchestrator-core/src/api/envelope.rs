//! The success envelopes: `{data, meta}` for one resource, `{data: [...], meta}`
//! for a page. The server fills `request_id` and `timestamp` on every response.

use super::Timestamp;
use serde::{Deserialize, Serialize};

/// `meta` of a single-resource response.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ResponseMeta {
    /// The caller's `X-Request-Id`, or one the server made up.
    pub request_id: String,
    /// When the server answered (RFC 3339, milliseconds, `Z`).
    pub timestamp: Timestamp,
}

/// `{data: T, meta}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DataEnvelope<T> {
    /// The resource.
    pub data: T,
    /// The request id and time of the answer.
    pub meta: ResponseMeta,
}

/// `meta` of a paginated list: the four integer pagination values beside the
/// request id and timestamp.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ListMeta {
    /// How many items match the list's filters, over all pages.
    pub total: u64,
    /// The page answered, from 1.
    pub page: u32,
    /// Items per page (default 20, at most 100).
    pub per_page: u32,
    /// How many pages there are at this `per_page`.
    pub pages: u64,
    /// The caller's `X-Request-Id`, or one the server made up.
    pub request_id: String,
    /// When the server answered (RFC 3339, milliseconds, `Z`).
    pub timestamp: Timestamp,
}

/// `{data: [T], meta}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ListEnvelope<T> {
    /// The items of the page.
    pub data: Vec<T>,
    /// The paging counts, request id and time.
    pub meta: ListMeta,
}
