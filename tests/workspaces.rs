//! Workspaces end to end: create, list filters and pagination, get, patch,
//! memory with its cap, spec versions, files, artifacts, git verification and
//! the timeline.

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

/// Rows left in the blob tables (files' bytes).
async fn stored_chunks(server: &TestServer) -> i64 {
    let url = server.database_url();
    if url.starts_with("postgres") {
        let pool = sqlx::PgPool::connect(&url).await.unwrap();
        let (n,): (i64,) = sqlx::query_as(
            "SELECT (SELECT COUNT(*) FROM blob_chunks) + (SELECT COUNT(*) FROM blobs)",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        pool.close().await;
        n
    } else {
        let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
        let (n,): (i64,) = sqlx::query_as(
            "SELECT (SELECT COUNT(*) FROM blob_chunks) + (SELECT COUNT(*) FROM blobs)",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        pool.close().await;
        n
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
async fn files_round_trip_byte_for_byte() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let ws = admin
        .workspaces()
        .create(&workspace("Files"))
        .await
        .unwrap();
    // Binary, every byte value, and longer than several storage chunks.
    let binary: Vec<u8> = (0..900_000u32)
        .map(|i| (i.wrapping_mul(31) % 256) as u8)
        .collect();
    let file = admin
        .workspaces()
        .upload_file(
            ws.id,
            &FileUpload {
                description: Some("a blob".into()),
                ..item("Blob Data.bin", &binary)
            },
        )
        .await
        .unwrap();
    assert_eq!(file.key, "blob-data.bin");
    assert_eq!(file.size_bytes, binary.len() as i64);
    assert_eq!(file.content_type, "application/octet-stream");
    assert_eq!(file.preview_mode, "download");

    let response = server
        .http()
        .get(server.at(&file.download_url))
        .header(AUTHORIZATION, format!("Bearer {}", server.admin_key))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let headers = response.headers().clone();
    assert_eq!(headers["content-type"], "application/octet-stream");
    assert_eq!(headers["content-length"], binary.len().to_string().as_str());
    assert_eq!(headers["etag"], format!("\"{}\"", file.checksum).as_str());
    assert!(
        headers["content-disposition"]
            .to_str()
            .unwrap()
            .contains("filename=\"Blob Data.bin\"")
    );
    let body = response.bytes().await.unwrap();
    assert!(body.as_ref() == binary.as_slice(), "bytes differ");
    let etag = headers["etag"].to_str().unwrap().to_owned();
    let cached = server
        .http()
        .get(server.at(&file.download_url))
        .header(AUTHORIZATION, format!("Bearer {}", server.admin_key))
        .header("if-none-match", etag)
        .send()
        .await
        .unwrap();
    assert_eq!(cached.status(), StatusCode::NOT_MODIFIED);

    // Batch: keys derived from names, a text file, a refused batch writes nothing.
    let batch = admin
        .workspaces()
        .upload_files(
            ws.id,
            &BatchUpload {
                files: vec![
                    item("Design Notes.md", b"# notes\n"),
                    FileUpload {
                        key: Some("custom/key".into()),
                        ..item("data.json", b"{\"a\":1}")
                    },
                ],
                request_id: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(batch[0].key, "design-notes.md");
    assert_eq!(batch[0].content_type, "text/markdown");
    assert_eq!(batch[0].preview_mode, "text");
    assert_eq!(batch[1].key, "custom/key");
    let text = admin
        .workspaces()
        .download_file(ws.id, batch[0].id)
        .await
        .unwrap();
    assert_eq!(text.bytes, b"# notes\n");
    assert_eq!(text.content_type.as_deref(), Some("text/markdown"));

    let too_many = BatchUpload {
        files: (0..11).map(|i| item(&format!("f{i}.txt"), b"x")).collect(),
        request_id: None,
    };
    assert_eq!(
        admin
            .workspaces()
            .upload_files(ws.id, &too_many)
            .await
            .unwrap_err()
            .status(),
        Some(400)
    );
    let clash = BatchUpload {
        files: vec![item("A.txt", b"1"), item("a.txt", b"2")],
        request_id: None,
    };
    assert_eq!(
        admin
            .workspaces()
            .upload_files(ws.id, &clash)
            .await
            .unwrap_err()
            .status(),
        Some(400)
    );
    let bad = FileUpload {
        content_base64: "not base64!".into(),
        ..item("x.txt", b"")
    };
    let error = admin
        .workspaces()
        .upload_file(ws.id, &bad)
        .await
        .unwrap_err();
    assert_eq!(error.status(), Some(400));
    let big = vec![7u8; 10 * 1024 * 1024 + 1];
    let error = admin
        .workspaces()
        .upload_file(ws.id, &item("big.bin", &big))
        .await
        .unwrap_err();
    assert_eq!(error.status(), Some(400), "over 10 MiB decoded");
    assert!(
        error
            .to_string()
            .contains("`big.bin` is 10.0 MiB; files may be up to 10 MiB each"),
        "the message names the file and the limit: {error}"
    );
    let listed = admin
        .workspaces()
        .files(ws.id, PageRequest::default())
        .await
        .unwrap();
    assert_eq!(listed.total, 3);

    // Same key: new content, same id, old bytes gone.
    let replaced = admin
        .workspaces()
        .upload_file(ws.id, &item("Design Notes.md", b"# v2\n"))
        .await
        .unwrap();
    assert_eq!(replaced.id, batch[0].id);
    assert_eq!(
        admin
            .workspaces()
            .download_file(ws.id, replaced.id)
            .await
            .unwrap()
            .bytes,
        b"# v2\n"
    );
    assert_eq!(
        admin
            .workspaces()
            .files(ws.id, PageRequest::default())
            .await
            .unwrap()
            .total,
        3
    );

    // Deleting every file leaves no bytes behind.
    for f in admin
        .workspaces()
        .files(ws.id, PageRequest::default())
        .await
        .unwrap()
        .items
    {
        admin.workspaces().delete_file(ws.id, f.id).await.unwrap();
    }
    assert_eq!(
        admin
            .workspaces()
            .download_file(ws.id, file.id)
            .await
            .unwrap_err()
            .status(),
        Some(404)
    );
    assert_eq!(stored_chunks(&server).await, 0);
}

#[tokio::test]
async fn artifact_filters_and_pages() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let ws = admin
        .workspaces()
        .create(&workspace("Artifacts"))
        .await
        .unwrap();
    let other = admin
        .workspaces()
        .create(&workspace("Elsewhere"))
        .await
        .unwrap();
    let (wf1, wf2, task, item_id) = (
        uuid::Uuid::new_v4(),
        uuid::Uuid::new_v4(),
        uuid::Uuid::new_v4(),
        uuid::Uuid::new_v4(),
    );
    let upload = |name: &str, bytes: &[u8], wf, stage: &str, role: &str| UploadArtifact {
        file_name: name.to_owned(),
        content_base64: STANDARD.encode(bytes),
        workflow_id: Some(wf),
        stage_name: Some(stage.to_owned()),
        role: Some(role.to_owned()),
        ..Default::default()
    };
    let report = admin
        .workspaces()
        .upload_artifact(
            ws.id,
            &UploadArtifact {
                task_id: Some(task),
                work_item_id: Some(item_id),
                description: Some("final report".into()),
                ..upload("report.md", b"# report", wf1, "review", "reviewer")
            },
        )
        .await
        .unwrap();
    assert_eq!(report.preview_mode, "text");
    assert_eq!(
        report.download_url,
        format!("/api/v1/artifacts/{}/content", report.id)
    );
    admin
        .workspaces()
        .upload_artifact(
            ws.id,
            &upload(
                "diagram.png",
                &[0x89, b'P', b'N', b'G'],
                wf1,
                "design",
                "architect",
            ),
        )
        .await
        .unwrap();
    admin
        .workspaces()
        .upload_artifact(
            ws.id,
            &upload("build.tar", &[0u8; 2048], wf2, "implement", "developer"),
        )
        .await
        .unwrap();
    admin
        .workspaces()
        .upload_artifact(
            ws.id,
            &upload("notes.txt", b"n", wf2, "implement", "developer"),
        )
        .await
        .unwrap();
    admin
        .workspaces()
        .upload_artifact(
            other.id,
            &upload("foreign.txt", b"f", wf1, "review", "reviewer"),
        )
        .await
        .unwrap();

    let list = |filter: ArtifactFilter| {
        let admin = admin.clone();
        let id = ws.id;
        async move {
            admin
                .workspaces()
                .artifacts(id, &filter, PageRequest::default())
                .await
                .unwrap()
        }
    };
    let names =
        |page: &orchestrator_client::api::Page<orchestrator_client::api::workspaces::Artifact>| {
            page.items
                .iter()
                .map(|a| a.file_name.clone())
                .collect::<Vec<_>>()
        };
    let all = list(ArtifactFilter::default()).await;
    assert_eq!(
        names(&all),
        vec!["notes.txt", "build.tar", "diagram.png", "report.md"],
        "newest first, this workspace only"
    );
    assert_eq!(
        list(ArtifactFilter {
            workflow_id: Some(wf1),
            ..Default::default()
        })
        .await
        .total,
        2
    );
    assert_eq!(
        names(
            &list(ArtifactFilter {
                task_id: Some(task),
                ..Default::default()
            })
            .await
        ),
        vec!["report.md"]
    );
    assert_eq!(
        names(
            &list(ArtifactFilter {
                work_item_id: Some(item_id),
                ..Default::default()
            })
            .await
        ),
        vec!["report.md"]
    );
    assert_eq!(
        list(ArtifactFilter {
            stage_name: Some("implement".into()),
            ..Default::default()
        })
        .await
        .total,
        2
    );
    assert_eq!(
        names(
            &list(ArtifactFilter {
                role: Some("architect".into()),
                ..Default::default()
            })
            .await
        ),
        vec!["diagram.png"]
    );
    assert_eq!(
        names(
            &list(ArtifactFilter {
                content_type: Some("image/*".into()),
                ..Default::default()
            })
            .await
        ),
        vec!["diagram.png"]
    );
    assert_eq!(
        names(
            &list(ArtifactFilter {
                content_type: Some("text/markdown".into()),
                ..Default::default()
            })
            .await
        ),
        vec!["report.md"]
    );
    assert_eq!(
        list(ArtifactFilter {
            preview_mode: Some("download".into()),
            ..Default::default()
        })
        .await
        .total,
        1
    );
    assert_eq!(
        names(
            &list(ArtifactFilter {
                q: Some("FINAL".into()),
                ..Default::default()
            })
            .await
        ),
        vec!["report.md"]
    );
    assert_eq!(
        names(
            &list(ArtifactFilter {
                sort: Some("-size_bytes".into()),
                ..Default::default()
            })
            .await
        ),
        vec!["build.tar", "report.md", "diagram.png", "notes.txt"]
    );
    assert_eq!(
        names(
            &list(ArtifactFilter {
                sort: Some("file_name".into()),
                ..Default::default()
            })
            .await
        ),
        vec!["build.tar", "diagram.png", "notes.txt", "report.md"]
    );
    let future =
        orchestrator_client::api::Timestamp::now().plus(std::time::Duration::from_secs(3600));
    assert_eq!(
        list(ArtifactFilter {
            created_from: Some(future),
            ..Default::default()
        })
        .await
        .total,
        0
    );
    assert_eq!(
        list(ArtifactFilter {
            created_to: Some(future),
            created_from: Some(report.created_at),
            ..Default::default()
        })
        .await
        .total,
        4
    );
    let page2 = admin
        .workspaces()
        .artifacts(ws.id, &ArtifactFilter::default(), PageRequest::new(2, 3))
        .await
        .unwrap();
    assert_eq!((page2.total, page2.items.len()), (4, 1));
    assert_eq!(page2.items[0].file_name, "report.md");

    // Bad filters are 400s, over raw HTTP too.
    for query in [
        "sort=bogus",
        "preview_mode=video",
        "workflow_id=nope",
        "created_from=yesterday",
    ] {
        let response = server
            .http()
            .get(server.at(&format!("/api/v1/workspaces/{}/artifacts?{query}", ws.id)))
            .header(AUTHORIZATION, format!("Bearer {}", server.admin_key))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{query}");
    }
    let content = admin
        .workspaces()
        .download_artifact(report.id)
        .await
        .unwrap();
    assert_eq!(content.bytes, b"# report");
    assert_eq!(content.etag, Some(format!("\"{}\"", report.checksum)));
}

/// A bare repository with branches `trunk` (HEAD) and `feature`.
fn bare_repository(dir: &std::path::Path) -> String {
    let run = |args: &[&str], cwd: &std::path::Path| {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(cwd)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .unwrap();
        assert!(
            status.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&status.stderr)
        );
    };
    run(&["init", "-q", "--bare", "-b", "trunk", "repo.git"], dir);
    run(&["init", "-q", "-b", "trunk", "work"], dir);
    let work = dir.join("work");
    run(&["commit", "-q", "--allow-empty", "-m", "first"], &work);
    let remote = dir.join("repo.git");
    let remote = remote.to_str().unwrap();
    run(
        &["push", "-q", remote, "trunk:trunk", "trunk:feature"],
        &work,
    );
    format!("file://{remote}")
}

#[tokio::test]
async fn git_access_is_really_checked() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let ws = admin.workspaces().create(&workspace("Git")).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = bare_repository(dir.path());
    let verify = |url: &str, branch: Option<&str>, mode: GitTokenMode, token: Option<&str>| {
        VerifyGitAccess {
            repository_url: url.to_owned(),
            default_branch: branch.map(str::to_owned),
            git_token_mode: mode,
            git_token: token.map(str::to_owned),
            request_id: None,
        }
    };

    let packet = admin
        .workspaces()
        .verify_git_access(
            ws.id,
            &verify(&url, None, GitTokenMode::Replace, Some("tok-123")),
        )
        .await
        .unwrap();
    assert!(packet.reachable);
    assert!(packet.branch_found);
    assert_eq!(packet.remote_head.as_deref(), Some("trunk"));
    assert_eq!(packet.default_branch.as_deref(), Some("trunk"));
    assert_eq!(packet.branch_count, 2);
    assert!(packet.used_token);
    let stored = admin.workspaces().get(ws.id).await.unwrap();
    assert_eq!(stored.repository_url.as_deref(), Some(url.as_str()));
    assert_eq!(stored.default_branch.as_deref(), Some("trunk"));
    assert!(stored.git_token_configured);

    let packet = admin
        .workspaces()
        .verify_git_access(
            ws.id,
            &verify(&url, Some("feature"), GitTokenMode::Preserve, None),
        )
        .await
        .unwrap();
    assert!(packet.used_token, "preserve uses the stored token");
    assert!(
        admin
            .workspaces()
            .get(ws.id)
            .await
            .unwrap()
            .git_token_configured
    );

    // A missing branch: reachable, but verification fails and nothing is stored.
    let error = admin
        .workspaces()
        .verify_git_access(
            ws.id,
            &verify(&url, Some("nope"), GitTokenMode::Clear, None),
        )
        .await
        .unwrap_err();
    assert_eq!(error.status(), Some(400));
    assert_eq!(error.code(), Some(ErrorCode::VerificationFailed));
    if let orchestrator_client::Error::Api { error, .. } = &error {
        let details = error.details.clone().unwrap();
        assert_eq!(details["reachable"], true);
        assert_eq!(details["failed_step"], "branch");
    }
    let unchanged = admin.workspaces().get(ws.id).await.unwrap();
    assert_eq!(unchanged.default_branch.as_deref(), Some("feature"));
    assert!(
        unchanged.git_token_configured,
        "a failed check clears nothing"
    );

    // A closed port: unreachable, with the reason, quickly.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let closed = format!("http://127.0.0.1:{port}/x.git");
    let error = admin
        .workspaces()
        .verify_git_access(
            ws.id,
            &verify(&closed, None, GitTokenMode::Replace, Some("s3cret-token")),
        )
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(ErrorCode::VerificationFailed));
    if let orchestrator_client::Error::Api { error, .. } = &error {
        let details = error.details.clone().unwrap();
        assert_eq!(details["reachable"], false);
        assert_eq!(details["failed_step"], "connect");
        assert!(
            details["reason"].as_str().unwrap().contains("127.0.0.1"),
            "{details}"
        );
        assert!(!details.to_string().contains("s3cret-token"));
    }

    // Mode rules.
    let error = admin
        .workspaces()
        .verify_git_access(ws.id, &verify(&url, None, GitTokenMode::Replace, None))
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(ErrorCode::ValidationError));
    let error = admin
        .workspaces()
        .verify_git_access(
            ws.id,
            &verify(
                "https://user:pw@example.com/r.git",
                None,
                GitTokenMode::Clear,
                None,
            ),
        )
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(ErrorCode::ValidationError));

    let cleared = admin
        .workspaces()
        .verify_git_access(ws.id, &verify(&url, None, GitTokenMode::Clear, None))
        .await
        .unwrap();
    assert!(!cleared.used_token);
    assert!(
        !admin
            .workspaces()
            .get(ws.id)
            .await
            .unwrap()
            .git_token_configured
    );
}

