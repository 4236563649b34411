//! A client built from a refresh session keeps its access token fresh.
//!
//! Access tokens are short-lived (an hour by default) while a refresh
//! session lasts days, so a long-running program built from a session would
//! otherwise start failing with `401` an hour in. Before each request the
//! client checks the token's expiry and refreshes it when it is near (see
//! [`ClientBuilder::refresh_skew`](crate::ClientBuilder::refresh_skew)); a
//! request that still meets `401` (the clocks disagree, or the token was
//! refused for another reason) refreshes once and is sent once more.
//!
//! The server rotates the refresh token on every refresh and treats a
//! rotated token used again as theft (it revokes the whole session), so two
//! concurrent refreshes from one client would end the session. All the
//! clones of a client therefore share one [`SessionAuth`] whose refresh is
//! single-flight: the first caller refreshes under a lock, the others wait
//! for it and take the token it got.

use crate::decode::decode;
use crate::error::{Error, Result};
use orchestrator_core::api::{DataEnvelope, RefreshResponse, Timestamp, TokenResponse};
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Called with each new session a refresh brings, e.g. to save the rotated
/// refresh token (the old one no longer works).
pub(crate) type RefreshHook = Arc<dyn Fn(&Session) + Send + Sync>;

/// Reads the session's tokens as saved elsewhere, for sessions that several
/// processes share (see [`ClientBuilder::reload_session`](crate::ClientBuilder::reload_session)).
pub(crate) type ReloadHook = Arc<dyn Fn() -> Option<SessionTokens> + Send + Sync>;

/// A session's tokens as a program saved them (after an
/// [`on_refresh`](crate::ClientBuilder::on_refresh)), handed back by a
/// [`reload_session`](crate::ClientBuilder::reload_session) hook.
#[derive(Clone)]
pub struct SessionTokens {
    /// The refresh token saved last.
    pub refresh_token: String,
    /// The access token saved with it, if any.
    pub access_token: Option<String>,
    /// When that access token expires.
    pub expires_at: Option<Timestamp>,
}

impl std::fmt::Debug for SessionTokens {
    /// Never prints a token.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionTokens")
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

/// What a token exchange or refresh hands a non-browser client: the access
/// token and, read from the `Set-Cookie` headers, the refresh and CSRF tokens.
#[derive(Debug, Clone)]
pub struct Session {
    /// The access token (bearer).
    pub token: String,
    /// When the access token expires.
    pub expires_at: orchestrator_core::api::Timestamp,
    /// When the refresh token expires.
    pub refresh_expires_at: orchestrator_core::api::Timestamp,
    /// The refresh token (from the `Set-Cookie` header).
    pub refresh_token: Option<String>,
    /// The CSRF token (from the `Set-Cookie` header).
    pub csrf_token: Option<String>,
    /// The scope and tenant (present on the exchange, not on a refresh).
    pub exchange: Option<TokenResponse>,
}

/// The tokens of a session and what keeps them fresh; shared by the clones
/// of a client.
pub(crate) struct SessionAuth {
    tokens: Mutex<Tokens>,
    /// Held while refreshing: the single flight.
    refresh_lock: tokio::sync::Mutex<()>,
    skew: Duration,
    on_refresh: Option<RefreshHook>,
    reload: Option<ReloadHook>,
}

#[derive(Clone)]
struct Tokens {
    /// `None` when built from a refresh token alone: the first request
    /// refreshes.
    access: Option<String>,
    /// When to refresh before sending: the expiry less the skew (at most
    /// half the token's lifetime, so a short-lived token is not refreshed on
    /// every request).
    refresh_at: Option<Instant>,
    refresh: String,
}

impl std::fmt::Debug for SessionAuth {
    /// Never prints a token.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionAuth")
            .field("skew", &self.skew)
            .finish_non_exhaustive()
    }
}

impl SessionAuth {
    /// A session from a refresh token and, when known, a current access
    /// token with its expiry.
    pub(crate) fn new(
        refresh: String,
        access: Option<(String, Timestamp)>,
        skew: Duration,
        on_refresh: Option<RefreshHook>,
        reload: Option<ReloadHook>,
    ) -> Self {
        let (access, refresh_at) = match access {
            Some((token, expires_at)) => (Some(token), Some(refresh_at(expires_at, skew))),
            None => (None, None),
        };
        Self {
            tokens: Mutex::new(Tokens {
                access,
                refresh_at,
                refresh,
            }),
            refresh_lock: tokio::sync::Mutex::new(()),
            skew,
            on_refresh,
            reload,
        }
    }

