//! Sending a request: the credential or the session's access token (with
//! one refresh after a `401`), retries for requests that are safe to repeat,
//! and the `{data, meta}` envelopes.

use super::{Client, request_id::CarriesRequestId};
use crate::decode::decode;
use crate::error::{Error, Result};
use crate::session::Session;
use orchestrator_core::api::{DataEnvelope, ListEnvelope, Page};
use reqwest::header::AUTHORIZATION;
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde::de::DeserializeOwned;
use std::time::Duration;
use uuid::Uuid;

impl Client {
    /// A request to `path` (which starts with `/`) with the credential set.
    pub(crate) fn request(&self, method: Method, path: &str) -> RequestBuilder {
        let mut builder = self.http.request(method, format!("{}{}", self.base, path));
        if let Some(timeout) = self.request_timeout {
            builder = builder.timeout(timeout);
        }
        match &self.credential {
            Some(credential) => builder.bearer_auth(credential),
            None => builder,
        }
    }

    /// A request with an explicit bearer instead of the client's credential.
    pub(crate) fn request_with_bearer(
        &self,
        method: Method,
        path: &str,
        bearer: &str,
    ) -> RequestBuilder {
        let builder = self
            .http
            .request(method, format!("{}{}", self.base, path))
            .bearer_auth(bearer);
        match self.request_timeout {
            Some(timeout) => builder.timeout(timeout),
            None => builder,
        }
    }

    /// `builder.json(request)`, with a fresh `request_id` when the client
    /// generates them and the request has none.
    pub(crate) fn json<T: CarriesRequestId>(
        &self,
        builder: RequestBuilder,
        request: &T,
    ) -> RequestBuilder {
        if self.request_ids && request.request_id().is_none() {
            let mut request = request.clone();
            request.set_request_id(Uuid::new_v4().to_string());
            builder.json(&request)
        } else {
            builder.json(request)
        }
    }

    /// Sends `builder`, retrying as the policy says when the request is safe
    /// to repeat (a read, or a write with a `request_id`). With a refresh
    /// session, a request without its own `Authorization` gets the
    /// session's access token, and one `401` refreshes it and sends again.
    pub(crate) async fn send(&self, builder: RequestBuilder) -> Result<Response> {
        let mut request = builder.build()?;
        let Some(session) = self
            .session
            .as_ref()
            .filter(|_| !request.headers().contains_key(AUTHORIZATION))
        else {
            return self.execute(request).await;
        };
        let token = session.token(|r| self.exchange_refresh(r)).await?;
        set_bearer(&mut request, &token)?;
        let again = request.try_clone();
        let response = self.execute(request).await?;
        if response.status() != StatusCode::UNAUTHORIZED {
            return Ok(response);
        }
        let Some(mut again) = again else {
            return Ok(response);
        };
        let token = session
            .refresh(|r| self.exchange_refresh(r), Some(&token))
            .await?;
        set_bearer(&mut again, &token)?;
        self.execute(again).await
    }

    /// `POST /auth/refresh` with `refresh_token`, outside the session logic
    /// (which calls it).
    pub(crate) async fn exchange_refresh(&self, refresh_token: String) -> Result<Session> {
        let request = self
            .request_with_bearer(Method::POST, "/api/v1/auth/refresh", &refresh_token)
            .build()?;
        crate::session::refreshed_session(self.execute(request).await?).await
    }

    /// Sends `request`, retrying as the policy says.
    async fn execute(&self, request: reqwest::Request) -> Result<Response> {
        if self.retry.max_attempts <= 1 || !repeatable(&request) {
            return Ok(self.http.execute(request).await?);
        }
        let mut attempt = 1;
        loop {
            let Some(this) = request.try_clone() else {
                return Ok(self.http.execute(request).await?);
            };
            let outcome = self.http.execute(this).await;
            let wait = match &outcome {
                Ok(response)
                    if matches!(
                        response.status(),
                        StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE
                    ) =>
                {
                    let backoff = self.retry.backoff(attempt);
                    Some(
                        retry_after(response)
                            .map_or(backoff, |after| after.max(backoff))
                            .min(self.retry.max_delay),
                    )
                }
                Err(e) if e.is_connect() => Some(self.retry.backoff(attempt)),
                _ => None,
            };
            match wait {
                Some(wait) if attempt < self.retry.max_attempts => {
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                _ => return Ok(outcome?),
            }
        }
    }

    /// Sends and decodes `{data: T}`.
    pub(crate) async fn data<T: DeserializeOwned>(&self, request: RequestBuilder) -> Result<T> {
        let response = self.send(request).await?;
        Ok(decode::<DataEnvelope<T>>(response).await?.data)
    }

    /// Sends and decodes `{data: T}`, or `None` on 204.
    #[allow(dead_code)]
    pub(crate) async fn data_or_none<T: DeserializeOwned>(
        &self,
        request: RequestBuilder,
    ) -> Result<Option<T>> {
        let response = self.send(request).await?;
        if response.status() == StatusCode::NO_CONTENT {
            return Ok(None);
        }
        Ok(Some(decode::<DataEnvelope<T>>(response).await?.data))
    }

    /// Sends and decodes a page `{data: [T], meta}`.
    pub(crate) async fn page<T: DeserializeOwned>(
        &self,
        request: RequestBuilder,
    ) -> Result<Page<T>> {
        let response = self.send(request).await?;
        let list = decode::<ListEnvelope<T>>(response).await?;
        Ok(Page {
            items: list.data,
            total: list.meta.total,
            page: list.meta.page,
            per_page: list.meta.per_page,
        })
    }
}

/// Sets `Authorization: Bearer token` on a built request.
fn set_bearer(request: &mut reqwest::Request, token: &str) -> Result<()> {
    let value =
        reqwest::header::HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
            Error::Decode {
                status: 200,
                message: "the access token is not a valid header value".into(),
            }
        })?;
    request.headers_mut().insert(AUTHORIZATION, value);
    Ok(())
}

/// Whether `request` may be sent again: a read, or a body with a
/// `request_id` string.
fn repeatable(request: &reqwest::Request) -> bool {
    if matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    ) {
        return true;
    }
    request
        .body()
        .and_then(reqwest::Body::as_bytes)
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(bytes).ok())
        .is_some_and(|body| {
            body.get("request_id")
                .is_some_and(serde_json::Value::is_string)
        })
}

/// `Retry-After` in seconds.
fn retry_after(response: &Response) -> Option<Duration> {
    let secs: u64 = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_secs(secs))
}
