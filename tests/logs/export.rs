//! Log export: CSV and JSON streamed with download headers.

use super::*;

#[tokio::test]
async fn export_streams_csv_and_json_with_download_headers() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let mut entries: Vec<NewLogEntry> = (0..2500)
        .map(|i| entry(LogCategory::Tool, &format!("export.{i}")))
        .collect();
    entries[0].payload = Some(json!({"text": "comma, \"quote\"\nnewline"}));
    for chunk in entries.chunks(1000) {
        admin.logs().ingest(chunk.to_vec()).await.unwrap();
    }
    admin
        .logs()
        .ingest(vec![entry(LogCategory::Llm, "other")])
        .await
        .unwrap();

    let http = server.http();
    let response = http
        .get(server.at("/api/v1/logs/export?format=csv&order=asc&category=tool"))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/csv")
    );
    let disposition = response.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .to_owned();
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    assert_eq!(
        disposition,
        format!("attachment; filename=logs-{today}.csv")
    );
    let body = response.bytes().await.unwrap();
    let mut reader = csv::Reader::from_reader(&body[..]);
    let headers = reader.headers().unwrap().clone();
    assert_eq!(&headers[0], "id");
    assert_eq!(&headers[8], "operation");
    let records: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(records.len(), 2500);
    assert_eq!(&records[0][8], "export.0");
    assert_eq!(&records[2499][8], "export.2499");
    let payload: Value = serde_json::from_str(&records[0][11]).unwrap();
    assert_eq!(payload["text"], "comma, \"quote\"\nnewline");

    let response = http
        .get(server.at("/api/v1/logs/export?format=json&order=desc"))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(
        response.headers()["content-disposition"].to_str().unwrap(),
        format!("attachment; filename=logs-{today}.json")
    );
    let rows: Vec<Value> = response.json().await.unwrap();
    assert_eq!(rows.len(), 2501);
    assert_eq!(rows[0]["operation"], "other");
    assert_eq!(rows[2500]["operation"], "export.0");

    // Through the SDK, as chunks.
    use futures_util::StreamExt;
    let mut chunks = admin
        .logs()
        .export(
            &LogFilter {
                category: Some(LogCategory::Llm),
                ..Default::default()
            },
            ExportFormat::Json,
            SortOrder::Asc,
        )
        .await
        .unwrap();
    let mut bytes = Vec::new();
    while let Some(chunk) = chunks.next().await {
        bytes.extend_from_slice(&chunk.unwrap());
    }
    let rows: Vec<Value> = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(rows.len(), 1);

    // Export is an admin route.
    let agent = admin
        .api_keys()
        .create(&key_request(Scope::Agent, "a"))
        .await
        .unwrap();
    let response = http
        .get(server.at("/api/v1/logs/export"))
        .bearer_auth(&agent.api_key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
}
