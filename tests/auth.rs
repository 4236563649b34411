//! Authentication end to end: the token exchange, cookies, `me`, refresh
//! rotation and reuse detection, CSRF, logout, and credential failures.

use orchestrator_client::api::{CreateApiKey, ErrorCode, Scope, Timestamp};
use orchestrator_tests::{TestServer, key_request};
use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, COOKIE, SET_COOKIE};
use serde_json::{Value, json};

/// The `Set-Cookie` header of `name`, whole.
fn set_cookie<'a>(response: &'a reqwest::Response, name: &str) -> &'a str {
    response
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with(&format!("{name}=")))
        .unwrap_or_else(|| panic!("no {name} cookie in {:?}", response.headers()))
}

fn cookie_value(header: &str) -> String {
    header
        .split(';')
        .next()
        .unwrap()
        .split_once('=')
        .unwrap()
        .1
        .to_owned()
}

/// `POST /auth/token` with `body`; asserts 200.
async fn exchange(server: &TestServer, body: Value) -> reqwest::Response {
    let response = server
        .http()
        .post(server.at("/api/v1/auth/token"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response
}

#[tokio::test]
async fn token_exchange_sets_three_cookies_and_me_works_by_bearer_and_cookie() {
    let server = TestServer::start().await;
    let http = server.http();

    let response = exchange(&server, json!({ "api_key": server.admin_key })).await;
    let access = set_cookie(&response, "service_access_token").to_owned();
    let refresh = set_cookie(&response, "service_refresh_token").to_owned();
    let csrf = set_cookie(&response, "service_csrf_token").to_owned();
    for attr in ["HttpOnly", "SameSite=Strict", "Path=/", "Expires="] {
        assert!(
            access.contains(attr),
            "access cookie lacks {attr}: {access}"
        );
    }
    assert!(
        refresh.contains("HttpOnly")
            && refresh.contains("Path=/api/v1/auth")
            && refresh.contains("SameSite=Strict"),
        "{refresh}"
    );
    assert!(
        !csrf.contains("HttpOnly") && csrf.contains("SameSite=Strict") && csrf.contains("Path=/"),
        "{csrf}"
    );
    assert!(
        !access.contains("Secure"),
        "plain http must not set Secure: {access}"
    );
    let body: Value = response.json().await.unwrap();
    let data = &body["data"];
    assert_eq!(data["scope"], "admin");
    assert_eq!(data["tenant_id"], "00000000-0000-0000-0000-000000000001");
    let token = data["token"].as_str().unwrap().to_owned();
    for field in ["expires_at", "refresh_expires_at"] {
        let text = data[field].as_str().unwrap();
        assert!(
            text.ends_with('Z') && text.len() == "2026-11-21T19:00:00.000Z".len(),
            "{field}: {text}"
        );
    }
    assert!(body["meta"]["request_id"].is_string() && body["meta"]["timestamp"].is_string());

    // `apiKey` is accepted too, and /auth/login is the same handler.
    let alias = http
        .post(server.at("/api/v1/auth/login"))
        .json(&json!({ "apiKey": server.admin_key }))
        .send()
        .await
        .unwrap();
    assert_eq!(alias.status(), StatusCode::OK);

    // me by access token, by raw key and by cookie.
    let me = server.client(&token).auth().me().await.unwrap();
    assert!(me.authenticated);
    assert_eq!(me.scope, Scope::Admin);
    assert_eq!(me.owner_type, "user");
    assert_eq!(server.admin().auth().me().await.unwrap().key_id, me.key_id);
    let by_cookie = http
        .get(server.at("/api/v1/auth/me"))
        .header(
            COOKIE,
            format!("service_access_token={}", cookie_value(&access)),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(by_cookie.status(), StatusCode::OK);
    let by_cookie: Value = by_cookie.json().await.unwrap();
    assert_eq!(by_cookie["data"]["scope"], "admin");
    assert_eq!(by_cookie["data"]["owner_id"], Value::Null);
}

#[tokio::test]
async fn non_persistent_sessions_get_session_cookies_and_https_gets_secure() {
    let server = TestServer::start().await;
    let response = server
        .http()
        .post(server.at("/api/v1/auth/token"))
        .header("x-forwarded-proto", "https")
        .json(&json!({ "api_key": server.admin_key, "persistent_session": false }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    for name in [
        "service_access_token",
        "service_refresh_token",
        "service_csrf_token",
    ] {
        let cookie = set_cookie(&response, name);
        assert!(
            !cookie.contains("Expires="),
            "{name} should be a session cookie: {cookie}"
        );
        assert!(
            cookie.contains("Secure"),
            "{name} should be Secure over https: {cookie}"
        );
    }
}

#[tokio::test]
async fn refresh_rotates_and_reuse_revokes_the_family() {
    let server = TestServer::start().await;
    let sdk = server.anonymous();
    let first = sdk.auth().token(&server.admin_key, true).await.unwrap();
    let r1 = first.refresh_token.clone().expect("refresh cookie");

    let second = sdk.auth().refresh(&r1).await.unwrap();
    let r2 = second
        .refresh_token
        .clone()
        .expect("rotated refresh cookie");
    assert_ne!(r1, r2, "refresh must rotate the refresh token");
    assert_ne!(first.token, second.token);
    assert_eq!(
        server
            .client(&second.token)
            .auth()
            .me()
            .await
            .unwrap()
            .scope,
        Scope::Admin
    );

    // Reusing the rotated token is a theft signal: 401, and the family dies.
    let reuse = sdk.auth().refresh(&r1).await.unwrap_err();
    assert_eq!(reuse.status(), Some(401));
    assert_eq!(reuse.code(), Some(ErrorCode::Unauthorized));
    let after = sdk.auth().refresh(&r2).await.unwrap_err();
    assert_eq!(
        after.status(),
        Some(401),
        "the newest token of a revoked family must not refresh"
    );

    // A refresh token is not an access credential, and garbage is refused.
    assert_eq!(
        server.client(&r2).auth().me().await.unwrap_err().status(),
        Some(401)
    );
    assert_eq!(
        sdk.auth()
            .refresh("orch_rt_nonsense")
            .await
            .unwrap_err()
            .status(),
        Some(401)
    );
}

#[tokio::test]
async fn cookie_flows_need_the_csrf_header() {
    let server = TestServer::start().await;
    let http = server.http();
    let login = exchange(&server, json!({ "api_key": server.admin_key })).await;
    let access = cookie_value(set_cookie(&login, "service_access_token"));
    let refresh = cookie_value(set_cookie(&login, "service_refresh_token"));
    let csrf = cookie_value(set_cookie(&login, "service_csrf_token"));
    let cookies = format!(
        "service_access_token={access}; service_refresh_token={refresh}; service_csrf_token={csrf}"
    );
    let body = json!({ "scope": "agent", "name": "csrf test" });

    // A state-changing request by cookie without the header: 401, nothing created.
    let refused = http
        .post(server.at("/api/v1/api-keys"))
        .header(COOKIE, &cookies)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let wrong = http
        .post(server.at("/api/v1/api-keys"))
        .header(COOKIE, &cookies)
        .header("x-csrf-token", "not-the-token")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let keys = server
        .admin()
        .api_keys()
        .list(Default::default())
        .await
        .unwrap();
    assert!(
        keys.items.iter().all(|k| k.name != "csrf test"),
        "a refused request must change nothing"
    );

    // Reads by cookie need no header; writes with the matching header pass.
    let read = http
        .get(server.at("/api/v1/api-keys"))
        .header(COOKIE, &cookies)
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), StatusCode::OK);
    let ok = http
        .post(server.at("/api/v1/api-keys"))
        .header(COOKIE, &cookies)
        .header("x-csrf-token", &csrf)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), StatusCode::CREATED);

    // Refresh by cookie: CSRF required, then rotation with new cookies.
    let no_header = http
        .post(server.at("/api/v1/auth/refresh"))
        .header(COOKIE, &cookies)
        .send()
        .await
        .unwrap();
    assert_eq!(no_header.status(), StatusCode::UNAUTHORIZED);
    let refreshed = http
        .post(server.at("/api/v1/auth/refresh"))
        .header(COOKIE, &cookies)
        .header("x-csrf-token", &csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(refreshed.status(), StatusCode::OK);
    let new_refresh = cookie_value(set_cookie(&refreshed, "service_refresh_token"));
    assert_ne!(new_refresh, refresh);
    let body: Value = refreshed.json().await.unwrap();
    assert!(body["data"]["token"].is_string() && body["data"]["refresh_expires_at"].is_string());
}

#[tokio::test]
async fn logout_is_idempotent_clears_cookies_and_kills_the_session() {
    let server = TestServer::start().await;
    let http = server.http();
    let session = server.admin_session().await;
    let refresh = session.refresh_token.unwrap();

    for round in 0..2 {
        let response = http
            .post(server.at("/api/v1/auth/logout"))
            .header(AUTHORIZATION, format!("Bearer {refresh}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "logout round {round}");
        for name in [
            "service_access_token",
            "service_refresh_token",
            "service_csrf_token",
        ] {
            let cookie = set_cookie(&response, name);
            assert!(cookie.contains("Max-Age=0"), "{name} not cleared: {cookie}");
        }
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["data"], json!({ "logged_out": true }));
    }
    assert_eq!(
        server
            .anonymous()
            .auth()
            .refresh(&refresh)
            .await
            .unwrap_err()
            .status(),
        Some(401)
    );

    // No token at all, or garbage: still fine.
    let bare = http
        .post(server.at("/api/v1/auth/logout"))
        .send()
        .await
        .unwrap();
    assert_eq!(bare.status(), StatusCode::OK);
    let junk = http
        .post(server.at("/api/v1/auth/logout"))
        .header(COOKIE, "service_refresh_token=junk")
        .send()
        .await
        .unwrap();
    assert_eq!(junk.status(), StatusCode::OK);
}

#[tokio::test]
async fn missing_bad_revoked_and_expired_credentials_are_401() {
    let server = TestServer::start().await;
    let http = server.http();

    let missing = http.get(server.at("/api/v1/auth/me")).send().await.unwrap();
    assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
    let body: Value = missing.json().await.unwrap();
    assert_eq!(body["error"]["code"], "UNAUTHORIZED");
    assert!(body["meta"]["request_id"].is_string());

    let malformed = http
        .get(server.at("/api/v1/auth/me"))
        .header(AUTHORIZATION, "Basic abc")
        .send()
        .await
        .unwrap();
    assert_eq!(malformed.status(), StatusCode::UNAUTHORIZED);
    for bad in [
        "orch_admin_00000000000000000000000000000000",
        "not-a-token",
        "a.b.c",
    ] {
        assert_eq!(
            server.client(bad).auth().me().await.unwrap_err().status(),
            Some(401),
            "{bad}"
        );
    }
    let bad_exchange = server
        .anonymous()
        .auth()
        .token("orch_admin_00000000000000000000000000000000", true)
        .await
        .unwrap_err();
    assert_eq!(bad_exchange.status(), Some(401));

    // Revocation takes effect on the next request, for the key and its tokens.
    let created = server
        .admin()
        .api_keys()
        .create(&key_request(Scope::Agent, "short-lived"))
        .await
        .unwrap();
    let agent = server.client(&created.api_key);
    assert_eq!(agent.auth().me().await.unwrap().scope, Scope::Agent);
    let token = server
        .anonymous()
        .auth()
        .token(&created.api_key, true)
        .await
        .unwrap();
    server
        .admin()
        .api_keys()
        .revoke(created.key.id)
        .await
        .unwrap();
    assert_eq!(agent.auth().me().await.unwrap_err().status(), Some(401));
    assert_eq!(
        server
            .client(&token.token)
            .auth()
            .me()
            .await
            .unwrap_err()
            .status(),
        Some(401)
    );
    assert_eq!(
        server
            .anonymous()
            .auth()
            .refresh(token.refresh_token.as_deref().unwrap())
            .await
            .unwrap_err()
            .status(),
        Some(401)
    );

    // An expired key stops working.
    let expiring = server
        .admin()
        .api_keys()
        .create(&CreateApiKey {
            expires_at: Some(Timestamp::now().plus(std::time::Duration::from_millis(1500))),
            ..key_request(Scope::Agent, "expiring")
        })
        .await
        .unwrap();
    assert!(server.client(&expiring.api_key).auth().me().await.is_ok());
    tokio::time::sleep(std::time::Duration::from_millis(1700)).await;
    assert_eq!(
        server
            .client(&expiring.api_key)
            .auth()
            .me()
            .await
            .unwrap_err()
            .status(),
        Some(401)
    );
}

#[tokio::test]
async fn scopes_are_ranked_and_enforced() {
    let server = TestServer::start().await;
    let agent = server
        .admin()
        .api_keys()
        .create(&key_request(Scope::Agent, "agent key"))
        .await
        .unwrap();
    let agent = server.client(&agent.api_key);
    // agent < admin: key management is refused.
    let denied = agent.api_keys().list(Default::default()).await.unwrap_err();
    assert_eq!(denied.status(), Some(403));
    assert_eq!(denied.code(), Some(ErrorCode::Forbidden));
    // admin < service: tenants are refused to admin, allowed to service.
    let tenant = orchestrator_client::api::CreateTenant {
        name: "Acme".into(),
        slug: None,
        request_id: None,
    };
    assert_eq!(
        server
            .admin()
            .tenants()
            .create(&tenant)
            .await
            .unwrap_err()
            .status(),
        Some(403)
    );
    assert!(server.service().tenants().create(&tenant).await.is_ok());
    // service ranks above admin, so it may use admin routes.
    assert!(
        server
            .service()
            .api_keys()
            .list(Default::default())
            .await
            .is_ok()
    );
    // An admin cannot mint a service key.
    let escalation = server
        .admin()
        .api_keys()
        .create(&key_request(Scope::Service, "service key"))
        .await
        .unwrap_err();
    assert_eq!(escalation.status(), Some(403));
}

/// Contract rule 4 (Authentication): the cookie flow carries the CSRF cookie
/// *and* the `x-csrf-token` header, equal to each other (and to the
/// session's token). The header alone, or a cookie that disagrees with it,
/// is refused, for refresh and for cookie-authenticated writes.
#[tokio::test]
async fn cookie_flows_need_the_csrf_cookie_and_header_together() {
    let server = TestServer::start().await;
    let http = server.http();
    let login = exchange(&server, json!({ "api_key": server.admin_key })).await;
    let access = cookie_value(set_cookie(&login, "service_access_token"));
    let refresh = cookie_value(set_cookie(&login, "service_refresh_token"));
    let csrf = cookie_value(set_cookie(&login, "service_csrf_token"));
    let without_csrf_cookie =
        format!("service_access_token={access}; service_refresh_token={refresh}");
    let other_csrf_cookie = format!("{without_csrf_cookie}; service_csrf_token=planted");

    for cookies in [&without_csrf_cookie, &other_csrf_cookie] {
        let refused = http
            .post(server.at("/api/v1/auth/refresh"))
            .header(COOKIE, cookies)
            .header("x-csrf-token", &csrf)
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED, "{cookies}");
        let body: Value = refused.json().await.unwrap();
        assert_eq!(body["error"]["code"], "UNAUTHORIZED");

        let write = http
            .post(server.at("/api/v1/api-keys"))
            .header(COOKIE, cookies)
            .header("x-csrf-token", &csrf)
            .json(&json!({ "scope": "agent", "name": "half csrf" }))
            .send()
            .await
            .unwrap();
        assert_eq!(write.status(), StatusCode::UNAUTHORIZED, "{cookies}");
    }
    let keys = server
        .admin()
        .api_keys()
        .list(Default::default())
        .await
        .unwrap();
    assert!(keys.items.iter().all(|k| k.name != "half csrf"));

    // The refused refreshes rotated nothing: the full flow still works.
    let refreshed = http
        .post(server.at("/api/v1/auth/refresh"))
        .header(
            COOKIE,
            format!("{without_csrf_cookie}; service_csrf_token={csrf}"),
        )
        .header("x-csrf-token", &csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(refreshed.status(), StatusCode::OK);
}
