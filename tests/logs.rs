//! Logs end to end: ingest validation, every filter, cursor pages under
//! concurrent inserts, summary detail, get, export, stats, the dropdown
//! helpers and the platform's own auth rows.

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

#[tokio::test]
async fn every_filter_search_summary_and_get() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let (workspace, workflow, task, work_item, activation, trace) = (
        Uuid::new_v4(),
        Uuid::new_v4(),
        Uuid::new_v4(),
        Uuid::new_v4(),
        Uuid::new_v4(),
        Uuid::new_v4(),
    );
    let mut linked = entry(LogCategory::TaskLifecycle, "task.complete");
    linked.workspace_id = Some(workspace);
    linked.workflow_id = Some(workflow);
    linked.task_id = Some(task);
    linked.work_item_id = Some(work_item);
    linked.activation_id = Some(activation);
    linked.trace_id = Some(trace);
    linked.stage_name = Some("build".into());
    linked.role = Some("developer".into());
    linked.source = Some(LogSource::TaskContainer);
    linked.level = Some(LogLevel::Warn);
    linked.status = Some(LogStatus::Failed);
    linked.payload = Some(json!({"note": "Needle in the payload"}));
    linked.error = Some(json!({"message": "boom ".repeat(100), "code": "E42", "stack": "deep"}));
    let mut other = entry(LogCategory::Llm, "llm.chat");
    other.level = Some(LogLevel::Debug);
    other.status = Some(LogStatus::Completed);
    admin
        .logs()
        .ingest(vec![linked, other, entry(LogCategory::Tool, "tool.run")])
        .await
        .unwrap();
    let all = all_ids(&server, LogFilter::default()).await;
    assert_eq!(all.len(), 3);
    let linked_id = all_ids(
        &server,
        LogFilter {
            operation: Some("task.complete".into()),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(linked_id.len(), 1);

    let cases: Vec<(&str, LogFilter)> = vec![
        (
            "workspace_id",
            LogFilter {
                workspace_id: Some(workspace),
                ..Default::default()
            },
        ),
        (
            "workflow_id",
            LogFilter {
                workflow_id: Some(workflow),
                ..Default::default()
            },
        ),
        (
            "task_id",
            LogFilter {
                task_id: Some(task),
                ..Default::default()
            },
        ),
        (
            "work_item_id",
            LogFilter {
                work_item_id: Some(work_item),
                ..Default::default()
            },
        ),
        (
            "activation_id",
            LogFilter {
                activation_id: Some(activation),
                ..Default::default()
            },
        ),
        (
            "trace_id",
            LogFilter {
                trace_id: Some(trace),
                ..Default::default()
            },
        ),
        (
            "stage_name",
            LogFilter {
                stage_name: Some("build".into()),
                ..Default::default()
            },
        ),
        (
            "role",
            LogFilter {
                role: Some("developer".into()),
                ..Default::default()
            },
        ),
        (
            "source",
            LogFilter {
                source: Some(LogSource::TaskContainer),
                ..Default::default()
            },
        ),
        (
            "category",
            LogFilter {
                category: Some(LogCategory::TaskLifecycle),
                ..Default::default()
            },
        ),
        (
            "level",
            LogFilter {
                level: Some(LogLevel::Warn),
                ..Default::default()
            },
        ),
        (
            "status",
            LogFilter {
                status: Some(LogStatus::Failed),
                ..Default::default()
            },
        ),
        (
            "search payload",
            LogFilter {
                search: Some("needle".into()),
                ..Default::default()
            },
        ),
        (
            "search operation",
            LogFilter {
                search: Some("TASK.COMP".into()),
                ..Default::default()
            },
        ),
    ];
    for (name, filter) in cases {
        assert_eq!(all_ids(&server, filter).await, linked_id, "filter {name}");
    }
    assert!(
        all_ids(
            &server,
            LogFilter {
                search: Some("100%".into()),
                ..Default::default()
            }
        )
        .await
        .is_empty(),
        "% in a search is literal"
    );
    assert_eq!(
        all_ids(
            &server,
            LogFilter {
                since: Some("10m".into()),
                ..Default::default()
            }
        )
        .await
        .len(),
        3
    );
    assert!(
        all_ids(
            &server,
            LogFilter {
                until: Some("1h".into()),
                ..Default::default()
            }
        )
        .await
        .is_empty()
    );
    assert!(
        all_ids(
            &server,
            LogFilter {
                since: Some("2999-01-01T00:00:00Z".into()),
                ..Default::default()
            }
        )
        .await
        .is_empty()
    );
    let response = server
        .http()
        .get(server.at("/api/v1/logs?since=yesterday"))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);

    // Summary detail drops the payload and reduces the error.
    let summary: Value = server
        .http()
        .get(server.at(&format!("/api/v1/logs?detail=summary&task_id={task}")))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let row = &summary["data"][0];
    assert!(row.get("payload").is_none(), "{row}");
    assert_eq!(row["error"]["code"], "E42");
    assert!(row["error"].get("stack").is_none());
    assert!(row["error"]["message"].as_str().unwrap().len() <= 200);
    assert!(summary["meta"]["next_cursor"].is_null());

    // Get by id; a miss is the contract's plain object.
    let got = admin.logs().get(&linked_id[0]).await.unwrap().unwrap();
    assert_eq!(got.task_id, Some(task));
    assert_eq!(got.payload, Some(json!({"note": "Needle in the payload"})));
    for missing in ["999999", "not-an-id"] {
        let response = server
            .http()
            .get(server.at(&format!("/api/v1/logs/{missing}")))
            .bearer_auth(&server.admin_key)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert_eq!(
            response.json::<Value>().await.unwrap(),
            json!({"error": "Not found"})
        );
    }

    // Another tenant sees none of it.
    let tenant = server
        .service()
        .tenants()
        .create(&orchestrator_client::api::CreateTenant {
            name: "other".into(),
            slug: Some("other".into()),
            request_id: None,
        })
        .await
        .unwrap();
    let stranger = server.client(&tenant.admin_key.api_key);
    assert!(
        stranger
            .logs()
            .query(&LogQuery::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    assert!(stranger.logs().get(&linked_id[0]).await.unwrap().is_none());
}

#[tokio::test]
async fn cursor_pages_visit_every_row_exactly_once_while_rows_are_inserted() {
    let server = TestServer::start().await;
    let admin = server.admin();
    for batch in 0..3 {
        let entries = (0..50)
            .map(|i| entry(LogCategory::Tool, &format!("seed.{batch}.{i}")))
            .collect();
        admin.logs().ingest(entries).await.unwrap();
    }
    let before: HashSet<String> = all_ids(&server, LogFilter::default())
        .await
        .into_iter()
        .collect();
    assert_eq!(before.len(), 150);

    // Keep inserting while paging.
    let writer = {
        let client = server.admin();
        tokio::spawn(async move {
            for i in 0..30 {
                let entries = (0..5)
                    .map(|j| entry(LogCategory::Tool, &format!("live.{i}.{j}")))
                    .collect();
                client.logs().ingest(entries).await.unwrap();
                tokio::task::yield_now().await;
            }
        })
    };
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = admin
            .logs()
            .query(&LogQuery {
                filter: LogFilter {
                    operation: None,
                    search: Some("seed.".into()),
                    ..Default::default()
                },
                cursor: cursor.clone(),
                per_page: Some(7),
                ..Default::default()
            })
            .await
            .unwrap();
        assert!(page.items.len() <= 7);
        seen.extend(page.items.into_iter().map(|r| r.id));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    writer.await.unwrap();
    let unique: HashSet<String> = seen.iter().cloned().collect();
    assert_eq!(unique.len(), seen.len(), "no row twice");
    assert_eq!(unique, before, "every row once");

    // Unfiltered paging after the writer is done visits all 300 rows once,
    // newest first.
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = admin
            .logs()
            .query(&LogQuery {
                cursor: cursor.clone(),
                per_page: Some(64),
                ..Default::default()
            })
            .await
            .unwrap();
        seen.extend(page.items.into_iter().map(|r| r.id.parse::<i64>().unwrap()));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(seen.len(), 300);
    assert_eq!(seen.iter().collect::<HashSet<_>>().len(), 300);

    // Bad cursors and page sizes are 400.
    for query in ["cursor=garbage", "per_page=0", "per_page=x", "detail=huge"] {
        let response = server
            .http()
            .get(server.at(&format!("/api/v1/logs?{query}")))
            .bearer_auth(&server.admin_key)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{query}");
    }
}

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

#[tokio::test]
async fn stats_helpers_and_platform_auth_rows() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let workflow = Uuid::new_v4();
    let task = Uuid::new_v4();
    let mut a = entry(LogCategory::Llm, "llm.chat");
    a.workflow_id = Some(workflow);
    a.task_id = Some(task);
    a.role = Some("reviewer".into());
    a.is_orchestrator_task = Some(true);
    a.actor_name = Some("Ada".into());
    let mut b = entry(LogCategory::Llm, "llm.chat");
    b.level = Some(LogLevel::Error);
    b.task_id = Some(task);
    b.execution_backend = Some("container".into());
    b.tool_owner = Some("task".into());
    admin
        .logs()
        .ingest(vec![a, b, entry(LogCategory::Tool, "tool.run")])
        .await
        .unwrap();

    let only_runtime = LogFilter {
        source: Some(LogSource::Runtime),
        ..Default::default()
    };
    let stats = admin
        .logs()
        .stats(LogGroupBy::Category, &only_runtime)
        .await
        .unwrap();
    assert_eq!(stats.total, 3);
    assert_eq!(stats.groups[0].value, json!("llm"));
    assert_eq!(stats.groups[0].count, 2);
    let by_task = admin
        .logs()
        .stats(LogGroupBy::TaskId, &only_runtime)
        .await
        .unwrap();
    assert_eq!(by_task.groups[0].value, json!(task.to_string()));
    assert_eq!(by_task.groups[0].count, 2);
    let by_flag = admin
        .logs()
        .stats(LogGroupBy::IsOrchestratorTask, &only_runtime)
        .await
        .unwrap();
    assert!(
        by_flag
            .groups
            .iter()
            .any(|g| g.value == json!(true) && g.count == 1)
    );
    for group_by in [
        LogGroupBy::Operation,
        LogGroupBy::Level,
        LogGroupBy::WorkItemId,
        LogGroupBy::StageName,
        LogGroupBy::ActivationId,
        LogGroupBy::Source,
        LogGroupBy::ExecutionBackend,
        LogGroupBy::ToolOwner,
    ] {
        let stats = admin.logs().stats(group_by, &only_runtime).await.unwrap();
        assert_eq!(stats.total, 3, "{group_by}");
    }
    let response = server
        .http()
        .get(server.at("/api/v1/logs/stats?group_by=payload"))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);

    let operations = admin.logs().operations().await.unwrap();
    assert!(
        operations.contains(&"llm.chat".to_owned()) && operations.contains(&"tool.run".to_owned())
    );
    assert_eq!(
        admin.logs().roles().await.unwrap(),
        vec!["reviewer".to_owned()]
    );
    assert_eq!(admin.logs().workflows().await.unwrap(), vec![workflow]);
    assert!(
        admin
            .logs()
            .actors()
            .await
            .unwrap()
            .iter()
            .any(|a| a.actor_name.as_deref() == Some("Ada"))
    );

    // The platform logs token exchanges, refreshes and refused exchanges.
    let session = server.admin_session().await;
    server
        .anonymous()
        .auth()
        .refresh(session.refresh_token.as_deref().unwrap())
        .await
        .unwrap();
    let revoked = admin
        .api_keys()
        .create(&key_request(Scope::Agent, "gone"))
        .await
        .unwrap();
    admin.api_keys().revoke(revoked.key.id).await.unwrap();
    assert!(
        server
            .anonymous()
            .auth()
            .token(&revoked.api_key, true)
            .await
            .is_err()
    );
    let auth_rows = admin
        .logs()
        .query(&LogQuery {
            filter: LogFilter {
                category: Some(LogCategory::Auth),
                ..Default::default()
            },
            ..Default::default()
        })
        .await
        .unwrap()
        .items;
    let summary: Vec<(String, Option<LogStatus>)> = auth_rows
        .iter()
        .map(|r| (r.operation.clone(), r.status))
        .collect();
    assert!(
        summary.contains(&("auth.token".into(), Some(LogStatus::Completed))),
        "{summary:?}"
    );
    assert!(
        summary.contains(&("auth.refresh".into(), Some(LogStatus::Completed))),
        "{summary:?}"
    );
    assert!(
        summary.contains(&("auth.token".into(), Some(LogStatus::Failed))),
        "{summary:?}"
    );
    assert!(auth_rows.iter().all(|r| r.source == LogSource::Platform));
    let failed = auth_rows
        .iter()
        .find(|r| r.status == Some(LogStatus::Failed))
        .unwrap();
    assert_eq!(failed.level, LogLevel::Warn);
    assert_eq!(failed.resource_id, Some(revoked.key.id.to_string()));
}

