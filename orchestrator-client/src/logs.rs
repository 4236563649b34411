//! `/logs`: ingest, query, get, stream, export, stats and helpers.

use crate::client::{Client, M, decode};
use crate::error::{Error, Result};
use crate::paging;
use crate::sse::{self, SseEvent};
use bytes::Bytes;
use futures_util::stream::{BoxStream, StreamExt};
use orchestrator_core::api::{
    ExportFormat, IngestLogs, Ingested, LogActor, LogFilter, LogGroupBy, LogPage, LogQuery, LogRow,
    LogStats, NewLogEntry, SortOrder, Timestamp,
};
use serde::Deserialize;
use uuid::Uuid;

/// The `Logs` routes: get one from [`Client::logs`](crate::Client::logs).
pub struct Logs<'c> {
    pub(crate) client: &'c Client,
}

/// One item of the log stream.
#[derive(Debug, Clone, PartialEq)]
pub enum LogStreamItem {
    /// A row (`event: log`).
    Log(Box<LogRow>),
    /// The server's idle heartbeat (`event: heartbeat`, `{ts}`).
    Heartbeat(Timestamp),
}

#[derive(Deserialize)]
struct CursorEnvelope {
    data: Vec<LogRow>,
    meta: CursorMeta,
}

#[derive(Deserialize)]
struct CursorMeta {
    next_cursor: Option<String>,
}

#[derive(Deserialize)]
struct Heartbeat {
    ts: Timestamp,
}

/// Where a log stream starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum StreamFrom {
    /// New rows only (or, with `since` in the filter, rows from then on).
    #[default]
    Now,
    /// After the row with this id (sent as `Last-Event-ID`).
    AfterId(String),
    /// After a `GET /logs` cursor position.
    Cursor(String),
}

/// Filters as query pairs (reqwest's query encoder does not take
/// flattened structs with non-string values).
pub(crate) fn pairs<T: serde::Serialize>(value: &T) -> Vec<(String, String)> {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::Object(map)) => map
            .into_iter()
            .filter_map(|(k, v)| match v {
                serde_json::Value::Null => None,
                serde_json::Value::String(s) => Some((k, s)),
                other => Some((k, other.to_string())),
            })
            .collect(),
        _ => Vec::new(),
    }
}

