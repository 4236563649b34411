//! File downloads: raw bytes streamed chunk by chunk from the store, with
//! `Content-Type`, `Content-Length`, `Content-Disposition` and an `ETag`
//! (the quoted SHA-256 of the bytes). `If-None-Match` with that tag answers
//! `304 Not Modified` without a body.

use crate::request::Req;
use crate::response::{Body, Reply, empty};
use bytes::Bytes;
use futures_util::stream;
use http::{HeaderValue, StatusCode, header};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use orchestrator_core::files::Download;

/// `attachment; filename="..."; filename*=UTF-8''...` for any file name.
fn disposition(file_name: &str) -> String {
    let ascii: String = file_name
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut encoded = String::new();
    for byte in file_name.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    format!("attachment; filename=\"{ascii}\"; filename*=UTF-8''{encoded}")
}

pub(crate) fn reply(req: &Req, download: Download) -> Reply {
    let etag = format!("\"{}\"", download.checksum);
    let not_modified = req
        .header("if-none-match")
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let base = if not_modified {
        Reply::stream(StatusCode::NOT_MODIFIED, empty())
    } else {
        let chunks = stream::unfold(download.content, |mut content| async move {
            match content.next_chunk().await {
                Ok(Some(chunk)) => Some((Ok(Frame::data(Bytes::from(chunk))), content)),
                Ok(None) => None,
                Err(e) => {
                    tracing::error!(error = %e, "download failed midway");
                    Some((
                        Err(Box::new(e) as Box<dyn std::error::Error + Send + Sync>),
                        content,
                    ))
                }
            }
        });
        let body: Body = StreamBody::new(chunks).boxed_unsync();
        Reply::stream(StatusCode::OK, body).with_header(
            header::CONTENT_LENGTH,
            HeaderValue::from(download.size_bytes.max(0) as u64),
        )
    };
    let content_type = HeaderValue::from_str(&download.content_type)
        .unwrap_or_else(|_| HeaderValue::from_static("application/octet-stream"));
    let mut reply = base
        .with_header(
            header::ETAG,
            HeaderValue::from_str(&etag).expect("hex etag"),
        )
        .with_header(
            header::CACHE_CONTROL,
            HeaderValue::from_static("private, no-cache"),
        )
        .with_header(
            header::HeaderName::from_static("x-content-type-options"),
            HeaderValue::from_static("nosniff"),
        );
    if !not_modified {
        reply = reply.with_header(header::CONTENT_TYPE, content_type);
        if let Ok(value) = HeaderValue::from_str(&disposition(&download.file_name)) {
            reply = reply.with_header(header::CONTENT_DISPOSITION, value);
        }
    }
    reply
}
