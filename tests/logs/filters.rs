//! Log reads: every filter, search, summary detail and get, and cursor pages under concurrent inserts.

use super::*;

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
