//! Tenant isolation: a second tenant's admin key, aimed at every route with
//! the first tenant's ids, finds nothing and changes nothing.

use crate::hostile::{fill, real_id, streams};
use crate::raw::send;
use orchestrator_client::api::CreateTenant;
use orchestrator_tests::TestServer;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use uuid::Uuid;

/// What tenant A can read of its world, to compare before and after.
async fn snapshot(server: &TestServer, world: &crate::fixtures::World) -> Vec<Value> {
    let mut out = Vec::new();
    for path in [
        format!("/api/v1/tasks/{}", world.task),
        format!("/api/v1/workflows/{}/work-items", world.workflow),
        format!("/api/v1/workspaces/{}", world.workspace),
        format!("/api/v1/playbooks/{}", world.playbook),
        format!("/api/v1/agents/{}", world.agent),
        format!("/api/v1/workers/{}", world.worker),
        "/api/v1/tasks".to_owned(),
        "/api/v1/workflows".to_owned(),
    ] {
        let (status, mut body) = crate::raw::get(server, &path).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        body["meta"] = Value::Null;
        out.push(body);
    }
    out
}

/// Every route with an id, every method, with tenant B's admin key and
/// tenant A's ids: the answer is never a success and is exactly the answer
/// for an id that exists nowhere (404 for every read), so B can neither
/// read, change nor detect A's resources; A's records are unchanged after.
#[tokio::test]
async fn another_tenants_key_finds_nothing_and_changes_nothing() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let world = crate::fixtures::world(&admin).await;
    let before = snapshot(&server, &world).await;
    let other = server
        .service()
        .tenants()
        .create(&CreateTenant {
            name: "Other".into(),
            slug: None,
            request_id: None,
        })
        .await
        .unwrap();
    let key = other.admin_key.api_key.clone();
    let mut probes = 0;
    for (method, path) in orchestrator_server::route_list() {
        // Catalog entries are shared by every tenant; streams never end.
        if !path.contains("{id}") || path.contains("community-catalog") || streams(path) {
            continue;
        }
        let (id, second) = real_id(path, &world);
        let body = (method != Method::GET && method != Method::DELETE).then(|| "{}".to_owned());
        let theirs = send(
            &server,
            method.clone(),
            &fill(path, &id, &second),
            &key,
            body.clone(),
        )
        .await;
        let nowhere = Uuid::new_v4().to_string();
        let missing = send(
            &server,
            method.clone(),
            &fill(path, &nowhere, &nowhere),
            &key,
            body,
        )
        .await;
        probes += 1;
        assert!(
            !theirs.0.is_success(),
            "{method} {path}: {} {}",
            theirs.0,
            theirs.1
        );
        assert_eq!(
            (theirs.0, &theirs.1["error"]["code"]),
            (missing.0, &missing.1["error"]["code"]),
            "{method} {path}: another tenant's id answers unlike a missing one: {}",
            theirs.1
        );
        if method == Method::GET {
            assert_eq!(theirs.0, StatusCode::NOT_FOUND, "{method} {path}");
        }
    }
    assert!(probes > 40, "walked {probes} routes");
    // Lists of tenant B hold nothing of A.
    for list in [
        "/api/v1/tasks",
        "/api/v1/workflows",
        "/api/v1/workspaces",
        "/api/v1/agents",
    ] {
        let (status, body) = send(&server, Method::GET, list, &key, None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            body["data"].as_array().map(Vec::len),
            Some(0),
            "{list}: {body}"
        );
    }
    assert_eq!(
        snapshot(&server, &world).await,
        before,
        "nothing of A changed"
    );
}
