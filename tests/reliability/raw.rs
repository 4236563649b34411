//! Raw HTTP for what the SDK cannot send (hostile bodies, odd methods).

use orchestrator_tests::TestServer;
use reqwest::{Method, StatusCode};
use serde_json::Value;

/// Sends `body` (raw text, JSON content type) with `key`; the status and the
/// JSON answer (`Null` when the answer is not JSON).
pub async fn send(
    server: &TestServer,
    method: Method,
    path: &str,
    key: &str,
    body: Option<String>,
) -> (StatusCode, Value) {
    let mut request = server
        .http()
        .request(method, server.at(path))
        .bearer_auth(key);
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let bytes = response.bytes().await.unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// `POST path` with a raw JSON body and the admin key.
pub async fn post(server: &TestServer, path: &str, body: &str) -> (StatusCode, Value) {
    send(
        server,
        Method::POST,
        path,
        &server.admin_key,
        Some(body.to_owned()),
    )
    .await
}

/// `GET path` with the admin key.
pub async fn get(server: &TestServer, path: &str) -> (StatusCode, Value) {
    send(server, Method::GET, path, &server.admin_key, None).await
}

/// The field errors of an error answer, by name.
pub fn field_errors(body: &Value) -> Vec<String> {
    body["error"]["details"]["issues"]["fieldErrors"]
        .as_object()
        .map(|fields| fields.keys().cloned().collect())
        .unwrap_or_default()
}

/// Asserts an error answer of `status` and `code` naming `field`.
#[track_caller]
pub fn assert_field_error(
    answer: &(StatusCode, Value),
    status: StatusCode,
    code: &str,
    field: &str,
) {
    let (got, body) = answer;
    assert_eq!(*got, status, "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    assert!(
        field_errors(body).iter().any(|f| f == field),
        "expected a field error on `{field}`: {body}"
    );
}
