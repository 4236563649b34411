//! The community catalog: list, detail, import preview and import with and
//! without conflicts, provenance, and the `ORCH_CATALOG_DIR` override.

use orchestrator_client::api::catalog::{
    CatalogArtifactType, ImportAction, ImportDecision, ImportRequest,
};
use orchestrator_client::api::playbooks::{CreatePlaybook, PatchPlaybook};
use orchestrator_client::api::{ErrorCode, PageRequest};
use orchestrator_tests::TestServer;
use reqwest::StatusCode;
use reqwest::header::AUTHORIZATION;
use serde_json::json;

#[tokio::test]
async fn list_and_detail_cover_every_category() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let catalog = admin.catalog();
    let entries = catalog.list().await.unwrap();
    assert!(entries.len() >= 6);
    for category in [
        "engineering",
        "operations",
        "research",
        "compliance",
        "content",
    ] {
        assert!(entries.iter().any(|e| e.category == category), "{category}");
    }
    let detail = catalog.get("feature-delivery").await.unwrap();
    assert_eq!(detail.entry.name, "Feature delivery");
    assert!(detail.readme_markdown.starts_with("# Feature delivery"));
    assert_eq!(
        detail.stages,
        vec!["design", "implement", "review", "release"]
    );
    assert!(detail.specialist_ids.contains(&"code-reviewer".to_owned()));
    assert!(!detail.skill_ids.is_empty());
    assert_eq!(
        catalog.get("no-such-entry").await.unwrap_err().status(),
        Some(404)
    );

    // Admin only.
    let agent_key = server
        .admin()
        .api_keys()
        .create(&orchestrator_tests::key_request(
            orchestrator_client::api::Scope::Agent,
            "a",
        ))
        .await
        .unwrap()
        .api_key;
    let denied = server
        .client(&agent_key)
        .catalog()
        .list()
        .await
        .unwrap_err();
    assert_eq!(denied.status(), Some(403));
}

