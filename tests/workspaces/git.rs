//! Git access checks: verification against a real bare repository, and the token sent in a header, never in the URL.

use super::*;

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