/// Task lifecycle operations write their own platform rows, in the same
/// transaction as the change, linked to the task.
#[tokio::test]
async fn task_lifecycle_operations_write_platform_rows() {
    let server = TestServer::start().await;
    let http = server.http();
    let post = |path: &str, key: &str, body: Value| {
        http.post(server.at(&format!("/api/v1{path}")))
            .bearer_auth(key)
            .json(&body)
            .send()
    };
    let data = |response: reqwest::Response| async move {
        assert!(response.status().is_success(), "{}", response.status());
        response.json::<Value>().await.unwrap()["data"].clone()
    };
    let admin = server.admin_key.clone();
    let agent = data(
        post(
            "/agents/register",
            &admin,
            json!({"name": "logger", "issue_api_key": true}),
        )
        .await
        .unwrap(),
    )
    .await;
    let agent_key = agent["api_key"].as_str().unwrap().to_owned();
    let task = data(
        post("/tasks", &admin, json!({"title": "t", "type": "code"}))
            .await
            .unwrap(),
    )
    .await;
    let id = task["id"].as_str().unwrap().to_owned();
    data(
        post("/tasks/claim", &agent_key, json!({"agent_id": agent["id"]}))
            .await
            .unwrap(),
    )
    .await;
    data(
        post(&format!("/tasks/{id}/start"), &agent_key, json!({}))
            .await
            .unwrap(),
    )
    .await;
    data(
        post(
            &format!("/tasks/{id}/complete"),
            &agent_key,
            json!({"output": {"ok": true}}),
        )
        .await
        .unwrap(),
    )
    .await;

    let rows = server
        .admin()
        .logs()
        .query(&LogQuery {
            filter: LogFilter {
                task_id: Some(id.parse().unwrap()),
                ..Default::default()
            },
            ..Default::default()
        })
        .await
        .unwrap()
        .items;
    let mut operations: Vec<&str> = rows.iter().map(|r| r.operation.as_str()).collect();
    operations.reverse(); // newest first → in order
    assert_eq!(operations, ["task.claim", "task.start", "task.complete"]);
    for row in &rows {
        assert_eq!(row.source, LogSource::Platform);
        assert_eq!(row.category, LogCategory::TaskLifecycle);
        assert_eq!(row.status, Some(LogStatus::Completed));
        assert_eq!(row.resource_type.as_deref(), Some("task"));
    }
    assert_eq!(rows[0].payload.as_ref().unwrap()["to_state"], "completed");
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
