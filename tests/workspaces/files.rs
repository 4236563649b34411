//! Workspace files: byte-for-byte round trips, chunk cleanup and the upload body limit.

use super::*;

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
