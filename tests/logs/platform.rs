//! The dropdown helpers, stats and the rows the platform writes about itself (auth, task lifecycle).

use super::*;

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
