//! Every validation answer of flow limits, and that a refused request
//! changes nothing.

use orchestrator_client::api::Scope;
use orchestrator_tests::{TestServer, key_request};
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn call(server: &TestServer, method: &str, path: &str, body: Value) -> (StatusCode, Value) {
    call_as(server, &server.admin_key, method, path, body).await
}

async fn call_as(
    server: &TestServer,
    key: &str,
    method: &str,
    path: &str,
    body: Value,
) -> (StatusCode, Value) {
    let url = server.at(&format!("/api/v1{path}"));
    let http = server.http();
    let request = match method {
        "GET" => http.get(url),
        "PUT" => http.put(url).json(&body),
        "DELETE" => http.delete(url),
        _ => http.post(url).json(&body),
    };
    let response = request.bearer_auth(key).send().await.unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

#[tokio::test]
async fn limits_refuse_bad_values_and_change_nothing() {
    let server = TestServer::start().await;
    let cases = [
        ("/concurrency-limits/k", json!({ "limit": 0 }), 400, "limit"),
        (
            "/concurrency-limits/k",
            json!({ "limit": 100_001 }),
            400,
            "limit",
        ),
        (
            "/concurrency-limits/k",
            json!({ "limit": -3 }),
            400,
            "limit",
        ),
        (
            "/concurrency-limits/k",
            json!({ "limit": "two" }),
            422,
            "limit",
        ),
        ("/concurrency-limits/k", json!({}), 422, "limit"),
        (
            "/rate-limits/r",
            json!({ "limit": 5, "period_seconds": -1 }),
            400,
            "period_seconds",
        ),
        (
            "/rate-limits/r",
            json!({ "limit": 5, "period_seconds": 0 }),
            400,
            "period_seconds",
        ),
        (
            "/rate-limits/r",
            json!({ "limit": 5, "period_seconds": 86_401 }),
            400,
            "period_seconds",
        ),
        (
            "/rate-limits/r",
            json!({ "limit": 0, "period_seconds": 10 }),
            400,
            "limit",
        ),
        (
            "/rate-limits/r",
            json!({ "limit": 5, "period_seconds": "x" }),
            422,
            "period_seconds",
        ),
        (
            "/rate-limits/r",
            json!({ "limit": 5 }),
            422,
            "period_seconds",
        ),
    ];
    for (path, body, status, field) in cases {
        let (got, answer) = call(&server, "PUT", path, body.clone()).await;
        assert_eq!(got.as_u16(), status, "PUT {path} {body}: {answer}");
        assert!(
            answer.to_string().contains(field),
            "PUT {path} {body} names {field}: {answer}"
        );
    }
    let long = "k".repeat(201);
    let (got, _) = call(
        &server,
        "PUT",
        &format!("/concurrency-limits/{long}"),
        json!({ "limit": 1 }),
    )
    .await;
    assert_eq!(
        got,
        StatusCode::UNPROCESSABLE_ENTITY,
        "a key over 200 characters"
    );
    for path in ["/concurrency-limits", "/rate-limits"] {
        let (got, answer) = call(&server, "GET", path, Value::Null).await;
        assert_eq!(got, StatusCode::OK);
        assert_eq!(answer["data"], json!([]), "nothing was stored: {answer}");
    }
    for path in ["/concurrency-limits/none", "/rate-limits/none"] {
        let (got, _) = call(&server, "DELETE", path, Value::Null).await;
        assert_eq!(got, StatusCode::NOT_FOUND, "DELETE {path}");
        let (got, _) = call(&server, "GET", path, Value::Null).await;
        assert_eq!(got, StatusCode::NOT_FOUND, "GET {path}");
    }
    // Admin only.
    let worker_key = server
        .admin()
        .api_keys()
        .create(&key_request(Scope::Worker, "not admin"))
        .await
        .unwrap()
        .api_key;
    let (got, _) = call_as(
        &server,
        &worker_key,
        "PUT",
        "/rate-limits/r",
        json!({ "limit": 1, "period_seconds": 1 }),
    )
    .await;
    assert_eq!(got, StatusCode::FORBIDDEN);

    // Set, read, delete.
    let (got, set) = call(
        &server,
        "PUT",
        "/rate-limits/r",
        json!({ "limit": 3, "period_seconds": 60 }),
    )
    .await;
    assert_eq!(got, StatusCode::OK);
    assert_eq!(
        set["data"],
        json!({ "key": "r", "limit": 3, "period_seconds": 60, "claimed_in_window": 0, "pending": 0 })
    );
    let (got, set) = call(
        &server,
        "PUT",
        "/concurrency-limits/a%2Fb",
        json!({ "limit": 7 }),
    )
    .await;
    assert_eq!(got, StatusCode::OK);
    assert_eq!(
        set["data"],
        json!({ "key": "a/b", "limit": 7, "held": 0, "pending": 0 })
    );
    let (got, deleted) = call(&server, "DELETE", "/concurrency-limits/a%2Fb", Value::Null).await;
    assert_eq!(got, StatusCode::OK);
    assert_eq!(deleted["data"], json!({ "key": "a/b", "deleted": true }));
    let (_, listed) = call(&server, "GET", "/concurrency-limits", Value::Null).await;
    assert_eq!(
        listed["data"],
        json!([]),
        "no limit and no task: not listed"
    );
}

#[tokio::test]
async fn task_keys_are_checked_at_create() {
    let server = TestServer::start().await;
    let task = |extra: Value| {
        let mut body = json!({ "title": "t", "type": "code" });
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        body
    };
    let long = "k".repeat(201);
    let cases = [
        (json!({ "rate_limit_key": "unset" }), 400, "rate_limit_key"),
        (json!({ "concurrency_key": long }), 422, "concurrency_key"),
        (json!({ "concurrency_key": "" }), 422, "concurrency_key"),
        (json!({ "rate_limit_key": long }), 422, "rate_limit_key"),
        (json!({ "concurrency_key": 7 }), 422, "concurrency_key"),
    ];
    for (extra, status, field) in cases {
        let (got, answer) = call(&server, "POST", "/tasks", task(extra.clone())).await;
        assert_eq!(got.as_u16(), status, "{extra}: {answer}");
        assert!(
            answer.to_string().contains(field),
            "{extra} names {field}: {answer}"
        );
    }
    let (_, tasks) = call(&server, "GET", "/tasks", Value::Null).await;
    assert_eq!(tasks["data"], json!([]), "no task was created");
    let (_, keys) = call(&server, "GET", "/concurrency-limits", Value::Null).await;
    assert_eq!(keys["data"], json!([]), "no key row was left behind");

    // 200 characters is fine, and the task shows its keys.
    let key = "k".repeat(200);
    call(
        &server,
        "PUT",
        "/rate-limits/ok",
        json!({ "limit": 1, "period_seconds": 1 }),
    )
    .await;
    let (got, made) = call(
        &server,
        "POST",
        "/tasks",
        task(json!({ "concurrency_key": key, "rate_limit_key": "ok" })),
    )
    .await;
    assert_eq!(got, StatusCode::CREATED, "{made}");
    assert_eq!(made["data"]["concurrency_key"], json!(key));
    assert_eq!(made["data"]["rate_limit_key"], json!("ok"));
    assert_eq!(made["data"]["limit_waiting_at"], Value::Null);

    // The long poll's wait is 0 to 30 seconds.
    let agent = super::agents(&server.admin(), "v", 1).await[0];
    for wait in [json!(31), json!(-1), json!("soon")] {
        let (got, answer) = call(
            &server,
            "POST",
            "/tasks/claim",
            json!({ "agent_id": agent, "wait_seconds": wait }),
        )
        .await;
        assert_eq!(
            got,
            StatusCode::UNPROCESSABLE_ENTITY,
            "wait {wait}: {answer}"
        );
    }
}
