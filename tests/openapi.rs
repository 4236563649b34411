//! The generated OpenAPI document (`GET /api/v1/openapi.json`) and its
//! reference page (`GET /api/docs`), against a real server on SQLite and
//! PostgreSQL.
//!
//! - the served document equals the committed `docs/openapi.json`, so every
//!   API change shows in review (regenerate with `ORCH_UPDATE_OPENAPI=1
//!   cargo nextest run --test openapi`);
//! - every route of the route table is in the document with its method and a
//!   real description, so a new route cannot land undocumented;
//! - the document says what the code does for a few routes of each kind.
//!
//! `.ci/openapi.sh` runs `openapi-spec-validator` and `schemathesis` on it.

use orchestrator_tests::TestServer;
use serde_json::Value;
use std::path::PathBuf;

fn committed_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/openapi.json")
}

async fn served(server: &TestServer) -> (reqwest::header::HeaderMap, Value) {
    let response = server
        .http()
        .get(server.at("/api/v1/openapi.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let headers = response.headers().clone();
    (headers, response.json().await.unwrap())
}

/// The OpenAPI path of a route-table path (`{*path}` is `{path}`).
fn openapi_path(path: &str) -> String {
    path.replace("{*", "{")
}

fn operation<'a>(doc: &'a Value, method: &str, path: &str) -> &'a Value {
    let op = &doc["paths"][path][method];
    assert!(op.is_object(), "{method} {path} is not in the document");
    op
}

/// Follows a `#/components/schemas/...` reference.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let name = r.strip_prefix("#/components/schemas/").unwrap();
            &doc["components"]["schemas"][name]
        }
        None => schema,
    }
}

