//! Sessions: revoking a refresh family (reuse of a rotated refresh token,
//! logout) kills the access tokens issued from it; the CSRF token is bound
//! to the session, so a planted CSRF cookie does not pass; logout by cookie
//! needs the CSRF header.

use orchestrator_tests::TestServer;
use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, COOKIE, SET_COOKIE};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// How long a revocation may take to reach a replica that did not make it
/// (the credential cache TTL is a few seconds); generous on a loaded machine.
const BOUND: Duration = Duration::from_secs(15);

/// The three session cookies of a login or refresh answer.
#[derive(Debug, Clone)]
struct Cookies {
    access: String,
    refresh: String,
    csrf: String,
}

impl Cookies {
    fn of(response: &reqwest::Response) -> Self {
        let value = |name: &str| {
            response
                .headers()
                .get_all(SET_COOKIE)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .find_map(|v| v.strip_prefix(&format!("{name}=")))
                .and_then(|v| v.split(';').next())
                .map(str::to_owned)
                .unwrap_or_else(|| panic!("no {name} cookie in {:?}", response.headers()))
        };
        Self {
            access: value("service_access_token"),
            refresh: value("service_refresh_token"),
            csrf: value("service_csrf_token"),
        }
    }

    /// The `Cookie` header a browser would send, with `csrf` as the CSRF
    /// cookie (an attacker may have planted another one).
    fn header_with_csrf(&self, csrf: &str) -> String {
        format!(
            "service_access_token={}; service_refresh_token={}; service_csrf_token={csrf}",
            self.access, self.refresh
        )
    }

    fn header(&self) -> String {
        self.header_with_csrf(&self.csrf)
    }
}

