//! Workspace artifacts: every filter and page of the artifact list.

use super::*;

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
