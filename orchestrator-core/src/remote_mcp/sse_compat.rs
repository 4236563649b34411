//! The older MCP HTTP+SSE transport (protocol 2024-11-05) as an rmcp client
//! [`Transport`]: rmcp ships no client for it.
//!
//! The client opens an SSE stream with `GET`; the server's first event,
//! `endpoint`, names (relative to the stream's URL) where to `POST`
//! JSON-RPC messages; the server's answers arrive on the stream as
//! `message` events. The parameters go on every request: headers on both
//! the `GET` and the `POST`s, query parameters on both URLs.

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use reqwest::{Client, Url};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::future::Future;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// One server-sent event.
#[derive(Debug, Default, PartialEq)]
struct SseEvent {
    event: String,
    data: String,
}

/// Splits a byte stream into events (`event:` and `data:` lines, a blank
/// line ends an event; comments and other fields are ignored).
#[derive(Default)]
struct SseParser {
    pending: String,
}

impl SseParser {
    fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        self.pending
            .push_str(&String::from_utf8_lossy(chunk).replace("\r\n", "\n"));
        let mut out = Vec::new();
        while let Some(end) = self.pending.find("\n\n") {
            let block: String = self.pending.drain(..end + 2).collect();
            let mut event = SseEvent::default();
            let mut data: Vec<&str> = Vec::new();
            for line in block.lines() {
                let (field, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.strip_prefix(' ').unwrap_or(value);
                match field {
                    "event" => event.event = value.to_owned(),
                    "data" => data.push(value),
                    _ => {}
                }
            }
            if !data.is_empty() {
                event.data = data.join("\n");
                out.push(event);
            }
        }
        out
    }
}

/// A connected HTTP+SSE session.
pub(crate) struct SseCompat {
    http: Client,
    headers: HeaderMap,
    post_url: Url,
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    reader: JoinHandle<()>,
}

impl Drop for SseCompat {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// Adds the pairs of `query` that `url` does not carry yet.
fn with_query(mut url: Url, query: &[(String, String)]) -> Url {
    let present: Vec<String> = url.query_pairs().map(|(k, _)| k.into_owned()).collect();
    let missing: Vec<&(String, String)> =
        query.iter().filter(|(k, _)| !present.contains(k)).collect();
    if !missing.is_empty() {
        let mut pairs = url.query_pairs_mut();
        for (key, value) in missing {
            pairs.append_pair(key, value);
        }
    }
    url
}

/// The JSON-RPC messages among `events` (other events are ignored).
fn messages(events: Vec<SseEvent>) -> Vec<RxJsonRpcMessage<RoleClient>> {
    events
        .into_iter()
        .filter(|e| e.event.is_empty() || e.event == "message")
        .filter_map(|e| serde_json::from_str(&e.data).ok())
        .collect()
}

impl SseCompat {
    /// Opens the stream at `url` (which carries the query parameters) and
    /// waits for the `endpoint` event. The error is a reason fit for an
    /// operator (it never holds a parameter value).
    pub(crate) async fn connect(
        http: Client,
        url: Url,
        headers: HeaderMap,
        query: &[(String, String)],
    ) -> Result<Self, String> {
        let mut response = http
            .get(url.clone())
            .headers(headers.clone())
            .header(ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|e| format!("could not open the SSE stream: {}", e.without_url()))?;
        if !response.status().is_success() {
            return Err(format!(
                "the SSE stream answered HTTP {}",
                response.status().as_u16()
            ));
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        if !content_type.starts_with("text/event-stream") {
            return Err(format!(
                "the SSE stream answered `{content_type}`, not text/event-stream"
            ));
        }
        let mut parser = SseParser::default();
        let (post_url, rest) = loop {
            let chunk = response
                .chunk()
                .await
                .map_err(|e| format!("the SSE stream failed: {}", e.without_url()))?
                .ok_or("the SSE stream ended before its `endpoint` event")?;
            let mut events = parser.push(&chunk);
            if let Some(at) = events.iter().position(|e| e.event == "endpoint") {
                let endpoint = events.remove(at);
                let rest: Vec<SseEvent> = events.into_iter().skip(at).collect();
                let target = url
                    .join(endpoint.data.trim())
                    .map_err(|_| "the `endpoint` event holds no URL".to_owned())?;
                if target.origin() != url.origin() {
                    return Err("the `endpoint` event names another origin".into());
                }
                break (with_query(target, query), rest);
            }
        };
        let (sender, incoming) = mpsc::channel(64);
        let reader = tokio::spawn(async move {
            for message in messages(rest) {
                if sender.send(message).await.is_err() {
                    return;
                }
            }
            while let Ok(Some(chunk)) = response.chunk().await {
                for message in messages(parser.push(&chunk)) {
                    if sender.send(message).await.is_err() {
                        return;
                    }
                }
            }
        });
        Ok(Self {
            http,
            headers,
            post_url,
            incoming,
            reader,
        })
    }
}

impl Transport<RoleClient> for SseCompat {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let request = self
            .http
            .post(self.post_url.clone())
            .headers(self.headers.clone())
            .json(&item);
        async move {
            let response = request
                .send()
                .await
                .map_err(|e| std::io::Error::other(e.without_url()))?;
            if !response.status().is_success() {
                return Err(std::io::Error::other(format!(
                    "the message endpoint answered HTTP {}",
                    response.status().as_u16()
                )));
            }
            Ok(())
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.incoming.recv()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.reader.abort();
        std::future::ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks() {
        let mut parser = SseParser::default();
        assert!(parser.push(b"event: endpoint\r\nda").is_empty());
        let events = parser.push(b"ta: /messages?s=1\r\n\r\n: ping\n\ndata: {}\n\n");
        assert_eq!(
            events,
            vec![
                SseEvent {
                    event: "endpoint".into(),
                    data: "/messages?s=1".into()
                },
                SseEvent {
                    event: String::new(),
                    data: "{}".into()
                },
            ]
        );
    }
}