async fn login(server: &TestServer) -> Cookies {
    let response = server
        .http()
        .post(server.at("/api/v1/auth/token"))
        .json(&json!({ "api_key": server.admin_key }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    Cookies::of(&response)
}

/// `GET /auth/me` with `token` as the bearer: the status.
async fn me_status(server: &TestServer, token: &str) -> StatusCode {
    server
        .http()
        .get(server.at("/api/v1/auth/me"))
        .header(AUTHORIZATION, format!("Bearer {token}"))
        .send()
        .await
        .unwrap()
        .status()
}

/// Polls `me` with `token` until it answers 401, within [`BOUND`].
async fn until_refused(server: &TestServer, token: &str, what: &str) {
    let deadline = Instant::now() + BOUND;
    loop {
        let status = me_status(server, token).await;
        if status == StatusCode::UNAUTHORIZED {
            return;
        }
        assert_eq!(status, StatusCode::OK, "{what}: unexpected status");
        assert!(
            Instant::now() < deadline,
            "{what}: the access token still works {BOUND:?} after its session was revoked"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Asserts a 401 with the error envelope; returns the body.
async fn assert_401_envelope(response: reqwest::Response, what: &str) -> Value {
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{what}");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "UNAUTHORIZED", "{what}: {body}");
    assert!(body["error"]["message"].is_string(), "{what}: {body}");
    assert!(body["meta"]["request_id"].is_string(), "{what}: {body}");
    body
}

/// A cookie-authenticated `POST /api-keys` with `cookie` and an optional
/// CSRF header: the response.
async fn cookie_write(
    server: &TestServer,
    cookie: &str,
    csrf_header: Option<&str>,
    name: &str,
) -> reqwest::Response {
    let mut request = server
        .http()
        .post(server.at("/api/v1/api-keys"))
        .header(COOKIE, cookie)
        .json(&json!({ "scope": "agent", "name": name }));
    if let Some(csrf) = csrf_header {
        request = request.header("x-csrf-token", csrf);
    }
    request.send().await.unwrap()
}

async fn key_exists(server: &TestServer, name: &str) -> bool {
    server
        .admin()
        .api_keys()
        .list(Default::default())
        .await
        .unwrap()
        .items
        .iter()
        .any(|k| k.name == name)
}

#[tokio::test]
async fn reuse_of_a_rotated_refresh_token_kills_the_familys_access_tokens() {
    let server = TestServer::start().await;
    let sdk = server.anonymous();
    let first = sdk.auth().token(&server.admin_key, true).await.unwrap();
    let r1 = first.refresh_token.clone().unwrap();
    let second = sdk.auth().refresh(&r1).await.unwrap();
    let r2 = second.refresh_token.clone().unwrap();
    let third = sdk.auth().refresh(&r2).await.unwrap();
    let r3 = third.refresh_token.clone().unwrap();
    // An unrelated session of the same key must live on.
    let bystander = sdk.auth().token(&server.admin_key, true).await.unwrap();
    for token in [&first.token, &second.token, &third.token] {
        assert_eq!(me_status(&server, token).await, StatusCode::OK);
    }

    // Presenting the rotated r1 again: the whole family is revoked.
    assert_eq!(
        sdk.auth().refresh(&r1).await.unwrap_err().status(),
        Some(401)
    );
    for (token, what) in [
        (&first.token, "first access token"),
        (&second.token, "second access token"),
        (&third.token, "newest access token"),
    ] {
        until_refused(&server, token, what).await;
    }
    for token in [&r2, &r3] {
        assert_eq!(
            sdk.auth().refresh(token).await.unwrap_err().status(),
            Some(401),
            "every refresh token of a revoked family must fail"
        );
    }
    assert_eq!(me_status(&server, &bystander.token).await, StatusCode::OK);
    let next = sdk
        .auth()
        .refresh(bystander.refresh_token.as_deref().unwrap())
        .await
        .unwrap();
    assert_eq!(me_status(&server, &next.token).await, StatusCode::OK);
}

#[tokio::test]
async fn logout_by_bearer_kills_its_access_token_at_once_on_this_replica() {
    let server = TestServer::start().await;
    let session = server.admin_session().await;
    let other = server.admin_session().await;
    assert_eq!(me_status(&server, &session.token).await, StatusCode::OK);
    server
        .anonymous()
        .auth()
        .logout(session.refresh_token.as_deref())
        .await
        .unwrap();
    // The revocation was made on this replica: no cache lag here.
    assert_eq!(
        me_status(&server, &session.token).await,
        StatusCode::UNAUTHORIZED
    );
    until_refused(&server, &session.token, "logged-out access token").await;
    assert_eq!(me_status(&server, &other.token).await, StatusCode::OK);
}

#[tokio::test]
async fn logout_by_cookie_needs_the_sessions_csrf_header() {
    let server = TestServer::start().await;
    let http = server.http();
    let cookies = login(&server).await;

    // No header, then a wrong one: refused with the envelope, nothing revoked.
    let bare = http
        .post(server.at("/api/v1/auth/logout"))
        .header(COOKIE, cookies.header())
        .send()
        .await
        .unwrap();
    assert_401_envelope(bare, "logout by cookie without CSRF").await;
    let wrong = http
        .post(server.at("/api/v1/auth/logout"))
        .header(COOKIE, cookies.header())
        .header("x-csrf-token", "not-the-token")
        .send()
        .await
        .unwrap();
    assert_401_envelope(wrong, "logout by cookie with a wrong CSRF").await;
    assert_eq!(me_status(&server, &cookies.access).await, StatusCode::OK);
    let write = cookie_write(&server, &cookies.header(), Some(&cookies.csrf), "after").await;
    assert_eq!(
        write.status(),
        StatusCode::CREATED,
        "the session must live on"
    );

    // With the header: revoked and cleared.
    let out = http
        .post(server.at("/api/v1/auth/logout"))
        .header(COOKIE, cookies.header())
        .header("x-csrf-token", &cookies.csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), StatusCode::OK);
    let cleared = out
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter(|v| v.contains("Max-Age=0"))
        .count();
    assert_eq!(cleared, 3, "logout clears the three cookies");
    until_refused(&server, &cookies.access, "cookie session after logout").await;
    assert_eq!(
        server
            .anonymous()
            .auth()
            .refresh(&cookies.refresh)
            .await
            .unwrap_err()
            .status(),
        Some(401)
    );
}

#[tokio::test]
async fn a_planted_csrf_cookie_does_not_pass() {
    let server = TestServer::start().await;
    let http = server.http();
    let victim = login(&server).await;
    // The attacker's own, genuinely issued CSRF token, and an invented one.
    let attacker = login(&server).await;
    assert_ne!(
        victim.csrf, attacker.csrf,
        "each session has its own CSRF token"
    );
    for planted in [attacker.csrf.as_str(), "planted-by-the-attacker"] {
        let cookie = victim.header_with_csrf(planted);
        let name = format!("planted {planted}");
        let response = cookie_write(&server, &cookie, Some(planted), &name).await;
        let body = assert_401_envelope(response, "write with a planted CSRF cookie").await;
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("x-csrf-token"),
            "{body}"
        );
        assert!(
            !key_exists(&server, &name).await,
            "a refused write changed something"
        );

        let refresh = http
            .post(server.at("/api/v1/auth/refresh"))
            .header(COOKIE, &cookie)
            .header("x-csrf-token", planted)
            .send()
            .await
            .unwrap();
        assert_401_envelope(refresh, "refresh with a planted CSRF cookie").await;
        let logout = http
            .post(server.at("/api/v1/auth/logout"))
            .header(COOKIE, &cookie)
            .header("x-csrf-token", planted)
            .send()
            .await
            .unwrap();
        assert_401_envelope(logout, "logout with a planted CSRF cookie").await;
    }
    // The victim's session is untouched (its refresh token was not rotated).
    assert_eq!(me_status(&server, &victim.access).await, StatusCode::OK);
    let refreshed = server.anonymous().auth().refresh(&victim.refresh).await;
    assert!(refreshed.is_ok(), "{refreshed:?}");
}

#[tokio::test]
async fn cookie_writes_with_the_sessions_csrf_work_across_refreshes() {
    let server = TestServer::start().await;
    let http = server.http();
    let cookies = login(&server).await;
    let write = cookie_write(&server, &cookies.header(), Some(&cookies.csrf), "one").await;
    assert_eq!(write.status(), StatusCode::CREATED);

    // Refresh by cookie; the cookies it sets carry on.
    let mut current = cookies.clone();
    for round in 0..2 {
        let refreshed = http
            .post(server.at("/api/v1/auth/refresh"))
            .header(COOKIE, current.header())
            .header("x-csrf-token", &current.csrf)
            .send()
            .await
            .unwrap();
        assert_eq!(refreshed.status(), StatusCode::OK, "refresh round {round}");
        let next = Cookies::of(&refreshed);
        assert_ne!(next.refresh, current.refresh);
        let name = format!("after refresh {round}");
        let write = cookie_write(&server, &next.header(), Some(&next.csrf), &name).await;
        assert_eq!(
            write.status(),
            StatusCode::CREATED,
            "write after refresh {round}"
        );
        current = next;
    }
    // The CSRF cookie of a reading client (no header) is not enough.
    let write = cookie_write(&server, &current.header(), None, "no header").await;
    assert_401_envelope(write, "cookie write without the header").await;
}

#[tokio::test]
async fn requests_racing_a_revocation_never_fail_with_5xx() {
    let server = TestServer::start().await;
    for round in 0..3 {
        let session = server.admin_session().await;
        let access = session.token.clone();
        let refresh = session.refresh_token.clone().unwrap();
        let mut handles = Vec::new();
        for _ in 0..8 {
            let http = server.http();
            let url = server.at("/api/v1/auth/me");
            let access = access.clone();
            handles.push(tokio::spawn(async move {
                let mut statuses = Vec::new();
                for _ in 0..25 {
                    let status = http
                        .get(&url)
                        .header(AUTHORIZATION, format!("Bearer {access}"))
                        .send()
                        .await
                        .unwrap()
                        .status();
                    statuses.push(status);
                }
                statuses
            }));
        }
        // Half the rounds revoke by logout, the others by reuse.
        let sdk = server.anonymous();
        if round % 2 == 0 {
            sdk.auth().logout(Some(&refresh)).await.unwrap();
        } else {
            let _next = sdk.auth().refresh(&refresh).await.unwrap();
            let mut reuses = Vec::new();
            for _ in 0..4 {
                let sdk = sdk.clone();
                let refresh = refresh.clone();
                reuses.push(tokio::spawn(async move {
                    sdk.auth().refresh(&refresh).await.unwrap_err().status()
                }));
            }
            for reuse in reuses {
                assert_eq!(reuse.await.unwrap(), Some(401));
            }
        }
        for handle in handles {
            for status in handle.await.unwrap() {
                assert!(
                    status == StatusCode::OK || status == StatusCode::UNAUTHORIZED,
                    "round {round}: {status} while the session was being revoked"
                );
            }
        }
        until_refused(&server, &access, "raced access token").await;
    }
}

/// Another replica on the same database learns of a revocation within its
/// cache's lifetime (bounded here generously), and its own revocations are
/// immediate on it.
#[tokio::test]
async fn a_revocation_reaches_the_other_replica() {
    let first = TestServer::start().await;
    let mut config = orchestrator_server::ServerConfig::new(
        "127.0.0.1:0".parse().unwrap(),
        first.database_url(),
    );
    config.core.max_connections = 5;
    config.rate_limit_per_minute = 0;
    let second = orchestrator_server::start(config).await.unwrap();
    let second_url = format!("http://{}", second.local_addr());
    let me_on_second = |token: String| {
        let url = format!("{second_url}/api/v1/auth/me");
        let http = first.http();
        async move {
            http.get(url)
                .header(AUTHORIZATION, format!("Bearer {token}"))
                .send()
                .await
                .unwrap()
                .status()
        }
    };

    // Logged out on the first replica; the second (its cache warm) follows.
    let session = first.admin_session().await;
    assert_eq!(me_on_second(session.token.clone()).await, StatusCode::OK);
    first
        .anonymous()
        .auth()
        .logout(session.refresh_token.as_deref())
        .await
        .unwrap();
    let deadline = Instant::now() + BOUND;
    loop {
        let status = me_on_second(session.token.clone()).await;
        if status == StatusCode::UNAUTHORIZED {
            break;
        }
        assert_eq!(status, StatusCode::OK);
        assert!(
            Instant::now() < deadline,
            "the other replica still accepts a logged-out session after {BOUND:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Reuse detected on the second replica: immediate there, and on the
    // first within the bound.
    let session = first.admin_session().await;
    let second_sdk = orchestrator_client::Client::new(&second_url).unwrap();
    let rotated = second_sdk
        .auth()
        .refresh(session.refresh_token.as_deref().unwrap())
        .await
        .unwrap();
    assert_eq!(me_status(&first, &rotated.token).await, StatusCode::OK);
    assert_eq!(me_on_second(rotated.token.clone()).await, StatusCode::OK);
    let reuse = second_sdk
        .auth()
        .refresh(session.refresh_token.as_deref().unwrap())
        .await
        .unwrap_err();
    assert_eq!(reuse.status(), Some(401));
    assert_eq!(
        me_on_second(rotated.token.clone()).await,
        StatusCode::UNAUTHORIZED
    );
    until_refused(
        &first,
        &rotated.token,
        "reuse detected on the other replica",
    )
    .await;
    second.shutdown().await;
}