#[tokio::test]
async fn upload_bodies_over_16_mib_are_refused() {
    let server = TestServer::start().await;
    let ws = server
        .admin()
        .workspaces()
        .create(&workspace("Limits"))
        .await
        .unwrap();
    let body = format!(
        "{{\"file_name\":\"x\",\"content_base64\":\"{}\"}}",
        "A".repeat(17 * 1024 * 1024)
    );
    let response = server
        .http()
        .post(server.at(&format!("/api/v1/workspaces/{}/files", ws.id)))
        .header(AUTHORIZATION, format!("Bearer {}", server.admin_key))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let value: Value = response.json().await.unwrap();
    assert_eq!(value["error"]["code"], "PAYLOAD_TOO_LARGE");
    assert_eq!(
        value["error"]["message"],
        "the request is larger than 16 MiB (files may be up to 10 MiB each, 16 MiB per request)"
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

#[tokio::test]
async fn the_git_token_travels_in_a_header_not_the_url() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = TestServer::start().await;
    let admin = server.admin();
    let ws = admin
        .workspaces()
        .create(&workspace("Header"))
        .await
        .unwrap();
    // A fake smart-HTTP server that records the first request and refuses it.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let recorded = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buffer = vec![0u8; 8192];
        let mut request = Vec::new();
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = socket.read(&mut buffer).await.unwrap();
            if n == 0 {
                break;
            }
            request.extend_from_slice(&buffer[..n]);
        }
        socket
            .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        String::from_utf8_lossy(&request).into_owned()
    });
    let error = admin
        .workspaces()
        .verify_git_access(
            ws.id,
            &VerifyGitAccess {
                repository_url: format!("http://127.0.0.1:{port}/team/repo.git"),
                default_branch: None,
                git_token_mode: GitTokenMode::Replace,
                git_token: Some("tok-in-header".into()),
                request_id: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(ErrorCode::VerificationFailed));
    let request = recorded.await.unwrap();
    let request_line = request.lines().next().unwrap();
    assert!(
        request_line.starts_with("GET /team/repo.git/info/refs?service=git-upload-pack"),
        "{request_line}"
    );
    assert!(!request_line.contains("tok-in-header"));
    let expected = format!("Basic {}", STANDARD.encode("x-access-token:tok-in-header"));
    assert!(
        request
            .lines()
            .any(|l| l.to_ascii_lowercase().starts_with("authorization:") && l.contains(&expected)),
        "{request}"
    );
    assert!(
        !admin
            .workspaces()
            .get(ws.id)
            .await
            .unwrap()
            .git_token_configured,
        "a failed check stores no token"
    );
}
