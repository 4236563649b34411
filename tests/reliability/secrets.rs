//! Secrets go only where they were given for: a stored git token is bound to
//! its host, and the server contacts no private address on a tenant's word.

use crate::raw::{assert_field_error, post};
use orchestrator_client::api::workspaces::{CreateWorkspace, PatchWorkspace};
use orchestrator_tests::TestServer;
use reqwest::StatusCode;
use serde_json::json;

/// `preserve` with a repository on another host is refused (the stored
/// token would be sent there), as is moving the repository to another host
/// by `PATCH` while the token is kept; the same host is fine.
#[tokio::test]
async fn a_stored_git_token_stays_with_its_host() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let ws = admin
        .workspaces()
        .create(&CreateWorkspace {
            name: "git".into(),
            repository_url: Some("https://git.example.com/team/repo.git".into()),
            git_token: Some("tok-secret".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(ws.git_token_configured);
    let verify = format!("/api/v1/workspaces/{}/verify-git-access", ws.id);
    let body = json!({
        "repository_url": "https://attacker.example.net/x.git",
        "git_token_mode": "preserve",
    });
    let answer = post(&server, &verify, &body.to_string()).await;
    assert_field_error(
        &answer,
        StatusCode::BAD_REQUEST,
        "VALIDATION_ERROR",
        "git_token_mode",
    );
    assert!(!answer.1.to_string().contains("tok-secret"));
    let error = admin
        .workspaces()
        .patch(
            ws.id,
            &PatchWorkspace {
                repository_url: Some("https://attacker.example.net/x.git".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(error.status(), Some(400));
    let same_host = admin
        .workspaces()
        .patch(
            ws.id,
            &PatchWorkspace {
                repository_url: Some("https://git.example.com/team/other.git".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        same_host.repository_url.as_deref(),
        Some("https://git.example.com/team/other.git")
    );
    assert!(same_host.git_token_configured);
    // The same host on another port or scheme is another place: refused;
    // the default port spelled out is the same place.
    for elsewhere in [
        "https://git.example.com:8443/team/repo.git",
        "http://git.example.com/team/repo.git",
        "ssh://git@git.example.com/team/repo.git",
    ] {
        let body = json!({ "repository_url": elsewhere, "git_token_mode": "preserve" });
        let answer = post(&server, &verify, &body.to_string()).await;
        assert_field_error(
            &answer,
            StatusCode::BAD_REQUEST,
            "VALIDATION_ERROR",
            "git_token_mode",
        );
    }
    let explicit = admin
        .workspaces()
        .patch(
            ws.id,
            &PatchWorkspace {
                repository_url: Some("https://git.example.com:443/team/other.git".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(explicit.git_token_configured);
    // Another host with `clear` is a real check (which fails here: the host
    // does not exist), never a validation refusal.
    let body = json!({
        "repository_url": "https://attacker.example.invalid/x.git",
        "git_token_mode": "clear",
    });
    let (status, body) = post(&server, &verify, &body.to_string()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"]["code"], "VERIFICATION_FAILED", "{body}");
}

/// Without `ORCH_ALLOW_PRIVATE_NETWORK`, verify-git-access refuses local
/// paths and loopback, private and link-local addresses before contacting
/// anything, and stores nothing.
#[tokio::test]
async fn private_addresses_are_refused_unless_allowed() {
    let server = TestServer::start_with(|config| config.core.allow_private_network = false).await;
    let admin = server.admin();
    let ws = admin
        .workspaces()
        .create(&CreateWorkspace {
            name: "git".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let verify = format!("/api/v1/workspaces/{}/verify-git-access", ws.id);
    for url in [
        "file:///etc/passwd",
        "http://127.0.0.1:9/x.git",
        "http://localhost:9/x.git",
        "https://10.1.2.3/x.git",
        "https://192.168.0.1/x.git",
        "http://169.254.169.254/latest/meta-data",
        "https://[::1]/x.git",
        "git@127.0.0.1:team/repo.git",
    ] {
        let body = json!({ "repository_url": url, "git_token_mode": "clear" });
        let answer = post(&server, &verify, &body.to_string()).await;
        assert_field_error(
            &answer,
            StatusCode::BAD_REQUEST,
            "VALIDATION_ERROR",
            "repository_url",
        );
    }
    let stored = admin.workspaces().get(ws.id).await.unwrap();
    assert_eq!(stored.repository_url, None);
}