#[tokio::test]
async fn import_without_then_with_conflicts() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let catalog = admin.catalog();

    let preview = catalog.preview("incident-response").await.unwrap();
    assert_eq!(preview.playbook.id, "incident-response");
    assert!(preview.conflicts.iter().all(|c| c.local_match.is_none()));
    assert!(
        preview
            .conflicts
            .iter()
            .all(|c| c.allowed_actions == vec![ImportAction::CreateNew])
    );
    assert_eq!(
        preview.conflicts[0].artifact_type,
        CatalogArtifactType::Playbook
    );

    // No body at all is a plain import.
    let response = server
        .http()
        .post(server.at("/api/v1/community-catalog/playbooks/incident-response/import"))
        .header(AUTHORIZATION, format!("Bearer {}", server.admin_key))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let first: serde_json::Value = response.json().await.unwrap();
    let first = &first["data"];
    assert_eq!(first["playbook"]["name"], "Incident response");
    assert_eq!(first["playbook"]["version"], 1);
    assert_eq!(
        first["provenance"]["source_repository"],
        "bundled:orch-community-catalog"
    );
    assert_eq!(first["imported_specialists"].as_array().unwrap().len(), 2);

    let playbooks = admin
        .playbooks()
        .list(PageRequest::default())
        .await
        .unwrap();
    assert_eq!(playbooks.total, 1);
    let imported = admin.playbooks().get(playbooks.items[0].id).await.unwrap();
    let provenance = imported.provenance.clone().unwrap();
    assert_eq!(provenance.catalog_id.as_deref(), Some("incident-response"));
    assert_eq!(provenance.catalog_version.as_deref(), Some("1.0.0"));
    assert!(imported.definition["catalog_links"]["specialists"]["incident-commander"].is_string());
    let specialists = catalog.specialists(PageRequest::default()).await.unwrap();
    assert_eq!(specialists.total, 2);
    assert!(specialists.items.iter().all(|s| s.provenance.is_some()));
    assert_eq!(
        catalog.skills(PageRequest::default()).await.unwrap().total,
        2
    );

    // The imported copy is an ordinary local playbook.
    let edited = admin
        .playbooks()
        .patch(
            imported.id,
            &PatchPlaybook {
                outcome: Some("ours now".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(edited.version, 2);

    // Now everything collides.
    let preview = catalog.preview("incident-response").await.unwrap();
    assert_eq!(preview.conflicts.len(), 5);
    for conflict in &preview.conflicts {
        let local = conflict.local_match.as_ref().expect("a local match");
        assert_eq!(
            conflict.allowed_actions,
            vec![ImportAction::CreateNew, ImportAction::OverrideExisting]
        );
        if conflict.artifact_type == CatalogArtifactType::Playbook {
            assert_eq!(local.id, imported.family_id);
            assert_eq!(local.version, Some(2));
        }
    }

    // Override the playbook (a new revision) and one specialist; the rest are created new, renamed.
    let second = catalog
        .import(
            "incident-response",
            &ImportRequest {
                decisions: Some(vec![
                    ImportDecision {
                        artifact_type: CatalogArtifactType::Playbook,
                        catalog_id: "incident-response".into(),
                        action: ImportAction::OverrideExisting,
                    },
                    ImportDecision {
                        artifact_type: CatalogArtifactType::Specialist,
                        catalog_id: "incident-commander".into(),
                        action: ImportAction::OverrideExisting,
                    },
                ]),
                request_id: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(second.playbook.version, 3);
    assert_eq!(
        admin
            .playbooks()
            .list(PageRequest::default())
            .await
            .unwrap()
            .total,
        1
    );
    let current = admin.playbooks().get(imported.id).await.unwrap();
    assert_eq!(current.version, 3);
    assert_eq!(
        current.outcome,
        "Impact ended, the cause understood, and follow-up actions owned."
    );
    let commander_first = first["imported_specialists"][0].as_str().unwrap();
    assert_eq!(
        second.imported_specialists[0], commander_first,
        "overridden in place"
    );
    assert_ne!(
        second.imported_specialists[1],
        first["imported_specialists"][1].as_str().unwrap()
    );
    let specialists = catalog.specialists(PageRequest::default()).await.unwrap();
    assert_eq!(specialists.total, 3);
    assert!(
        specialists
            .items
            .iter()
            .any(|s| s.name == "Site reliability engineer (2)"
                && s.slug == "site-reliability-engineer-2")
    );

    // A third import with no decisions makes a renamed copy of the playbook.
    let third = catalog
        .import("incident-response", &ImportRequest::default())
        .await
        .unwrap();
    assert_eq!(third.playbook.name, "Incident response (2)");
    assert_eq!(third.playbook.version, 1);
    assert_eq!(
        admin
            .playbooks()
            .list(PageRequest::default())
            .await
            .unwrap()
            .total,
        2
    );

    // Decisions must name this import's artifacts and fit the match.
    let wrong = catalog
        .import(
            "incident-response",
            &ImportRequest {
                decisions: Some(vec![ImportDecision {
                    artifact_type: CatalogArtifactType::Skill,
                    catalog_id: "write-tests".into(),
                    action: ImportAction::CreateNew,
                }]),
                request_id: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(wrong.code(), Some(ErrorCode::ValidationError));
    let no_match = catalog
        .import(
            "access-review",
            &ImportRequest {
                decisions: Some(vec![ImportDecision {
                    artifact_type: CatalogArtifactType::Playbook,
                    catalog_id: "access-review".into(),
                    action: ImportAction::OverrideExisting,
                }]),
                request_id: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(no_match.status(), Some(400));
    assert_eq!(
        admin
            .playbooks()
            .list(PageRequest::default())
            .await
            .unwrap()
            .total,
        2,
        "refused imports write nothing"
    );

    // A local playbook with the catalog's name is a conflict too.
    admin
        .playbooks()
        .create(&CreatePlaybook {
            name: "Blog post pipeline".into(),
            outcome: "x".into(),
            definition: json!({"stages": [{"name": "write"}]}),
            slug: Some("my-blog".into()),
            description: None,
            lifecycle: None,
            request_id: None,
        })
        .await
        .unwrap();
    let preview = catalog.preview("blog-post-pipeline").await.unwrap();
    assert_eq!(
        preview.conflicts[0].local_match.as_ref().unwrap().name,
        "Blog post pipeline"
    );
}

#[tokio::test]
async fn a_catalog_directory_replaces_the_bundled_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("playbooks/tiny")).unwrap();
    std::fs::create_dir_all(root.join("specialists")).unwrap();
    std::fs::create_dir_all(root.join("skills")).unwrap();
    std::fs::write(
        root.join("catalog.json"),
        r#"{"source_repository": "https://example.com/our-catalog", "catalog_version": "7"}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("playbooks/tiny/playbook.json"),
        json!({
            "id": "tiny", "name": "Tiny", "summary": "one stage", "category": "operations",
            "stability": "experimental", "version": "0.1.0", "outcome": "done",
            "definition": {"stages": [{"name": "do"}], "roles": [{"name": "doer"}]},
            "specialist_ids": ["doer"], "skill_ids": ["doing"]
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(root.join("playbooks/tiny/README.md"), "# Tiny\n").unwrap();
    std::fs::write(
        root.join("specialists/doer.json"),
        r#"{"id": "doer", "name": "Doer", "description": "does"}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("skills/doing.json"),
        r#"{"id": "doing", "name": "Doing"}"#,
    )
    .unwrap();
    let path = root.to_path_buf();
    let server = TestServer::start_with(move |config| config.core.catalog_dir = Some(path)).await;
    let admin = server.admin();
    let catalog = admin.catalog();
    let entries = catalog.list().await.unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].id, "tiny");
    assert_eq!(
        catalog.get("tiny").await.unwrap().readme_markdown,
        "# Tiny\n"
    );
    let result = catalog
        .import("tiny", &ImportRequest::default())
        .await
        .unwrap();
    assert_eq!(
        result.provenance.source_repository,
        "https://example.com/our-catalog"
    );
    assert_eq!(result.provenance.catalog_version, "7");
    assert_eq!(
        catalog.get("feature-delivery").await.unwrap_err().status(),
        Some(404)
    );
}
