//! Execution environments end to end: create (camelCase requests, snake_case
//! records), list filters and pagination, patch, delete (409 while a task
//! names it), the bundled and replaced catalog, verification with the host
//! probe and without any runtime, the support posture, tasks naming an
//! environment, every 422, and scopes.

use orchestrator_client::api::environments::{
    CompatibilityStatus, CreateExecutionEnvironment, CreateFromCatalog, EnvironmentFilter,
    PatchExecutionEnvironment, PullPolicy, SourceKind, SupportStatus,
};
use orchestrator_client::api::{CreateTask, ErrorCode, EventFilter, PageRequest, Scope};
use orchestrator_tests::{TestServer, key_request};
use reqwest::StatusCode;
use reqwest::header::AUTHORIZATION;
use serde_json::{Value, json};

const BASE: &str = "/api/v1/execution-environments";

fn environment(name: &str) -> CreateExecutionEnvironment {
    CreateExecutionEnvironment {
        name: name.to_owned(),
        image: "debian:bookworm-slim".into(),
        ..Default::default()
    }
}

async fn send(
    server: &TestServer,
    method: reqwest::Method,
    path: &str,
    key: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut request = server
        .http()
        .request(method, server.at(path))
        .header(AUTHORIZATION, format!("Bearer {key}"));
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn post(server: &TestServer, path: &str, body: Value) -> (StatusCode, Value) {
    send(
        server,
        reqwest::Method::POST,
        path,
        &server.admin_key,
        Some(body),
    )
    .await
}

fn host_probe(config: &mut orchestrator_server::config::ServerConfig) {
    config.core.host_probe = true;
}

#[tokio::test]
async fn create_echoes_camel_case_and_lists_gets_patches_deletes() {
    let server = TestServer::start().await;
    let (status, body) = post(
        &server,
        BASE,
        json!({
            "name": "Builder", "description": "CI image", "image": "debian:bookworm-slim",
            "cpu": "2", "memory": "4Gi", "pullPolicy": "always",
            "bootstrapCommands": ["apt-get update"], "bootstrapRequiredDomains": ["deb.debian.org"],
            "operatorNotes": "owned by infra",
        }),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let record = &body["data"];
    for (field, value) in [
        ("name", json!("Builder")),
        ("description", json!("CI image")),
        ("source_kind", json!("custom")),
        ("catalog_key", Value::Null),
        ("catalog_version", Value::Null),
        ("image", json!("debian:bookworm-slim")),
        ("cpu", json!("2")),
        ("memory", json!("4Gi")),
        ("pull_policy", json!("always")),
        ("compatibility_status", json!("unknown")),
        ("compatibility_errors", json!([])),
        ("support_status", Value::Null),
        ("verification_contract_version", Value::Null),
        ("bootstrap_commands", json!(["apt-get update"])),
        ("bootstrap_required_domains", json!(["deb.debian.org"])),
        ("operator_notes", json!("owned by infra")),
    ] {
        assert_eq!(record[field], value, "{field} in {record}");
    }
    assert!(
        record["agent_hint"]
            .as_str()
            .unwrap()
            .contains("not verified")
    );
    assert!(record["verified_metadata"].is_object() && record["tool_capabilities"].is_object());
    assert!(record["created_at"].is_string() && record["updated_at"].is_string());

    let admin = server.admin();
    let envs = admin.environments();
    let created = envs
        .get(record["id"].as_str().unwrap().parse().unwrap())
        .await
        .unwrap();
    assert_eq!(created.pull_policy, PullPolicy::Always);
    let small = envs.create(&environment("Small")).await.unwrap();
    assert_eq!((small.cpu.as_str(), small.memory.as_str()), ("1", "1g"));
    assert_eq!(small.pull_policy, PullPolicy::IfNotPresent);
    let duplicate = envs.create(&environment("Small")).await.unwrap_err();
    assert_eq!(duplicate.code(), Some(ErrorCode::Conflict));

    let page = envs
        .list(&EnvironmentFilter::default(), PageRequest::new(1, 1))
        .await
        .unwrap();
    assert_eq!((page.total, page.items.len()), (2, 1));
    assert_eq!(page.items[0].name, "Small", "newest first");
    let found = envs
        .list(
            &EnvironmentFilter {
                q: Some("ci IMA".into()),
                ..Default::default()
            },
            PageRequest::default(),
        )
        .await
        .unwrap();
    assert_eq!(found.items.len(), 1);
    assert_eq!(found.items[0].id, created.id);
    let unknown = envs
        .list(
            &EnvironmentFilter {
                compatibility_status: Some(CompatibilityStatus::Unknown),
                support_status: Some("none".into()),
                ..Default::default()
            },
            PageRequest::default(),
        )
        .await
        .unwrap();
    assert_eq!(unknown.total, 2);
    let (status, body) = send(
        &server,
        reqwest::Method::GET,
        &format!("{BASE}?support_status=maybe"),
        &server.admin_key,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    let patched = envs
        .patch(
            small.id,
            &PatchExecutionEnvironment {
                operator_notes: Some("for quick jobs".into()),
                memory: Some("512m".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(patched.operator_notes, "for quick jobs");
    assert_eq!(patched.memory, "512m");
    let empty = envs
        .patch(small.id, &PatchExecutionEnvironment::default())
        .await
        .unwrap_err();
    assert_eq!(empty.code(), Some(ErrorCode::ValidationError));

    let deleted = envs.delete(small.id).await.unwrap();
    assert_eq!(deleted.id, small.id);
    assert_eq!(
        envs.get(small.id).await.unwrap_err().code(),
        Some(ErrorCode::NotFound)
    );
    let events = admin
        .events()
        .list(&EventFilter {
            entity_type: Some("execution_environment".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let types: Vec<&str> = events.items.iter().map(|e| e.event_type.as_str()).collect();
    for expected in [
        "execution_environment.created",
        "execution_environment.updated",
        "execution_environment.deleted",
    ] {
        assert!(types.contains(&expected), "{types:?}");
    }
}

#[tokio::test]
async fn bad_bodies_are_422_with_field_errors_and_rules_400_changing_nothing() {
    let server = TestServer::start().await;
    let cases = [
        (
            BASE.to_owned(),
            json!({"name": 7, "image": "x", "pullPolicy": "sometimes", "bogus": 1, "bootstrapCommands": "ls"}),
            vec!["bogus", "bootstrapCommands", "name", "pullPolicy"],
        ),
        (
            BASE.to_owned(),
            json!({"name": "n", "pull_policy": "always", "image": "x"}),
            vec!["pull_policy"],
        ),
        (BASE.to_owned(), json!({"name": "n"}), vec!["image"]),
        (
            format!("{BASE}/from-catalog"),
            json!({"catalogKey": "python", "catalogVersion": "2"}),
            vec!["catalogVersion"],
        ),
        (
            format!("{BASE}/from-catalog"),
            json!({"catalog_key": "python"}),
            vec!["catalogKey", "catalog_key"],
        ),
    ];
    for (path, body, fields) in cases {
        let (status, answer) = post(&server, &path, body.clone()).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body} -> {answer}"
        );
        assert_eq!(answer["error"]["code"], "SCHEMA_VALIDATION_FAILED");
        let mut names: Vec<&str> = answer["error"]["details"]["issues"]["fieldErrors"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        names.sort();
        assert_eq!(names, fields, "{body} -> {answer}");
    }
    for (body, field) in [
        (json!({"name": "n", "image": "x", "cpu": "lots"}), "cpu"),
        (json!({"name": "n", "image": "x", "memory": "1k"}), "memory"),
        (json!({"name": " ", "image": "x"}), "name"),
        (json!({"name": "n", "image": "a b"}), "image"),
        (
            json!({"name": "n", "image": "x", "bootstrapRequiredDomains": ["a.example; rm -rf /"]}),
            "bootstrapRequiredDomains",
        ),
    ] {
        let (status, answer) = post(&server, BASE, body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body} -> {answer}");
        assert!(
            answer["error"]["details"]["issues"]["fieldErrors"][field].is_array(),
            "{answer}"
        );
    }
    let id = server
        .admin()
        .environments()
        .create(&environment("Kept"))
        .await
        .unwrap()
        .id;
    let (status, answer) = send(
        &server,
        reqwest::Method::PATCH,
        &format!("{BASE}/{id}"),
        &server.admin_key,
        Some(json!({"image": 3, "operatorNotes": []})),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    let (status, answer) = post(
        &server,
        &format!("{BASE}/{id}/support"),
        json!({"supportStatus": "maybe"}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    assert!(answer["error"]["details"]["issues"]["fieldErrors"]["supportStatus"].is_array());
    let all = server
        .admin()
        .environments()
        .list(&EnvironmentFilter::default(), PageRequest::default())
        .await
        .unwrap();
    assert_eq!(all.total, 1, "failed requests created nothing");
    assert_eq!(all.items[0].image, "debian:bookworm-slim");
    assert_eq!(all.items[0].support_status, None);
}

#[tokio::test]
async fn from_catalog_uses_the_bundled_versions_and_answers_404_for_unknown_ones() {
    let server = TestServer::start().await;
    let envs = server.admin();
    let envs = envs.environments();
    let catalog = envs.catalog().await.unwrap();
    let keys: Vec<&str> = catalog.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(keys, ["debian-shell", "node", "python", "rust"]);
    let python = envs
        .from_catalog(&CreateFromCatalog {
            catalog_key: "python".into(),
            catalog_version: Some(1),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(python.source_kind, SourceKind::Catalog);
    assert_eq!(python.catalog_key.as_deref(), Some("python"));
    assert_eq!(python.catalog_version, Some(1));
    assert_eq!(python.name, "Python");
    assert!(python.image.starts_with("python:"));
    assert!(!python.bootstrap_commands.is_empty());
    assert_eq!(
        python.tool_capabilities["declared"],
        json!(["python3", "pip"])
    );
    assert!(
        python.agent_hint.contains("python3"),
        "{}",
        python.agent_hint
    );
    let rust = envs
        .from_catalog(&CreateFromCatalog {
            catalog_key: "rust".into(),
            name: Some("Rust builds".into()),
            description: Some("ours".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        (rust.name.as_str(), rust.description.as_str()),
        ("Rust builds", "ours")
    );
    for (key, version) in [("cobol", None), ("python", Some(2))] {
        let missing = envs
            .from_catalog(&CreateFromCatalog {
                catalog_key: key.into(),
                catalog_version: version,
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(
            missing.code(),
            Some(ErrorCode::NotFound),
            "{key} {version:?}"
        );
    }
}

#[tokio::test]
async fn a_catalog_directory_replaces_the_bundled_catalog() {
    let dir = tempfile::tempdir().unwrap();
    for version in [1, 2] {
        std::fs::write(
            dir.path().join(format!("tiny.v{version}.json")),
            json!({
                "key": "tiny", "version": version, "name": format!("Tiny {version}"),
                "image": format!("busybox:{version}"), "cpu": "0.5", "memory": "64m",
                "tools": ["sh", "orch-surely-missing-tool"],
            })
            .to_string(),
        )
        .unwrap();
    }
    let path = dir.path().to_owned();
    let server = TestServer::start_with(move |config| {
        config.core.env_catalog_dir = Some(path);
        config.core.host_probe = true;
    })
    .await;
    let admin = server.admin();
    let envs = admin.environments();
    assert_eq!(envs.catalog().await.unwrap().len(), 2);
    let newest = envs
        .from_catalog(&CreateFromCatalog {
            catalog_key: "tiny".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        (newest.catalog_version, newest.image.as_str()),
        (Some(2), "busybox:2")
    );
    let bundled = envs
        .from_catalog(&CreateFromCatalog {
            catalog_key: "python".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(bundled.code(), Some(ErrorCode::NotFound));
    // A declared tool the probe does not find makes the environment incompatible.
    let verdict = envs.verify(newest.id).await.unwrap();
    assert_eq!(
        verdict.compatibility_status,
        CompatibilityStatus::Incompatible
    );
    assert!(
        verdict
            .compatibility_errors
            .contains(&"declared tool not found: orch-surely-missing-tool".to_owned()),
        "{:?}",
        verdict.compatibility_errors
    );
}

#[tokio::test]
async fn the_host_probe_verifies_and_stores_the_verdict() {
    let server = TestServer::start_with(host_probe).await;
    let admin = server.admin();
    let envs = admin.environments();
    let reachable = server.at("/healthz");
    let good = envs
        .create(&CreateExecutionEnvironment {
            bootstrap_required_domains: Some(vec![reachable.clone()]),
            ..environment("Local")
        })
        .await
        .unwrap();
    let (status, body) = post(&server, &format!("{BASE}/{}/verify", good.id), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let data = &body["data"];
    assert_eq!(data["compatibility_status"], "compatible", "{data}");
    assert_eq!(data["compatibility_errors"], json!([]));
    assert_eq!(data["verification_contract_version"], "orch-probe/1");
    assert_eq!(data["verified_metadata"]["probe"], "host");
    assert_eq!(
        data["verified_metadata"]["domains_reachable"][&reachable],
        true
    );
    assert!(data["verified_metadata"]["shell"].is_string());
    let commands = data["tool_capabilities"]["commands"].as_array().unwrap();
    for command in ["sh", "git", "tar"] {
        assert!(commands.contains(&json!(command)), "{commands:?}");
    }
    assert!(
        data["probe_output"]
            .as_str()
            .unwrap()
            .contains("orch-probe=1")
    );

    let stored = envs.get(good.id).await.unwrap();
    assert_eq!(stored.compatibility_status, CompatibilityStatus::Compatible);
    assert_eq!(stored.verified_metadata["probe"], "host");
    assert!(
        stored.agent_hint.contains("compatible"),
        "{}",
        stored.agent_hint
    );
    assert!(stored.agent_hint.contains("git"), "{}", stored.agent_hint);
    let compatible = envs
        .list(
            &EnvironmentFilter {
                compatibility_status: Some(CompatibilityStatus::Compatible),
                ..Default::default()
            },
            PageRequest::default(),
        )
        .await
        .unwrap();
    assert_eq!(compatible.total, 1);

    // An unreachable required domain: incompatible, named.
    let bad = envs
        .create(&CreateExecutionEnvironment {
            bootstrap_required_domains: Some(vec!["http://127.0.0.1:1".into()]),
            ..environment("Offline")
        })
        .await
        .unwrap();
    let verdict = envs.verify(bad.id).await.unwrap();
    assert_eq!(
        verdict.compatibility_status,
        CompatibilityStatus::Incompatible
    );
    assert_eq!(
        verdict.compatibility_errors,
        ["required domain not reachable: http://127.0.0.1:1"]
    );
    // Editing what the verdict was about sets it back to unknown.
    let edited = envs
        .patch(
            good.id,
            &PatchExecutionEnvironment {
                image: Some("debian:trixie-slim".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(edited.compatibility_status, CompatibilityStatus::Unknown);
    assert_eq!(edited.verification_contract_version, None);
    let events = admin
        .events()
        .list(&EventFilter {
            event_type: Some("execution_environment.verified".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(events.items.len(), 2);
}

#[tokio::test]
async fn without_a_runtime_or_with_a_broken_one_the_verdict_is_incompatible() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("docker");
    std::fs::write(
        &broken,
        "#!/bin/sh\necho 'Cannot connect to the container daemon' >&2\nexit 125\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&broken, std::fs::Permissions::from_mode(0o755)).unwrap();
    for (runtime, expected) in [
        ("orch-no-such-runtime".to_owned(), "no container runtime"),
        (
            broken.display().to_string(),
            "the container did not start (exit 125): Cannot connect to the container daemon",
        ),
    ] {
        let server = TestServer::start_with(move |config| {
            config.core.container_runtimes = vec![runtime];
        })
        .await;
        let envs = server.admin();
        let envs = envs.environments();
        let id = envs.create(&environment("Remote")).await.unwrap().id;
        let (status, body) = post(&server, &format!("{BASE}/{id}/verify"), json!({})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["data"]["compatibility_status"], "incompatible");
        let errors = body["data"]["compatibility_errors"].as_array().unwrap();
        assert!(errors[0].as_str().unwrap().contains(expected), "{errors:?}");
        let stored = envs.get(id).await.unwrap();
        assert_eq!(
            stored.compatibility_status,
            CompatibilityStatus::Incompatible
        );
    }
}

#[tokio::test]
async fn tasks_name_an_environment_unless_it_is_blocked_and_keep_it_from_deletion() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let envs = admin.environments();
    let env = envs.create(&environment("Runner")).await.unwrap();
    let task = admin
        .tasks()
        .create(&CreateTask {
            title: "Build".into(),
            task_type: "code".into(),
            execution_environment_id: Some(env.id),
            ..Default::default()
        })
        .await
        .unwrap();
    let shown = task.execution_environment.expect("environment shown");
    assert_eq!(shown["id"], json!(env.id));
    assert_eq!(shown["name"], "Runner");
    assert_eq!(shown["image"], "debian:bookworm-slim");
    let read = admin.tasks().get(task.id).await.unwrap();
    assert_eq!(read.execution_environment.unwrap()["name"], "Runner");
    let plain = admin
        .tasks()
        .create(&CreateTask {
            title: "Plain".into(),
            task_type: "code".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(plain.execution_environment, None);

    let in_use = envs.delete(env.id).await.unwrap_err();
    assert_eq!(in_use.code(), Some(ErrorCode::Conflict));

    let blocked = envs
        .set_support(env.id, Some(SupportStatus::Blocked))
        .await
        .unwrap();
    assert_eq!(blocked.support_status, Some(SupportStatus::Blocked));
    for id in [env.id, uuid::Uuid::new_v4()] {
        let refused = admin
            .tasks()
            .create(&CreateTask {
                title: "Refused".into(),
                task_type: "code".into(),
                execution_environment_id: Some(id),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Some(ErrorCode::ValidationError));
        assert!(
            refused
                .field_errors()
                .unwrap()
                .contains_key("execution_environment_id")
        );
    }
    let approved = envs
        .set_support(env.id, Some(SupportStatus::Approved))
        .await
        .unwrap();
    assert_eq!(approved.support_status, Some(SupportStatus::Approved));
    let cleared = envs.set_support(env.id, None).await.unwrap();
    assert_eq!(cleared.support_status, None);
}

#[tokio::test]
async fn agent_and_worker_keys_are_refused() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let id = admin
        .environments()
        .create(&environment("Guarded"))
        .await
        .unwrap()
        .id;
    for scope in [Scope::Agent, Scope::Worker] {
        let key = admin
            .api_keys()
            .create(&key_request(scope, "low"))
            .await
            .unwrap()
            .api_key;
        use reqwest::Method as M;
        for (method, path) in [
            (M::POST, BASE.to_owned()),
            (M::GET, BASE.to_owned()),
            (M::GET, format!("{BASE}/catalog")),
            (M::POST, format!("{BASE}/from-catalog")),
            (M::GET, format!("{BASE}/{id}")),
            (M::PATCH, format!("{BASE}/{id}")),
            (M::DELETE, format!("{BASE}/{id}")),
            (M::POST, format!("{BASE}/{id}/verify")),
            (M::POST, format!("{BASE}/{id}/support")),
        ] {
            let (status, _) = send(&server, method.clone(), &path, &key, Some(json!({}))).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{scope:?} {method} {path}");
        }
    }
}

#[tokio::test]
async fn concurrent_creates_of_one_name_leave_one_environment() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let request = environment("Same");
    let results = futures_util::future::join_all((0..8).map(|_| {
        let admin = admin.clone();
        let request = request.clone();
        async move { admin.environments().create(&request).await }
    }))
    .await;
    let created = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(created, 1, "{results:?}");
    assert!(
        results
            .iter()
            .filter_map(|r| r.as_ref().err())
            .all(|e| e.code() == Some(ErrorCode::Conflict))
    );
    let all = admin
        .environments()
        .list(&EnvironmentFilter::default(), PageRequest::default())
        .await
        .unwrap();
    assert_eq!(all.total, 1);
}
