//! Building a [`Client`]: its options, and the session it may start from.

use super::{Client, RetryPolicy, install_crypto_provider};
use crate::error::{Error, Result};
use crate::session::{RefreshHook, ReloadHook, Session, SessionAuth, SessionTokens};
use std::sync::Arc;
use std::time::Duration;

/// Options for [`Client`].
#[derive(Clone)]
pub struct ClientBuilder {
    base: String,
    credential: Option<String>,
    timeout: Option<Duration>,
    connect_timeout: Duration,
    retry: RetryPolicy,
    request_ids: bool,
    session: Option<SessionStart>,
    refresh_skew: Duration,
    on_refresh: Option<RefreshHook>,
    reload: Option<ReloadHook>,
}

/// What a session-backed client starts from.
#[derive(Clone)]
enum SessionStart {
    /// A whole session; its refresh token may be missing (then `build` fails).
    Session(Box<Session>),
    /// A refresh token alone.
    RefreshToken(String),
}

impl std::fmt::Debug for ClientBuilder {
    /// Never prints a credential.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("base", &self.base)
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .field("session", &self.session.is_some())
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// Authenticates with a refresh session (from
    /// [`Auth::token`](crate::Auth::token) or [`Auth::refresh`](crate::Auth::refresh)):
    /// requests carry its access token, which the client refreshes through
    /// `POST /auth/refresh` when it nears expiry or a request meets `401`
    /// (that request is then sent once more). Replaces [`Self::bearer`].
    /// Save the rotated refresh token with [`Self::on_refresh`] to resume
    /// the session in another process. `build` fails when the session has
    /// no refresh token.
    pub fn refresh_session(mut self, session: Session) -> Self {
        self.session = Some(SessionStart::Session(Box::new(session)));
        self
    }

    /// Like [`Self::refresh_session`] from a saved refresh token alone: the
    /// first request refreshes to get an access token.
    pub fn refresh_token(mut self, refresh_token: impl Into<String>) -> Self {
        self.session = Some(SessionStart::RefreshToken(refresh_token.into()));
        self
    }

    /// How long before its expiry an access token is refreshed (60 s by
    /// default; at most half of what is left of a token's life, so tokens
    /// shorter-lived than this are not refreshed on every request). Zero
    /// refreshes at the expiry itself, or after a `401`.
    pub fn refresh_skew(mut self, skew: Duration) -> Self {
        self.refresh_skew = skew;
        self
    }

    /// Called after each refresh with the new session, whose
    /// `refresh_token` replaces the old one (which the server now refuses,
    /// and whose reuse would end the session). Runs while other requests
    /// wait for the refresh, so keep it short.
    pub fn on_refresh(mut self, hook: impl Fn(&Session) + Send + Sync + 'static) -> Self {
        self.on_refresh = Some(Arc::new(hook));
        self
    }

    /// For a session several processes share through saved tokens (say a
    /// CLI profile): called before each refresh to read what is saved now.
    /// When another process has refreshed since (the saved refresh token
    /// differs), the client takes the saved tokens instead of spending its
    /// own refresh token, which the server would take for a stolen one.
    pub fn reload_session(
        mut self,
        hook: impl Fn() -> Option<SessionTokens> + Send + Sync + 'static,
    ) -> Self {
        self.reload = Some(Arc::new(hook));
        self
    }

    /// The credential: an API key or an access token.
    pub fn bearer(mut self, credential: impl Into<String>) -> Self {
        self.credential = Some(credential.into());
        self
    }

    /// Upper bound of each request (none by default). It also bounds
    /// streams, so leave it unset for a client that follows logs or events;
    /// [`Client::with_timeout`] sets one for some calls only.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Upper bound of opening a connection (10 s by default).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The retry policy (default: [`RetryPolicy::default`]).
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Attempts in all, the first included (`1` turns retries off).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.retry.max_attempts = attempts.max(1);
        self
    }

    /// The first backoff of the retry policy.
    pub fn base_delay(mut self, delay: Duration) -> Self {
        self.retry.base_delay = delay;
        self
    }

    /// Turns retries off.
    pub fn no_retries(self) -> Self {
        self.retry(RetryPolicy::none())
    }

    /// When on, every write whose body has a `request_id` field and none
    /// set gets a fresh UUID, which makes it replay-safe and so retried.
    pub fn generate_request_ids(mut self, on: bool) -> Self {
        self.request_ids = on;
        self
    }

    /// The client.
    pub fn build(self) -> Result<Client> {
        install_crypto_provider();
        let base = self.base.trim_end_matches('/').to_owned();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(Error::InvalidUrl(self.base));
        }
        let mut http = reqwest::Client::builder()
            .user_agent(concat!("orch-sdk/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(self.connect_timeout);
        if let Some(timeout) = self.timeout {
            http = http.timeout(timeout);
        }
        let session = match self.session {
            None => None,
            Some(start) => {
                let (refresh, access) = match start {
                    SessionStart::Session(session) => {
                        let Some(refresh) = session.refresh_token else {
                            return Err(Error::MissingRefreshToken);
                        };
                        (refresh, Some((session.token, session.expires_at)))
                    }
                    SessionStart::RefreshToken(refresh) => (refresh, None),
                };
                Some(Arc::new(SessionAuth::new(
                    refresh,
                    access,
                    self.refresh_skew,
                    self.on_refresh,
                    self.reload,
                )))
            }
        };
        Ok(Client {
            http: http.build()?,
            base,
            credential: if session.is_some() {
                None
            } else {
                self.credential
            },
            session,
            retry: self.retry,
            request_ids: self.request_ids,
            request_timeout: None,
        })
    }
}

impl Client {
    /// A client for `base_url` (e.g. `http://127.0.0.1:8080`) with no credential.
    pub fn new(base_url: impl Into<String>) -> Result<Self> {
        Self::builder(base_url).build()
    }

    /// Options for a client of `base_url`.
    pub fn builder(base_url: impl Into<String>) -> ClientBuilder {
        ClientBuilder {
            base: base_url.into(),
            credential: None,
            timeout: None,
            connect_timeout: Duration::from_secs(10),
            retry: RetryPolicy::default(),
            request_ids: false,
            session: None,
            refresh_skew: Duration::from_secs(60),
            on_refresh: None,
            reload: None,
        }
    }
}
