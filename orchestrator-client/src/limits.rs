//! `/concurrency-limits` and `/rate-limits` (admin): flow limits per key.
//! A task names its keys on create (`concurrency_key`, `rate_limit_key`);
//! the claim never holds more than a key's limit at once, nor claims more
//! than a rate key's limit in any window of its period.

use crate::client::{Client, M, page_query};
use crate::error::Result;
use orchestrator_core::api::{
    ConcurrencyLimit, DeletedLimit, Page, PageRequest, RateLimit, SetConcurrencyLimit, SetRateLimit,
};

/// The flow-limit routes.
pub struct Limits<'c> {
    pub(crate) client: &'c Client,
}

impl Client {
    /// Concurrency and rate limits per key (admin scope).
    pub fn limits(&self) -> Limits<'_> {
        Limits { client: self }
    }
}

/// `key` as one path segment: every byte but the unreserved ones escaped.
fn segment(key: &str) -> String {
    key.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl Limits<'_> {
    fn concurrency_path(key: &str) -> String {
        format!("/api/v1/concurrency-limits/{}", segment(key))
    }

    fn rate_path(key: &str) -> String {
        format!("/api/v1/rate-limits/{}", segment(key))
    }

    /// `GET /concurrency-limits`: every key with a limit or a task, by key.
    pub async fn list_concurrency(&self, page: PageRequest) -> Result<Page<ConcurrencyLimit>> {
        self.client
            .page(
                self.client
                    .request(M::GET, "/api/v1/concurrency-limits")
                    .query(&page_query(page)),
            )
            .await
    }

    /// `GET /concurrency-limits/:key`.
    pub async fn get_concurrency(&self, key: &str) -> Result<ConcurrencyLimit> {
        self.client
            .data(self.client.request(M::GET, &Self::concurrency_path(key)))
            .await
    }

    /// `PUT /concurrency-limits/:key`: at most `limit` (1 to 100,000) tasks
    /// with the key held at once.
    pub async fn set_concurrency(&self, key: &str, limit: i64) -> Result<ConcurrencyLimit> {
        self.client
            .data(
                self.client
                    .request(M::PUT, &Self::concurrency_path(key))
                    .json(&SetConcurrencyLimit { limit }),
            )
            .await
    }

    /// `DELETE /concurrency-limits/:key`: back to the default limit of 1.
    pub async fn delete_concurrency(&self, key: &str) -> Result<DeletedLimit> {
        self.client
            .data(self.client.request(M::DELETE, &Self::concurrency_path(key)))
            .await
    }

    /// `GET /rate-limits`: every rate limit, by key.
    pub async fn list_rate(&self, page: PageRequest) -> Result<Page<RateLimit>> {
        self.client
            .page(
                self.client
                    .request(M::GET, "/api/v1/rate-limits")
                    .query(&page_query(page)),
            )
            .await
    }

    /// `GET /rate-limits/:key`.
    pub async fn get_rate(&self, key: &str) -> Result<RateLimit> {
        self.client
            .data(self.client.request(M::GET, &Self::rate_path(key)))
            .await
    }

    /// `PUT /rate-limits/:key`: at most `limit` claims in any window of
    /// `period_seconds`.
    pub async fn set_rate(&self, key: &str, limit: i64, period_seconds: i64) -> Result<RateLimit> {
        self.client
            .data(
                self.client
                    .request(M::PUT, &Self::rate_path(key))
                    .json(&SetRateLimit {
                        limit,
                        period_seconds,
                    }),
            )
            .await
    }

    /// `DELETE /rate-limits/:key`.
    pub async fn delete_rate(&self, key: &str) -> Result<DeletedLimit> {
        self.client
            .data(self.client.request(M::DELETE, &Self::rate_path(key)))
            .await
    }
}
