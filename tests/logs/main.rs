//! Logs end to end: ingest validation, every filter, cursor pages under
//! concurrent inserts, summary detail, get, export, stats, the dropdown
//! helpers and the platform's own auth rows.

mod export;
mod filters;
mod platform;

use orchestrator_client::api::{
    ExportFormat, LogCategory, LogFilter, LogGroupBy, LogLevel, LogQuery, LogSource, LogStatus,
    NewLogEntry, Scope, SortOrder,
};
use orchestrator_tests::{TestServer, key_request};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::HashSet;
use uuid::Uuid;

fn entry(category: LogCategory, operation: &str) -> NewLogEntry {
    NewLogEntry::new(category, operation)
}

async fn all_ids(server: &TestServer, filter: LogFilter) -> Vec<String> {
    let page = server
        .admin()
        .logs()
        .query(&LogQuery {
            filter,
            per_page: Some(500),
            ..Default::default()
        })
        .await
        .unwrap();
    page.items.into_iter().map(|r| r.id).collect()
}

#[tokio::test]
async fn ingest_validates_every_entry_and_writes_all_or_nothing() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let worker_key = admin
        .api_keys()
        .create(&key_request(Scope::Worker, "runtime"))
        .await
        .unwrap();
    let worker = server.client(&worker_key.api_key);
    let workflow = Uuid::new_v4();

    let mut first = entry(LogCategory::Llm, "llm.chat");
    first.workflow_id = Some(workflow);
    first.payload = Some(json!({"model": "m1", "tokens": 12}));
    first.duration_ms = Some(340);
    let ingested = worker
        .logs()
        .ingest(vec![first, entry(LogCategory::Tool, "tool.call")])
        .await
        .unwrap();
    assert_eq!(ingested.inserted, 2);

    // Defaults: source runtime, level info, the actor is the caller's key.
    let rows = admin
        .logs()
        .query(&LogQuery::default())
        .await
        .unwrap()
        .items;
    let llm = rows.iter().find(|r| r.operation == "llm.chat").unwrap();
    assert_eq!(llm.source, LogSource::Runtime);
    assert_eq!(llm.level, LogLevel::Info);
    assert_eq!(llm.actor_type.as_deref(), Some("worker"));
    assert_eq!(llm.actor_id, Some(worker_key.key.id.to_string()));
    assert_eq!(llm.workflow_id, Some(workflow));
    assert_eq!(llm.payload, Some(json!({"model": "m1", "tokens": 12})));
    assert_eq!(llm.duration_ms, Some(340));

    // A bad enum in one entry: 422 naming the entry, and nothing written.
    let http = server.http();
    let response = http
        .post(server.at("/api/v1/logs/ingest"))
        .bearer_auth(&worker_key.api_key)
        .json(&json!({"entries": [
            {"category": "tool", "operation": "ok.one"},
            {"category": "tool", "operation": "bad.one", "level": "loud"}
        ]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "SCHEMA_VALIDATION_FAILED");
    assert!(
        body.to_string().contains("entries"),
        "the error names the entries: {body}"
    );

    // A rule broken in one entry (payload not an object, bad UUID elsewhere): 400/422, nothing written.
    let mut bad = entry(LogCategory::Tool, "bad.payload");
    bad.payload = Some(json!([1, 2]));
    let error = worker
        .logs()
        .ingest(vec![entry(LogCategory::Tool, "ok.two"), bad])
        .await
        .unwrap_err();
    assert_eq!(error.status(), Some(400));
    assert!(
        error
            .field_errors()
            .unwrap()
            .contains_key("entries.1.payload")
    );
    let response = http
        .post(server.at("/api/v1/logs/ingest"))
        .bearer_auth(&worker_key.api_key)
        .json(
            &json!({"entries": [{"category": "tool", "operation": "x", "task_id": "not-a-uuid"}]}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);

    // Batch size: 0 and 1001 are refused; 1000 is fine.
    assert_eq!(
        worker.logs().ingest(vec![]).await.unwrap_err().status(),
        Some(400)
    );
    let too_many = vec![entry(LogCategory::Tool, "bulk"); 1001];
    assert_eq!(
        worker.logs().ingest(too_many).await.unwrap_err().status(),
        Some(400)
    );
    let thousand = vec![entry(LogCategory::Tool, "bulk"); 1000];
    assert_eq!(worker.logs().ingest(thousand).await.unwrap().inserted, 1000);
    let runtime_rows = LogFilter {
        source: Some(LogSource::Runtime),
        ..Default::default()
    };
    let stats = admin
        .logs()
        .stats(LogGroupBy::Operation, &runtime_rows)
        .await
        .unwrap();
    assert_eq!(
        stats.total, 1002,
        "nothing of the refused batches was written"
    );

    // Ingest needs worker scope: an agent key is refused.
    let agent_key = admin
        .api_keys()
        .create(&key_request(Scope::Agent, "agent"))
        .await
        .unwrap();
    let refused = server
        .client(&agent_key.api_key)
        .logs()
        .ingest(vec![entry(LogCategory::Tool, "x")])
        .await
        .unwrap_err();
    assert_eq!(refused.status(), Some(403));
}

/// A batch names only the columns its rows fill (`logs::ingest`): rows that
/// fill every field, none of the optional ones, or some, written in one
/// batch, each read back field by field.
#[tokio::test]
async fn one_batch_of_full_bare_and_partial_rows_reads_back_field_by_field() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let id = || Some(Uuid::new_v4());
    let mut full = entry(LogCategory::Tool, "full.row");
    full.trace_id = id();
    full.span_id = id();
    full.parent_span_id = id();
    full.source = Some(LogSource::TaskContainer);
    full.level = Some(LogLevel::Error);
    full.status = Some(LogStatus::Failed);
    full.duration_ms = Some(1234);
    full.payload = Some(json!({"cmd": "cargo test", "n": 3}));
    full.error = Some(json!({"message": "boom"}));
    full.workspace_id = id();
    full.workflow_id = id();
    full.task_id = id();
    full.work_item_id = id();
    full.activation_id = id();
    full.stage_name = Some("stage".into());
    full.is_orchestrator_task = Some(false);
    full.execution_backend = Some("backend".into());
    full.tool_owner = Some("owner".into());
    full.role = Some("role".into());
    full.actor_type = Some("actor-type".into());
    full.actor_id = Some("actor-id".into());
    full.actor_name = Some("actor-name".into());
    full.resource_type = Some("resource-type".into());
    full.resource_id = Some("resource-id".into());
    full.resource_name = Some("resource-name".into());
    let bare = entry(LogCategory::Llm, "bare.row");
    let mut partial = entry(LogCategory::TaskLifecycle, "partial.row");
    partial.duration_ms = Some(7);
    partial.tool_owner = Some("runtime".into());
    partial.task_id = id();
    partial.is_orchestrator_task = Some(true);
    let sent = vec![bare, full, partial];
    let ingested = admin.logs().ingest(sent.clone()).await.unwrap();
    assert_eq!(ingested.inserted, 3);
    let page = admin
        .logs()
        .query(&LogQuery {
            per_page: Some(10),
            ..Default::default()
        })
        .await
        .unwrap();
    let me = admin.auth().me().await.unwrap();
    for e in &sent {
        let row = page
            .items
            .iter()
            .find(|r| r.operation == e.operation)
            .unwrap_or_else(|| panic!("{} was not written", e.operation));
        let row = admin.logs().get(&row.id).await.unwrap().unwrap();
        let at = &e.operation;
        assert_eq!(row.category, e.category, "{at}");
        assert_eq!(row.source, e.source.unwrap_or(LogSource::Runtime), "{at}");
        assert_eq!(row.level, e.level.unwrap_or(LogLevel::Info), "{at}");
        assert_eq!(
            row.payload,
            Some(e.payload.clone().unwrap_or(json!({}))),
            "{at}"
        );
        assert_eq!(
            (row.trace_id, row.span_id, row.parent_span_id),
            (e.trace_id, e.span_id, e.parent_span_id),
            "{at}"
        );
        assert_eq!(
            (row.status, row.duration_ms),
            (e.status, e.duration_ms),
            "{at}"
        );
        assert_eq!(row.error, e.error, "{at}");
        assert_eq!(
            (row.workspace_id, row.workflow_id, row.task_id),
            (e.workspace_id, e.workflow_id, e.task_id),
            "{at}"
        );
        assert_eq!(
            (row.work_item_id, row.activation_id),
            (e.work_item_id, e.activation_id),
            "{at}"
        );
        assert_eq!(
            (
                &row.stage_name,
                row.is_orchestrator_task,
                &row.execution_backend
            ),
            (&e.stage_name, e.is_orchestrator_task, &e.execution_backend),
            "{at}"
        );
        assert_eq!(
            (&row.tool_owner, &row.role),
            (&e.tool_owner, &e.role),
            "{at}"
        );
        // Actor fields left out are the caller's.
        assert_eq!(
            row.actor_type,
            e.actor_type.clone().or(Some(me.owner_type.clone())),
            "{at}"
        );
        assert!(row.actor_id.is_some(), "{at}");
        if e.actor_id.is_some() {
            assert_eq!(row.actor_id, e.actor_id, "{at}");
        }
        assert_eq!(row.actor_name, e.actor_name, "{at}");
        assert_eq!(
            (&row.resource_type, &row.resource_id, &row.resource_name),
            (&e.resource_type, &e.resource_id, &e.resource_name),
            "{at}"
        );
    }
}

/// The server keeps an entry's `payload` and `error` as the JSON text they
/// arrived in (`logs::ingest`); text that is not compact (spaces between
/// tokens, `\u` and `\/` escapes, as Python's `json.dumps` writes) is stored
/// compact, so every row reads back as the value sent and `search` matches the
/// characters, not their escapes, on both backends.
#[tokio::test]
async fn payload_text_as_sent_or_rewritten_compact_reads_back_and_searches() {
    let server = TestServer::start().await;
    let body = concat!(
        r#"{"entries": ["#,
        r#"{"category": "tool", "operation": "raw.spaced", "payload": { "cmd" : "caf\u00e9 \/ bar", "n" : 1.5e2, "list" : [ 1, {"a": null} ] }, "error": {"message": "x\ty"}},"#,
        r#"{"category":"tool","operation":"raw.compact","payload":{"cmd":"compact \"quoted\"\n","nested":{"k":[true,false]}}},"#,
        r#"{"category":"tool","operation":"raw.null","payload":null,"error":null}"#,
        r#"]}"#
    );
    let response = server
        .http()
        .post(server.at("/api/v1/logs/ingest"))
        .bearer_auth(&server.admin_key)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);

    let rows = server
        .admin()
        .logs()
        .query(&LogQuery {
            filter: LogFilter {
                source: Some(LogSource::Runtime),
                ..Default::default()
            },
            ..Default::default()
        })
        .await
        .unwrap()
        .items;
    let row = |operation: &str| rows.iter().find(|r| r.operation == operation).unwrap();
    assert_eq!(
        row("raw.spaced").payload,
        Some(json!({"cmd": "café / bar", "n": 150.0, "list": [1, {"a": null}]}))
    );
    assert_eq!(row("raw.spaced").error, Some(json!({"message": "x\ty"})));
    assert_eq!(
        row("raw.compact").payload,
        Some(json!({"cmd": "compact \"quoted\"\n", "nested": {"k": [true, false]}}))
    );
    assert_eq!(row("raw.null").payload, Some(json!({})));
    assert_eq!(row("raw.null").error, None);

    let search = |text: &str| LogFilter {
        search: Some(text.to_owned()),
        ..Default::default()
    };
    assert_eq!(
        all_ids(&server, search("café / bar")).await,
        vec![row("raw.spaced").id.clone()],
        "an escaped payload is searched by its characters"
    );
    assert_eq!(
        all_ids(&server, search("compact \\\"quoted")).await,
        vec![row("raw.compact").id.clone()]
    );

    // A payload that is not an object is still refused, naming it.
    let response = server
        .http()
        .post(server.at("/api/v1/logs/ingest"))
        .bearer_auth(&server.admin_key)
        .header("content-type", "application/json")
        .body(r#"{"entries":[{"category":"tool","operation":"bad","payload": [1]},{"category":"tool","operation":"bad2","error":"text"}]}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Value = response.json().await.unwrap();
    let fields = &body["error"]["details"]["issues"]["fieldErrors"];
    assert!(fields.get("entries.0.payload").is_some(), "{body}");
    assert!(fields.get("entries.1.error").is_some(), "{body}");
}
