//! Sign-in, the cookie session and its CSRF header, token refresh, and how the assets are served.

use super::*;

#[tokio::test]
async fn a_wrong_key_shows_the_servers_error() {
    let server = TestServer::start().await;
    let driver = Driver::start().await;
    let browser = driver.browser();
    sign_in(browser, &server, "orch_admin_not_a_real_key_000000000000").await;
    let error = wait_css(browser, "#signin-error [role=alert]").await;
    let text = error.text().await.unwrap();
    assert!(!text.trim().is_empty(), "an empty error box");
    assert!(browser.current_url().await.unwrap().path() == "/ui/signin");
    // The form stays usable: the right key then signs in.
    wait_css(browser, "#api-key").await.clear().await.unwrap();
    submit_key(browser, &server.admin_key).await;
    wait_url(browser, "/ui/workflows").await;
    wait_text(browser, "main h1", "Workflows").await;
    driver.close_expecting(&[401]).await;
}

#[tokio::test]
async fn a_cookie_session_without_csrf_cannot_write() {
    let server = TestServer::start().await;
    let (playbook_id, workspace_id) = server.launch_fixtures("Ship it", "Main repo").await;
    let driver = Driver::start().await;
    let browser = driver.browser();
    sign_in(browser, &server, &server.admin_key).await;
    wait_url(browser, "/ui/workflows").await;

    // From the signed-in page: the same write without and with the header.
    let script = r#"
        const [body, withCsrf, done] = arguments;
        const headers = { 'content-type': 'application/json' };
        if (withCsrf) {
            headers['x-csrf-token'] = document.cookie.split('; ').find((c) => c.startsWith('service_csrf_token=')).split('=')[1];
        }
        fetch('/api/v1/workflows', { method: 'POST', credentials: 'same-origin', headers, body: JSON.stringify(body) })
            .then(async (r) => done({ status: r.status, body: await r.json() }), (e) => done({ status: 0, body: String(e) }));
    "#;
    let body =
        json!({ "playbook_id": playbook_id, "workspace_id": workspace_id, "name": "csrf probe" });
    let refused: Value = browser
        .execute_async(script, vec![body.clone(), json!(false)])
        .await
        .unwrap();
    assert_eq!(refused["status"], 401, "{refused}");
    assert!(
        refused["body"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("x-csrf-token"),
        "{refused}"
    );
    assert_eq!(
        server
            .admin()
            .workflows()
            .list(&Default::default(), Default::default())
            .await
            .unwrap()
            .total,
        0,
        "the refused write changed nothing"
    );
    let accepted: Value = browser
        .execute_async(script, vec![body, json!(true)])
        .await
        .unwrap();
    assert_eq!(accepted["status"], 201, "{accepted}");
    // The access cookie is HttpOnly: scripts cannot read the token.
    let cookies: Value = browser
        .execute("return document.cookie;", vec![])
        .await
        .unwrap();
    let cookies = cookies.as_str().unwrap();
    assert!(cookies.contains("service_csrf_token="));
    assert!(!cookies.contains("service_access_token="));
    driver.close_expecting(&[401]).await;
}

#[tokio::test]
async fn assets_are_embedded_typed_and_locked_down_on_both_addresses() {
    let server = TestServer::start_with(|config| {
        config.dashboard_listen = Some("127.0.0.1:0".parse().unwrap());
    })
    .await;
    let second = format!(
        "http://{}",
        server
            .handle()
            .dashboard_addr()
            .expect("a dashboard address")
    );
    let http = server.http();
    for base in [server.url.as_str(), second.as_str()] {
        for (path, content_type) in [
            ("/", "text/html"),
            ("/ui", "text/html"),
            (
                "/ui/workflows/6d1c7f0e-0000-4000-8000-000000000000",
                "text/html",
            ),
            ("/ui/assets/app.js", "text/javascript"),
            ("/ui/assets/pages/workflow.js", "text/javascript"),
            ("/ui/assets/style.css", "text/css"),
            ("/ui/assets/favicon.svg", "image/svg+xml"),
        ] {
            let response = http.get(format!("{base}{path}")).send().await.unwrap();
            assert_eq!(response.status(), 200, "{base}{path}");
            let headers = response.headers();
            assert!(
                headers["content-type"]
                    .to_str()
                    .unwrap()
                    .starts_with(content_type),
                "{path}: {:?}",
                headers["content-type"]
            );
            let csp = headers["content-security-policy"].to_str().unwrap();
            assert!(csp.contains("script-src 'self'") && csp.contains("default-src 'none'"));
            assert!(!csp.contains("unsafe"), "{csp}");
            assert_eq!(headers["x-content-type-options"], "nosniff");
        }
        let missing = http
            .get(format!("{base}/ui/assets/missing.js"))
            .send()
            .await
            .unwrap();
        assert_eq!(missing.status(), 404);
        let body: Value = missing.json().await.unwrap();
        assert!(body["error"]["code"].is_string(), "{body}");
        // The second address serves the API too (one origin for the cookies).
        let health = http.get(format!("{base}/healthz")).send().await.unwrap();
        assert_eq!(health.status(), 200);
    }
    // The shell loads its modules from this origin only: no inline script.
    let html = http
        .get(server.at("/"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.contains(r#"<script type="module" src="/ui/assets/app.js"></script>"#));
    assert!(!html.contains("<script>"));
}

#[tokio::test]
async fn an_expired_access_token_is_refreshed_with_the_csrf_header() {
    let server = TestServer::start_with(|config| {
        config.core.access_token_ttl = Duration::from_secs(2);
    })
    .await;
    let driver = Driver::start().await;
    let browser = driver.browser();
    sign_in(browser, &server, &server.admin_key).await;
    wait_text(browser, "main h1", "Workflows").await;
    // The page refreshes the session before the access token expires
    // (refresh cookie + CSRF header): the expiry it keeps moves on.
    let first: Value = browser
        .execute(
            "return localStorage.getItem('orch.session.expires_at');",
            vec![],
        )
        .await
        .unwrap();
    let first = first
        .as_str()
        .expect("the session's expiry is kept")
        .to_owned();
    wait_js(
        browser,
        &format!("return localStorage.getItem('orch.session.expires_at') !== {first:?};"),
        "a refresh",
    )
    .await;
    // Past the first token's expiry and the server's 5 s leeway, pages
    // still load: the session lives on the refreshed token, never sign-in.
    wait_js(
        browser,
        &format!("return Date.now() > Date.parse({first:?}) + 6000;"),
        "the first token's end",
    )
    .await;
    click(browser, "a[data-nav=fleet]").await;
    wait_text(browser, "main h1", "Fleet").await;
    wait_text(browser, "main", "No agents have registered.").await;
    assert_eq!(browser.current_url().await.unwrap().path(), "/ui/fleet");

    // The session ends behind the page's back: the next read meets a 401,
    // the refresh fails too, and the page goes to sign-in (never blank).
    let status: Value = browser
        .execute_async(
            r#"const done = arguments[0];
               const csrf = document.cookie.split('; ').find((c) => c.startsWith('service_csrf_token=')).split('=')[1];
               fetch('/api/v1/auth/logout', { method: 'POST', credentials: 'same-origin', headers: { 'x-csrf-token': csrf, 'content-type': 'application/json' }, body: '{}' })
                 .then((r) => done(r.status), () => done(0));"#,
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(status, 200);
    click(browser, "a[data-nav=workflows]").await;
    wait_url(browser, "/ui/signin?expired=1").await;
    wait_text(browser, "main", "Your session ended").await;
    driver.close_expecting(&[401]).await;
}