impl Logs<'_> {
    /// `POST /logs/ingest`: 1 to 1,000 entries, all or nothing.
    pub async fn ingest(&self, entries: Vec<NewLogEntry>) -> Result<Ingested> {
        self.client
            .data(
                self.client
                    .request(M::POST, "/api/v1/logs/ingest")
                    .json(&IngestLogs { entries }),
            )
            .await
    }

    /// `GET /logs`: one page, newest first; follow `next_cursor` for more.
    pub async fn query(&self, query: &LogQuery) -> Result<LogPage> {
        let builder = self
            .client
            .request(M::GET, "/api/v1/logs")
            .query(&pairs(query));
        let response = self.client.send(builder).await?;
        let envelope: CursorEnvelope = decode(response).await?;
        Ok(LogPage {
            items: envelope.data,
            next_cursor: envelope.meta.next_cursor,
        })
    }

    /// `GET /logs/:id`; `None` when there is no such row.
    pub async fn get(&self, id: &str) -> Result<Option<LogRow>> {
        let builder = self.client.request(M::GET, &format!("/api/v1/logs/{id}"));
        let response = self.client.send(builder).await?;
        if response.status() == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        Ok(Some(
            decode::<orchestrator_core::api::DataEnvelope<LogRow>>(response)
                .await?
                .data,
        ))
    }

    /// `GET /logs/stats`.
    pub async fn stats(&self, group_by: LogGroupBy, filter: &LogFilter) -> Result<LogStats> {
        let mut query = pairs(filter);
        query.push(("group_by".into(), group_by.as_str().into()));
        self.client
            .data(
                self.client
                    .request(M::GET, "/api/v1/logs/stats")
                    .query(&query),
            )
            .await
    }

    /// `GET /logs/operations`.
    pub async fn operations(&self) -> Result<Vec<String>> {
        self.client
            .data(self.client.request(M::GET, "/api/v1/logs/operations"))
            .await
    }

    /// `GET /logs/roles`.
    pub async fn roles(&self) -> Result<Vec<String>> {
        self.client
            .data(self.client.request(M::GET, "/api/v1/logs/roles"))
            .await
    }

    /// `GET /logs/actors`.
    pub async fn actors(&self) -> Result<Vec<LogActor>> {
        self.client
            .data(self.client.request(M::GET, "/api/v1/logs/actors"))
            .await
    }

    /// `GET /logs/workflows`.
    pub async fn workflows(&self) -> Result<Vec<Uuid>> {
        self.client
            .data(self.client.request(M::GET, "/api/v1/logs/workflows"))
            .await
    }

    /// `GET /logs/export`: the body as a stream of chunks (write them out as
    /// they come; memory stays flat).
    pub async fn export(
        &self,
        filter: &LogFilter,
        format: ExportFormat,
        order: SortOrder,
    ) -> Result<BoxStream<'static, Result<Bytes>>> {
        let mut query = pairs(filter);
        query.push(("format".into(), format.as_str().into()));
        query.push(("order".into(), order.as_str().into()));
        let builder = self
            .client
            .request(M::GET, "/api/v1/logs/export")
            .query(&query);
        let response = self.client.send(builder).await?;
        if !response.status().is_success() {
            return Err(decode::<serde_json::Value>(response).await.err().unwrap_or(
                Error::Decode {
                    status: 0,
                    message: "unexpected answer".into(),
                },
            ));
        }
        Ok(response
            .bytes_stream()
            .map(|chunk| chunk.map_err(Error::from))
            .boxed())
    }

    /// `GET /logs/stream`: rows (and heartbeats) as they are written, as an
    /// async iterator that reconnects and resumes after the last row it
    /// yielded.
    pub fn stream(
        &self,
        filter: &LogFilter,
        from: StreamFrom,
    ) -> BoxStream<'static, Result<LogStreamItem>> {
        let mut query = pairs(filter);
        let last_id = match from {
            StreamFrom::Now => None,
            StreamFrom::AfterId(id) => Some(id),
            StreamFrom::Cursor(cursor) => {
                query.push(("cursor".into(), cursor));
                None
            }
        };
        sse::reconnecting(
            self.client.clone(),
            "/api/v1/logs/stream".into(),
            query,
            last_id,
        )
        .filter_map(|item| async move {
            match item {
                Err(e) => Some(Err(e)),
                Ok(event) => parse_log_event(event).transpose(),
            }
        })
        .boxed()
    }
}

fn parse_log_event(event: SseEvent) -> Result<Option<LogStreamItem>> {
    let bad = |e: serde_json::Error| Error::Decode {
        status: 200,
        message: format!("bad {} frame: {e}", event.event),
    };
    match event.event.as_str() {
        "log" => Ok(Some(LogStreamItem::Log(Box::new(
            serde_json::from_str(&event.data).map_err(bad)?,
        )))),
        "heartbeat" => Ok(Some(LogStreamItem::Heartbeat(
            serde_json::from_str::<Heartbeat>(&event.data)
                .map_err(bad)?
                .ts,
        ))),
        _ => Ok(None),
    }
}

impl Logs<'_> {
    /// Every row matching `query`, newest first, read page after page by
    /// cursor as one stream (`query.cursor` is where it starts).
    pub fn list_all(&self, query: &LogQuery) -> BoxStream<'static, Result<LogRow>> {
        let client = self.client.clone();
        let query = query.clone();
        paging::cursors(move |cursor: Option<String>| {
            let client = client.clone();
            let mut query = query.clone();
            if cursor.is_some() {
                query.cursor = cursor;
            }
            async move {
                let page = client.logs().query(&query).await?;
                Ok((page.items, page.next_cursor))
            }
        })
    }
}
