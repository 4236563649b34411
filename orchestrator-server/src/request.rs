//! What a handler receives: the parsed request plus the authenticated caller,
//! with helpers that turn bad input into the right error.

use crate::error::ApiError;
use crate::response::Reply;
use crate::schema;
use bytes::Bytes;
use http::request::Parts;
use http::{HeaderMap, StatusCode};
use orchestrator_core::api::{Page, PageRequest};
use orchestrator_core::{Caller, Error};
use serde::Serialize;
use serde::de::DeserializeOwned;
use uuid::Uuid;

pub(crate) struct Req {
    pub parts: Parts,
    pub params: Vec<(String, String)>,
    pub body: Bytes,
    pub caller: Option<Caller>,
    pub request_id: String,
}

impl Req {
    /// A copy of this request to run again (a write that wrote nothing):
    /// method, URI, headers and body, without the extensions (an upgrade
    /// is never run again).
    pub fn replay(&self) -> Req {
        let mut parts = http::Request::new(()).into_parts().0;
        parts.method = self.parts.method.clone();
        parts.uri = self.parts.uri.clone();
        parts.version = self.parts.version;
        parts.headers = self.parts.headers.clone();
        Req {
            parts,
            params: self.params.clone(),
            body: self.body.clone(),
            caller: self.caller.clone(),
            request_id: self.request_id.clone(),
        }
    }

    /// The authenticated caller. Routes with a scope always have one.
    pub fn caller(&self) -> Result<&Caller, ApiError> {
        self.caller
            .as_ref()
            .ok_or_else(|| Error::unauthorized("authentication required").into())
    }

    pub fn headers(&self) -> &HeaderMap {
        &self.parts.headers
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.parts.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body parsed strictly as `T`; 422 with field errors otherwise.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, ApiError> {
        Ok(schema::parse(&self.body)?)
    }

    /// A path parameter that names a resource by UUID. Anything that is not a
    /// UUID names no resource: 404.
    pub fn uuid(&self, name: &str) -> Result<Uuid, ApiError> {
        self.param(name)
            .and_then(|raw| Uuid::parse_str(raw).ok())
            .ok_or_else(|| Error::not_found("resource").into())
    }

    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// A path parameter with its percent-escapes decoded (for free-text
    /// segments such as a memory key); `None` when absent or not UTF-8.
    pub fn param_decoded(&self, name: &str) -> Option<String> {
        let raw = self.param(name)?.as_bytes();
        let mut out = Vec::with_capacity(raw.len());
        let mut i = 0;
        while i < raw.len() {
            let hex = |b: u8| (b as char).to_digit(16);
            if raw[i] == b'%'
                && i + 2 < raw.len()
                && let (Some(h), Some(l)) = (hex(raw[i + 1]), hex(raw[i + 2]))
            {
                out.push((h * 16 + l) as u8);
                i += 3;
            } else {
                out.push(raw[i]);
                i += 1;
            }
        }
        String::from_utf8(out).ok()
    }

    /// The query string as `T`; 400 `VALIDATION_ERROR` when it does not fit.
    /// (For the filter structs of list routes.)
    #[allow(dead_code)]
    pub fn query<T: DeserializeOwned>(&self) -> Result<T, ApiError> {
        let raw = self.parts.uri.query().unwrap_or("");
        serde_urlencoded::from_str(raw)
            .map_err(|e| Error::validation(format!("invalid query string: {e}")).into())
    }

    /// One raw query value.
    pub fn query_value(&self, name: &str) -> Option<String> {
        let raw = self.parts.uri.query()?;
        form_pairs(raw)
            .into_iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value)
    }

    /// `page` and `per_page` from the query string.
    pub fn page_request(&self) -> Result<PageRequest, ApiError> {
        PageRequest::parse(
            self.query_value("page").as_deref(),
            self.query_value("per_page").as_deref(),
        )
        .map_err(|e| Error::invalid_field(e.field, e.message).into())
    }

    /// Whether the client reached us over https (directly or via a proxy that
    /// says so).
    pub fn is_https(&self) -> bool {
        self.parts.uri.scheme_str() == Some("https")
            || self
                .header("x-forwarded-proto")
                .is_some_and(|p| p.eq_ignore_ascii_case("https"))
    }

    pub fn ok<T: Serialize>(&self, data: &T) -> Reply {
        Reply::data(StatusCode::OK, &self.request_id, data)
    }

    /// `{data, meta}` with extra `meta` fields beside `request_id` and `timestamp`.
    pub fn ok_with_meta<T: Serialize, M: Serialize>(&self, data: &T, meta: &M) -> Reply {
        Reply::data_with_meta(StatusCode::OK, &self.request_id, data, meta)
    }

    pub fn created<T: Serialize>(&self, data: &T) -> Reply {
        Reply::data(StatusCode::CREATED, &self.request_id, data)
    }

    /// `202 Accepted`: work the server does after answering (a backfill).
    pub fn accepted<T: Serialize>(&self, data: &T) -> Reply {
        Reply::data(StatusCode::ACCEPTED, &self.request_id, data)
    }

    /// A create with a dedupe key (run control §5): `201` for a new record,
    /// `200` for the live one the key found; `meta.deduplicated` says which.
    pub fn created_or_found<T: Serialize>(&self, data: &T, deduplicated: bool) -> Reply {
        let status = if deduplicated {
            StatusCode::OK
        } else {
            StatusCode::CREATED
        };
        let meta = serde_json::json!({ "deduplicated": deduplicated });
        Reply::data_with_meta(status, &self.request_id, data, &meta)
    }

    pub fn page<T: Serialize>(&self, page: &Page<T>) -> Reply {
        Reply::page(&self.request_id, page)
    }
}

/// Refuses a URI whose path or query carries the NUL character (`%00`),
/// which PostgreSQL cannot store or compare: 400 naming the query parameter
/// (or `path`). One check for every route, on both backends alike.
pub(crate) fn check_uri(uri: &http::Uri) -> Result<(), Error> {
    if uri.path().contains("%00") {
        return Err(Error::invalid_field("path", schema::NUL_MESSAGE));
    }
    let Some(raw) = uri.query().filter(|q| q.contains("%00")) else {
        return Ok(());
    };
    match form_pairs(raw)
        .into_iter()
        .find(|(key, value)| key.contains('\0') || value.contains('\0'))
    {
        Some((key, _)) => Err(Error::invalid_field(
            &key.replace('\0', "\\u0000"),
            schema::NUL_MESSAGE,
        )),
        None => Ok(()),
    }
}

fn form_pairs(raw: &str) -> Vec<(String, String)> {
    serde_urlencoded::from_str::<Vec<(String, String)>>(raw).unwrap_or_default()
}
