//! Server-Sent Events over reqwest: a small parser and a stream that
//! reconnects.
//!
//! [`reconnecting`] opens `GET path?query` with `Accept: text/event-stream`
//! and yields each event. When the connection drops (server restart, network,
//! an `event: error` such as `slow_consumer`) it reconnects with backoff
//! (0.25 s doubling to 5 s) and sends `Last-Event-ID` with the id of the last
//! event it yielded, so the server resumes right after it. An HTTP error
//! answer (401, 403, 400, ...) is yielded once and ends the stream.

use crate::client::{Client, M, decode};
use crate::error::{Error, Result};
use bytes::Bytes;
use futures_util::stream::{BoxStream, StreamExt};
use std::collections::VecDeque;
use std::time::Duration;

/// One event as it came off the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The frame's `id:`, if any.
    pub id: Option<String>,
    /// `message` when the frame named none.
    pub event: String,
    /// The frame's `data:` lines, joined by newlines.
    pub data: String,
}

/// Incremental `text/event-stream` parser.
#[derive(Debug, Default)]
pub(crate) struct Parser {
    buf: Vec<u8>,
    id: Option<String>,
    event: Option<String>,
    data: Vec<String>,
}

impl Parser {
    /// Feeds bytes; returns the events they complete.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        self.buf.extend_from_slice(chunk);
        let mut out = Vec::new();
        while let Some(pos) = self.buf.iter().position(|b| *b == b'\n') {
            let mut line: Vec<u8> = self.buf.drain(..=pos).collect();
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            let line = String::from_utf8_lossy(&line).into_owned();
            if line.is_empty() {
                if !self.data.is_empty() || self.event.is_some() {
                    out.push(SseEvent {
                        id: self.id.take(),
                        event: self.event.take().unwrap_or_else(|| "message".into()),
                        data: std::mem::take(&mut self.data).join("\n"),
                    });
                }
                self.id = None;
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f.to_owned(), v.strip_prefix(' ').unwrap_or(v).to_owned()),
                None => (line.clone(), String::new()),
            };
            match field.as_str() {
                "id" => self.id = Some(value),
                "event" => self.event = Some(value),
                "data" => self.data.push(value),
                _ => {}
            }
        }
        out
    }
}

struct State {
    client: Client,
    path: String,
    query: Vec<(String, String)>,
    last_id: Option<String>,
    body: Option<BoxStream<'static, reqwest::Result<Bytes>>>,
    parser: Parser,
    pending: VecDeque<SseEvent>,
    backoff: Duration,
    done: bool,
    /// End (rather than reconnect) when the server closes the body cleanly:
    /// for streams the server finishes on purpose (an A2A task's).
    ends_on_close: bool,
}

const FIRST_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// A stream of the events of `path`, resuming after `last_id` (when given)
/// and reconnecting as described in the module docs.
pub(crate) fn reconnecting(
    client: Client,
    path: String,
    query: Vec<(String, String)>,
    last_id: Option<String>,
) -> BoxStream<'static, Result<SseEvent>> {
    open(client, path, query, last_id, false)
}

/// Like [`reconnecting`], but a body the server closes cleanly ends the
/// stream; only a broken transfer reconnects.
pub(crate) fn until_closed(
    client: Client,
    path: String,
    query: Vec<(String, String)>,
    last_id: Option<String>,
) -> BoxStream<'static, Result<SseEvent>> {
    open(client, path, query, last_id, true)
}

fn open(
    client: Client,
    path: String,
    query: Vec<(String, String)>,
    last_id: Option<String>,
    ends_on_close: bool,
) -> BoxStream<'static, Result<SseEvent>> {
    let state = State {
        client,
        path,
        query,
        last_id,
        body: None,
        parser: Parser::default(),
        pending: VecDeque::new(),
        backoff: FIRST_BACKOFF,
        done: false,
        ends_on_close,
    };
    futures_util::stream::unfold(state, |mut st| async move {
        loop {
            if st.done {
                return None;
            }
            if let Some(event) = st.pending.pop_front() {
                if event.event == "error" {
                    // The server gave up on us (e.g. slow_consumer): reconnect.
                    st.body = None;
                    st.pending.clear();
                    continue;
                }
                if let Some(id) = &event.id {
                    st.last_id = Some(id.clone());
                }
                return Some((Ok(event), st));
            }
            let Some(body) = st.body.as_mut() else {
                let mut request = st
                    .client
                    .request(M::GET, &st.path)
                    .query(&st.query)
                    .header("accept", "text/event-stream");
                if let Some(id) = &st.last_id {
                    request = request.header("last-event-id", id.as_str());
                }
                match st.client.send(request).await {
                    Ok(response) if response.status().is_success() => {
                        st.parser = Parser::default();
                        st.body = Some(response.bytes_stream().boxed());
                    }
                    Ok(response) => {
                        st.done = true;
                        let error = decode::<serde_json::Value>(response).await.err().unwrap_or(
                            Error::Decode {
                                status: 0,
                                message: "unexpected answer".into(),
                            },
                        );
                        return Some((Err(error), st));
                    }
                    Err(_) => {
                        tokio::time::sleep(st.backoff).await;
                        st.backoff = (st.backoff * 2).min(MAX_BACKOFF);
                    }
                }
                continue;
            };
            match body.next().await {
                Some(Ok(bytes)) => {
                    st.backoff = FIRST_BACKOFF;
                    let events = st.parser.push(&bytes);
                    st.pending.extend(events);
                }
                // Every complete frame has been parsed already; a partial
                // one at a clean close is dropped.
                None if st.ends_on_close => st.done = true,
                Some(Err(_)) | None => {
                    st.body = None;
                    tokio::time::sleep(st.backoff).await;
                    st.backoff = (st.backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_frames_split_anywhere() {
        let text = b"id: 7\nevent: log\ndata: {\"a\":1}\n\n: comment\n\nevent: heartbeat\r\ndata: {}\r\n\r\n";
        let mut parser = Parser::default();
        let mut events = Vec::new();
        for chunk in text.chunks(3) {
            events.extend(parser.push(chunk));
        }
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].id.as_deref(), Some("7"));
        assert_eq!(events[0].event, "log");
        assert_eq!(events[0].data, "{\"a\":1}");
        assert_eq!(events[1].event, "heartbeat");
        assert_eq!(events[1].id, None);
    }
}
