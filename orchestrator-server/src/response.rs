//! Success responses: the `{data, meta}` envelopes, cookies and headers.
//!
//! Handlers build a [`Reply`] through [`crate::request::Req`] (`req.ok(..)`,
//! `req.created(..)`, `req.page(..)`), which knows the request id the
//! envelope's `meta` carries.

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Response, StatusCode, header};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Empty, Full};
use orchestrator_core::api::{Page, ResponseMeta, Timestamp};
use serde::Serialize;

/// Response body: a full buffer today, a stream for SSE and downloads.
pub type Body = UnsyncBoxBody<Bytes, Box<dyn std::error::Error + Send + Sync>>;

pub(crate) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

pub(crate) fn empty() -> Body {
    Empty::new().map_err(|never| match never {}).boxed_unsync()
}

/// A handler's answer, turned into a response by the pipeline.
pub(crate) struct Reply {
    status: StatusCode,
    headers: Vec<(HeaderName, HeaderValue)>,
    body: Option<Vec<u8>>,
    /// A streamed body (SSE, downloads); wins over `body`.
    stream: Option<Body>,
}

#[derive(Serialize)]
struct DataMetaOut<'a, T, M> {
    data: &'a T,
    meta: MetaWithExtra<'a, M>,
}

#[derive(Serialize)]
struct MetaWithExtra<'a, M> {
    #[serde(flatten)]
    extra: &'a M,
    request_id: &'a str,
    timestamp: Timestamp,
}

#[derive(Serialize)]
struct DataOut<'a, T> {
    data: &'a T,
    meta: ResponseMeta,
}

#[derive(Serialize)]
struct ListMetaOut<'a> {
    total: u64,
    page: u32,
    per_page: u32,
    pages: u64,
    request_id: &'a str,
    timestamp: Timestamp,
}

#[derive(Serialize)]
struct ListOut<'a, T> {
    data: &'a [T],
    meta: ListMetaOut<'a>,
}

impl Reply {
    pub(crate) fn data<T: Serialize>(status: StatusCode, request_id: &str, data: &T) -> Self {
        let out = DataOut {
            data,
            meta: ResponseMeta {
                request_id: request_id.to_owned(),
                timestamp: Timestamp::now(),
            },
        };
        Self::json(status, serde_json::to_vec(&out))
    }

    /// `{data, meta}` where `meta` carries route-specific fields (cursors)
    /// beside `request_id` and `timestamp`.
    pub(crate) fn data_with_meta<T: Serialize, M: Serialize>(
        status: StatusCode,
        request_id: &str,
        data: &T,
        extra: &M,
    ) -> Self {
        let out = DataMetaOut {
            data,
            meta: MetaWithExtra {
                extra,
                request_id,
                timestamp: Timestamp::now(),
            },
        };
        Self::json(status, serde_json::to_vec(&out))
    }

    /// A JSON body exactly as given (the contract's plain error objects, such
    /// as `{"error": "Not found"}`).
    pub(crate) fn plain<T: Serialize>(status: StatusCode, body: &T) -> Self {
        Self::json(status, serde_json::to_vec(body))
    }

    pub(crate) fn page<T: Serialize>(request_id: &str, page: &Page<T>) -> Self {
        let out = ListOut {
            data: &page.items,
            meta: ListMetaOut {
                total: page.total,
                page: page.page,
                per_page: page.per_page,
                pages: page.pages(),
                request_id,
                timestamp: Timestamp::now(),
            },
        };
        Self::json(StatusCode::OK, serde_json::to_vec(&out))
    }

    /// `204 No Content` with an empty body (claim routes with nothing to claim).
    #[allow(dead_code)]
    pub(crate) fn no_content() -> Self {
        Self {
            status: StatusCode::NO_CONTENT,
            headers: Vec::new(),
            body: None,
            stream: None,
        }
    }

    fn json(status: StatusCode, bytes: serde_json::Result<Vec<u8>>) -> Self {
        match bytes {
            Ok(bytes) => Self {
                status,
                headers: vec![(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                )],
                body: Some(bytes),
                stream: None,
            },
            // Our own records always serialize; if one ever does not, say so
            // rather than send half a body.
            Err(e) => {
                tracing::error!(error = %e, "response did not serialize");
                Self {
                    status: StatusCode::INTERNAL_SERVER_ERROR,
                    headers: vec![(
                        header::CONTENT_TYPE,
                        HeaderValue::from_static("application/json"),
                    )],
                    body: Some(
                        br#"{"error":{"code":"INTERNAL_ERROR","message":"internal error"}}"#
                            .to_vec(),
                    ),
                    stream: None,
                }
            }
        }
    }

    /// A body of raw bytes (the dashboard's embedded assets); the caller adds
    /// the content type.
    pub(crate) fn bytes(status: StatusCode, body: &[u8]) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Some(body.to_vec()),
            stream: None,
        }
    }

    /// Adds a header (for `Set-Cookie`, several may be added).
    pub(crate) fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }

    /// A response whose body is `body`, streamed as it is produced (file
    /// downloads), with no JSON envelope.
    pub(crate) fn stream(status: StatusCode, body: Body) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: None,
            stream: Some(body),
        }
    }

    /// A `200` streamed body with its content type (SSE, log export).
    pub(crate) fn typed_stream(content_type: &'static str, body: Body) -> Self {
        Self::stream(StatusCode::OK, body)
            .with_header(header::CONTENT_TYPE, HeaderValue::from_static(content_type))
    }

    pub(crate) fn into_response(self) -> Response<Body> {
        let mut response = Response::new(match (self.stream, self.body) {
            (Some(stream), _) => stream,
            (None, Some(bytes)) => full(bytes),
            (None, None) => empty(),
        });
        *response.status_mut() = self.status;
        for (name, value) in self.headers {
            response.headers_mut().append(name, value);
        }
        response
    }
}