    fn tokens(&self) -> Tokens {
        self.tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The access token to send: the current one, or a fresh one when it is
    /// missing or near its expiry.
    /// `exchange` trades a refresh token for a new session (the client's
    /// `POST /auth/refresh`); it is called at most once.
    pub(crate) async fn token<F, Fut>(&self, exchange: F) -> Result<String>
    where
        F: FnOnce(String) -> Fut,
        Fut: Future<Output = Result<Session>>,
    {
        let tokens = self.tokens();
        match (&tokens.access, tokens.refresh_at) {
            (Some(access), Some(at)) if Instant::now() < at => Ok(access.clone()),
            _ => self.refresh(exchange, tokens.access.as_deref()).await,
        }
    }

    /// A new access token after `stale` failed or aged: refreshes unless
    /// another caller already replaced `stale` while this one waited.
    pub(crate) async fn refresh<F, Fut>(&self, exchange: F, stale: Option<&str>) -> Result<String>
    where
        F: FnOnce(String) -> Fut,
        Fut: Future<Output = Result<Session>>,
    {
        let _flight = self.refresh_lock.lock().await;
        let mut tokens = self.tokens();
        if let Some(access) = &tokens.access
            && Some(access.as_str()) != stale
        {
            return Ok(access.clone());
        }
        if let Some(saved) = self.reload.as_ref().and_then(|reload| reload())
            && saved.refresh_token != tokens.refresh
        {
            // Another process refreshed and saved: our refresh token is
            // spent (using it would end the session); take theirs, and
            // their access token while it is good.
            let mut shared = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
            shared.refresh = saved.refresh_token;
            if let (Some(access), Some(expires_at)) = (saved.access_token, saved.expires_at)
                && Some(access.as_str()) != stale
            {
                let at = refresh_at(expires_at, self.skew);
                shared.access = Some(access.clone());
                shared.refresh_at = Some(at);
                if Instant::now() < at {
                    return Ok(access);
                }
            }
            tokens = shared.clone();
        }
        let session = exchange(tokens.refresh.clone()).await?;
        let Some(rotated) = session.refresh_token.clone() else {
            return Err(Error::Decode {
                status: 200,
                message: "the refresh answer carried no new refresh token".into(),
            });
        };
        {
            let mut tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
            tokens.access = Some(session.token.clone());
            tokens.refresh_at = Some(refresh_at(session.expires_at, self.skew));
            tokens.refresh = rotated;
        }
        if let Some(hook) = &self.on_refresh {
            hook(&session);
        }
        Ok(session.token)
    }

    /// The current refresh token (what to save to resume the session).
    pub(crate) fn refresh_token(&self) -> String {
        self.tokens().refresh
    }

    /// The current access token, if one was issued yet.
    pub(crate) fn access_token(&self) -> Option<String> {
        self.tokens().access
    }
}

/// When a token expiring at `expires_at` should be refreshed: `skew` before,
/// or halfway through what is left of its life when that is sooner. The
/// expiry is the server's clock; the answer is this process's monotonic one.
fn refresh_at(expires_at: Timestamp, skew: Duration) -> Instant {
    let left_ms = expires_at.as_datetime().timestamp_millis()
        - Timestamp::now().as_datetime().timestamp_millis();
    let left = Duration::from_millis(u64::try_from(left_ms).unwrap_or(0));
    Instant::now() + (left - skew.min(left / 2))
}

/// The session a `POST /auth/refresh` answered: the access token from the
/// body, the rotated refresh token and CSRF token from the cookies.
pub(crate) async fn refreshed_session(response: reqwest::Response) -> Result<Session> {
    let (refresh_token, csrf_token) = session_cookies(&response);
    let data: RefreshResponse = decode::<DataEnvelope<RefreshResponse>>(response)
        .await?
        .data;
    Ok(Session {
        token: data.token,
        expires_at: data.expires_at,
        refresh_expires_at: data.refresh_expires_at,
        refresh_token,
        csrf_token,
        exchange: None,
    })
}

/// The refresh and CSRF cookie values of a response.
pub(crate) fn session_cookies(response: &reqwest::Response) -> (Option<String>, Option<String>) {
    let mut refresh = None;
    let mut csrf = None;
    for value in response.headers().get_all(reqwest::header::SET_COOKIE) {
        let Ok(text) = value.to_str() else { continue };
        let Ok(cookie) = cookie::Cookie::parse(text.to_owned()) else {
            continue;
        };
        match cookie.name() {
            "service_refresh_token" => refresh = Some(cookie.value().to_owned()),
            "service_csrf_token" => csrf = Some(cookie.value().to_owned()),
            _ => {}
        }
    }
    (refresh, csrf)
}
