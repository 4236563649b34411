//! Workspaces end to end: create, list filters and pagination, get, patch,
//! memory with its cap, spec versions, files, artifacts, git verification and
//! the timeline.

mod artifacts;
mod files;
mod git;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use orchestrator_client::api::workspaces::{
    ArtifactFilter, BatchUpload, CreateWorkspace, FileUpload, GitTokenMode, PatchWorkspace,
    PutWorkspaceSpec, UploadArtifact, VerifyGitAccess, WorkspaceFilter,
};
use orchestrator_client::api::{ErrorCode, PageRequest};
use orchestrator_tests::TestServer;
use reqwest::StatusCode;
use reqwest::header::AUTHORIZATION;
use serde_json::{Value, json};

fn workspace(name: &str) -> CreateWorkspace {
    CreateWorkspace {
        name: name.to_owned(),
        description: Some(format!("{name} workspace")),
        ..Default::default()
    }
}

fn item(name: &str, bytes: &[u8]) -> FileUpload {
    FileUpload {
        file_name: name.to_owned(),
        content_base64: STANDARD.encode(bytes),
        ..Default::default()
    }
}

#[tokio::test]
async fn create_list_get_patch() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let alpha = admin
        .workspaces()
        .create(&CreateWorkspace {
            repository_url: Some("https://example.com/acme/alpha.git".into()),
            settings: Some(json!({"storage": {"type": "git"}})),
            memory: Some(json!({"goal": "ship"})),
            git_token: Some("secret-token".into()),
            ..workspace("Alpha")
        })
        .await
        .unwrap();
    assert_eq!(alpha.slug, "alpha");
    assert!(alpha.is_active);
    assert!(alpha.git_token_configured);
    assert_eq!(alpha.settings["storage"]["type"], "git");
    assert_eq!(alpha.summary.workflow_count, 0);
    for name in ["Beta", "Gamma"] {
        admin.workspaces().create(&workspace(name)).await.unwrap();
    }
    let duplicate = admin
        .workspaces()
        .create(&workspace("Alpha"))
        .await
        .unwrap_err();
    assert_eq!(duplicate.code(), Some(ErrorCode::Conflict));

    // The token never comes back, in any form.
    let raw = server
        .http()
        .get(server.at(&format!("/api/v1/workspaces/{}", alpha.id)))
        .header(AUTHORIZATION, format!("Bearer {}", server.admin_key))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!raw.contains("secret-token"), "{raw}");

    let all = admin
        .workspaces()
        .list(&WorkspaceFilter::default(), PageRequest::new(1, 2))
        .await
        .unwrap();
    assert_eq!(all.total, 3);
    assert_eq!(all.items.len(), 2);
    assert_eq!(all.items[0].name, "Gamma", "newest first");
    let found = admin
        .workspaces()
        .list(
            &WorkspaceFilter {
                q: Some("ALP".into()),
                is_active: None,
            },
            PageRequest::default(),
        )
        .await
        .unwrap();
    assert_eq!(found.total, 1);
    assert_eq!(found.items[0].id, alpha.id);

    let empty = admin
        .workspaces()
        .patch(alpha.id, &PatchWorkspace::default())
        .await
        .unwrap_err();
    assert_eq!(empty.status(), Some(400));
    assert_eq!(empty.code(), Some(ErrorCode::ValidationError));

    let patched = admin
        .workspaces()
        .patch(
            alpha.id,
            &PatchWorkspace {
                is_active: Some(false),
                description: Some("paused".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(!patched.is_active);
    assert_eq!(patched.description, "paused");
    assert_eq!(patched.memory, json!({"goal": "ship"}));
    let inactive = admin
        .workspaces()
        .list(
            &WorkspaceFilter {
                q: None,
                is_active: Some(false),
            },
            PageRequest::default(),
        )
        .await
        .unwrap();
    assert_eq!(inactive.total, 1);
    let got = admin.workspaces().get(alpha.id).await.unwrap();
    assert_eq!(got, patched);
    let missing = admin
        .workspaces()
        .get(uuid::Uuid::new_v4())
        .await
        .unwrap_err();
    assert_eq!(missing.status(), Some(404));
}

#[tokio::test]
async fn memory_set_delete_and_cap() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let ws = admin
        .workspaces()
        .create(&workspace("Memory"))
        .await
        .unwrap();
    let set = admin
        .workspaces()
        .set_memory(ws.id, "plan", json!({"steps": [1, 2]}))
        .await
        .unwrap();
    assert_eq!(set.memory, json!({"plan": {"steps": [1, 2]}}));
    let set = admin
        .workspaces()
        .set_memory(ws.id, "a key/with slash", json!("v"))
        .await
        .unwrap();
    assert_eq!(set.memory["a key/with slash"], "v");
    let deleted = admin
        .workspaces()
        .delete_memory(ws.id, "a key/with slash")
        .await
        .unwrap();
    assert_eq!(deleted.memory, json!({"plan": {"steps": [1, 2]}}));

    // Two values of 600 KiB each: the second crosses the 1 MiB cap.
    let big = "x".repeat(600 * 1024);
    admin
        .workspaces()
        .set_memory(ws.id, "big1", json!(big))
        .await
        .unwrap();
    let over = admin
        .workspaces()
        .set_memory(ws.id, "big2", json!(big))
        .await
        .unwrap_err();
    assert_eq!(over.status(), Some(400));
    let after = admin.workspaces().get(ws.id).await.unwrap();
    assert!(
        after.memory.get("big2").is_none(),
        "a refused write stores nothing"
    );
    assert!(after.memory.get("big1").is_some());
}

#[tokio::test]
async fn spec_versions_and_timeline() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let ws = admin.workspaces().create(&workspace("Spec")).await.unwrap();
    let empty = admin.workspaces().spec(ws.id, None).await.unwrap();
    assert_eq!(empty.version, 0);
    assert_eq!(empty.resources, json!({}));
    let v1 = admin
        .workspaces()
        .put_spec(
            ws.id,
            &PutWorkspaceSpec {
                instructions: Some(json!({"text": "be brief"})),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(v1.version, 1);
    let v2 = admin
        .workspaces()
        .put_spec(
            ws.id,
            &PutWorkspaceSpec {
                tools: Some(json!({"git": true})),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(v2.version, 2);
    assert_eq!(v2.instructions, json!({}), "PUT replaces the whole spec");
    let latest = admin.workspaces().spec(ws.id, None).await.unwrap();
    assert_eq!(latest, v2);
    let old = admin.workspaces().spec(ws.id, Some(1)).await.unwrap();
    assert_eq!(old.instructions, json!({"text": "be brief"}));
    assert_eq!(
        admin
            .workspaces()
            .spec(ws.id, Some(9))
            .await
            .unwrap_err()
            .status(),
        Some(404)
    );
    let bad = admin
        .workspaces()
        .put_spec(
            ws.id,
            &PutWorkspaceSpec {
                config: Some(json!([1])),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(bad.status(), Some(422), "a type fault is a schema error");

    admin
        .workspaces()
        .set_memory(ws.id, "k", json!(1))
        .await
        .unwrap();
    let timeline = admin
        .workspaces()
        .timeline(ws.id, PageRequest::default())
        .await
        .unwrap();
    let types: Vec<&str> = timeline
        .items
        .iter()
        .map(|e| e.event_type.as_str())
        .collect();
    assert_eq!(
        types,
        vec![
            "workspace.memory_set",
            "workspace.spec_updated",
            "workspace.spec_updated",
            "workspace.created"
        ]
    );
    assert!(timeline.items.iter().all(|e| e.workspace_id == Some(ws.id)));
    // Another workspace's timeline does not see these.
    let other = admin
        .workspaces()
        .create(&workspace("Other"))
        .await
        .unwrap();
    assert_eq!(
        admin
            .workspaces()
            .timeline(other.id, PageRequest::default())
            .await
            .unwrap()
            .total,
        1
    );
}

#[tokio::test]
async fn other_tenants_see_nothing_and_request_ids_replay() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let ws = admin
        .workspaces()
        .create(&CreateWorkspace {
            request_id: Some("ws-1".into()),
            ..workspace("Mine")
        })
        .await
        .unwrap();
    let replay = admin
        .workspaces()
        .create(&CreateWorkspace {
            request_id: Some("ws-1".into()),
            ..workspace("Mine")
        })
        .await
        .unwrap();
    assert_eq!(
        replay.id, ws.id,
        "the same request_id answers the same workspace"
    );
    let file = admin
        .workspaces()
        .upload_file(ws.id, &item("a.txt", b"secret"))
        .await
        .unwrap();
    let artifact = admin
        .workspaces()
        .upload_artifact(
            ws.id,
            &UploadArtifact {
                file_name: "r.txt".into(),
                content_base64: STANDARD.encode(b"r"),
                ..Default::default()
            },
        )
        .await
        .unwrap();

    let other = server
        .service()
        .tenants()
        .create(&orchestrator_client::api::CreateTenant {
            name: "Other".into(),
            slug: None,
            request_id: None,
        })
        .await
        .unwrap();
    let stranger = server.client(&other.admin_key.api_key);
    assert_eq!(
        stranger.workspaces().get(ws.id).await.unwrap_err().status(),
        Some(404)
    );
    assert_eq!(
        stranger
            .workspaces()
            .download_file(ws.id, file.id)
            .await
            .unwrap_err()
            .status(),
        Some(404)
    );
    assert_eq!(
        stranger
            .workspaces()
            .download_artifact(artifact.id)
            .await
            .unwrap_err()
            .status(),
        Some(404)
    );
    assert_eq!(
        stranger
            .workspaces()
            .artifacts(ws.id, &ArtifactFilter::default(), PageRequest::default())
            .await
            .unwrap_err()
            .status(),
        Some(404)
    );
    assert_eq!(
        stranger
            .workspaces()
            .list(&WorkspaceFilter::default(), PageRequest::default())
            .await
            .unwrap()
            .total,
        0
    );
    // The same slug is free in another tenant.
    stranger
        .workspaces()
        .create(&workspace("Mine"))
        .await
        .unwrap();
}