#[tokio::test]
async fn served_document_matches_the_committed_copy() {
    let server = TestServer::start().await;
    let text = server
        .http()
        .get(server.at("/api/v1/openapi.json"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let path = committed_path();
    if std::env::var("ORCH_UPDATE_OPENAPI").as_deref() == Ok("1") {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    let served: Value = serde_json::from_str(&text).unwrap();
    let on_disk: Value = serde_json::from_str(&committed).unwrap_or(Value::Null);
    assert!(
        served == on_disk,
        "docs/openapi.json differs from the document the server generates. The API changed: \
         regenerate the file with `ORCH_UPDATE_OPENAPI=1 cargo nextest run --test openapi \
         served_document_matches_the_committed_copy` and commit it with the change."
    );
}

#[tokio::test]
async fn every_route_of_the_table_is_documented() {
    let server = TestServer::start().await;
    let (headers, doc) = served(&server).await;
    assert_eq!(
        headers["content-type"].to_str().unwrap(),
        "application/json"
    );
    assert_eq!(doc["openapi"], "3.1.0");
    let routes = orchestrator_server::route_list();
    assert!(
        routes.len() > 100,
        "the route table has {} routes",
        routes.len()
    );
    let mut undocumented = Vec::new();
    let mut count = 0;
    for (method, path) in &routes {
        let method = method.as_str().to_ascii_lowercase();
        let op = &doc["paths"][openapi_path(path)][&method];
        if !op.is_object() || op.get("x-undocumented").is_some() || !op["summary"].is_string() {
            undocumented.push(format!("{} {path}", method.to_uppercase()));
        }
        count += 1;
    }
    assert!(
        undocumented.is_empty(),
        "routes without a description in orchestrator-server/src/openapi.rs (docs()): {undocumented:?}"
    );
    // Nothing in the document that the table does not serve.
    let documented: usize = doc["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|item| item.as_object().unwrap().len())
        .sum();
    assert_eq!(
        documented, count,
        "the document lists operations the table does not serve"
    );
}

#[tokio::test]
async fn the_document_says_what_the_routes_do() {
    let server = TestServer::start().await;
    let (_, doc) = served(&server).await;

    // A strict request body: required fields, closed, with its enums.
    let create = operation(&doc, "post", "/api/v1/tasks");
    assert_eq!(create["security"][0]["bearerAuth"][0], "agent");
    assert_eq!(create["security"][1]["cookieSession"][0], "agent");
    let body = resolve(
        &doc,
        &create["requestBody"]["content"]["application/json"]["schema"],
    );
    assert_eq!(body["additionalProperties"], false, "{body}");
    assert!(body["required"].as_array().is_some_and(|r| !r.is_empty()));
    assert_eq!(create["requestBody"]["required"], true);
    let created = &create["responses"]["201"]["content"]["application/json"]["schema"];
    assert_eq!(created["required"], serde_json::json!(["data", "meta"]));
    for status in ["400", "401", "403", "409", "413", "422", "429"] {
        let reference = create["responses"][status]["$ref"].as_str().unwrap();
        let name = reference.strip_prefix("#/components/responses/").unwrap();
        let error = &doc["components"]["responses"][name]["content"]["application/json"]["schema"];
        assert_eq!(
            error["$ref"], "#/components/schemas/ErrorEnvelope",
            "{status} of POST /api/v1/tasks"
        );
    }
    let code = &doc["components"]["schemas"]["ErrorCode"];
    assert!(
        code.to_string().contains("SCHEMA_VALIDATION_FAILED"),
        "{code}"
    );

    // A page list with its query filters, enums included.
    let list = operation(&doc, "get", "/api/v1/tasks");
    let meta =
        &list["responses"]["200"]["content"]["application/json"]["schema"]["properties"]["meta"];
    let meta = resolve(&doc, meta);
    for field in [
        "total",
        "page",
        "per_page",
        "pages",
        "request_id",
        "timestamp",
    ] {
        assert!(
            meta["properties"][field].is_object(),
            "meta.{field}: {meta}"
        );
    }
    let params = list["parameters"].as_array().unwrap();
    let state = params.iter().find(|p| p["name"] == "state").unwrap();
    assert_eq!(state["in"], "query");
    assert!(
        state["schema"].to_string().contains("in_progress"),
        "{state}"
    );

    // Claims answer 204 when there is nothing to claim.
    for path in [
        "/api/v1/tasks/claim",
        "/api/v1/acp/claim",
        "/api/v1/workers/{id}/next",
    ] {
        assert!(
            operation(&doc, "post", path)["responses"]["204"].is_object(),
            "{path}"
        );
    }
    // Streams are server-sent events; downloads are bytes.
    let stream = operation(&doc, "get", "/api/v1/events/stream");
    assert!(stream["responses"]["200"]["content"]["text/event-stream"].is_object());
    let download = operation(&doc, "get", "/api/v1/artifacts/{id}/content");
    assert!(download["responses"]["200"]["content"]["application/octet-stream"].is_object());
    // Path parameters, and the scope of an admin route.
    let revoke = operation(&doc, "delete", "/api/v1/api-keys/{id}");
    assert_eq!(revoke["parameters"][0]["in"], "path");
    assert_eq!(revoke["parameters"][0]["schema"]["format"], "uuid");
    assert_eq!(revoke["x-scope"], "admin");
    // Public routes need no credential.
    assert_eq!(
        operation(&doc, "get", "/api/v1/openapi.json")["security"],
        serde_json::json!([])
    );
    // The worker channel's websocket upgrade is described on its path.
    assert_eq!(
        operation(&doc, "get", "/api/v1/events")["x-websocket-upgrade"]["scope"],
        "worker"
    );
}

#[tokio::test]
async fn the_reference_page_is_served_from_the_binary() {
    let server = TestServer::start().await;
    let page = server
        .http()
        .get(server.at("/api/docs"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert!(
        page.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.contains("script-src 'self'"), "{csp}");
    let html = page.text().await.unwrap();
    for asset in ["/api/docs/docs.js", "/api/docs/docs.css"] {
        assert!(html.contains(asset), "{asset} not in the page");
        let response = server.http().get(server.at(asset)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{asset}");
        let body = response.text().await.unwrap();
        // Works offline: nothing is loaded from another origin.
        assert!(
            !body.contains("https://") && !body.contains("http://"),
            "{asset} reaches out"
        );
    }
    assert!(!html.contains("https://") && !html.contains("http://"));
    let missing = server
        .http()
        .get(server.at("/api/docs/nothing.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    let envelope: Value = missing.json().await.unwrap();
    assert_eq!(envelope["error"]["code"], "NOT_FOUND");
}
