//! Run control in the browser (issue 30): the task list's "delayed" filter,
//! and the task page's run-control facts (attempt, next attempt, expiry,
//! lease, retry policy) and retry history built from the task's
//! `task.retry_scheduled` events.

use super::*;
use orchestrator_client::api::{
    ClaimTask, ExecutionMode, FailTask, RegisterAgent, RetryPolicy, TaskError,
};

/// `GET path` as the admin: the JSON answer.
async fn get_json(server: &TestServer, path: &str) -> Value {
    server
        .http()
        .get(server.at(path))
        .bearer_auth(&server.admin_key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn the_task_list_filters_delayed_tasks_and_a_task_shows_its_retries() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let create = |title: &str| CreateTask {
        title: title.into(),
        task_type: "code".into(),
        ..Default::default()
    };
    // A task that fails once and is retried a minute later by its policy.
    let retried = admin
        .tasks()
        .create(&CreateTask {
            retry_policy: Some(RetryPolicy {
                max_attempts: 3,
                initial_interval_seconds: Some(60),
                backoff_coefficient: Some(2.0),
                max_interval_seconds: Some(600),
                jitter: Some(0.0),
                non_retryable_categories: Some(vec!["auth".into()]),
            }),
            heartbeat_timeout_seconds: Some(300),
            ..create("flaky upload")
        })
        .await
        .unwrap();
    let agent = admin
        .agents()
        .register(&RegisterAgent {
            name: "uploader".into(),
            execution_mode: Some(ExecutionMode::Specialist),
            ..Default::default()
        })
        .await
        .unwrap();
    let claimed = admin
        .tasks()
        .claim(&ClaimTask {
            agent_id: agent.id,
            ..Default::default()
        })
        .await
        .unwrap()
        .expect("the task to claim");
    assert_eq!(claimed.id, retried.id);
    let after = admin
        .tasks()
        .fail(
            retried.id,
            &FailTask {
                error: Some(TaskError {
                    category: Some("network".into()),
                    message: Some("the bucket answered 503".into()),
                    recoverable: Some(true),
                }),
                agent_id: Some(agent.id),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(after.state, TaskState::Pending);
    assert_eq!(after.attempt, 2);
    // One waiting an hour with a day to live, and one claimable now.
    let later = admin
        .tasks()
        .create(&CreateTask {
            delay_seconds: Some(3600),
            ttl_seconds: Some(86_400),
            ..create("nightly report")
        })
        .await
        .unwrap();
    admin.tasks().create(&create("right away")).await.unwrap();

    let driver = signed_in(&server).await;
    let browser = driver.browser();

    // The list shows all three; "Delayed only" keeps the two that wait.
    browser.goto(&server.at("/ui/tasks")).await.unwrap();
    wait_text(browser, "#task-list", "right away").await;
    click(browser, "#tasks-delayed").await;
    wait_url(browser, "delayed=true").await;
    wait_text(browser, "main", "2 in all").await;
    let list = wait_css(browser, "#task-list").await.text().await.unwrap();
    assert!(
        list.contains("flaky upload")
            && list.contains("nightly report")
            && !list.contains("right away"),
        "{list}"
    );
    // The API filter agrees (what the page and `orch tasks list --delayed` use).
    let delayed = get_json(&server, "/api/v1/tasks?delayed=true").await;
    assert_eq!(delayed["meta"]["total"], 2, "{delayed}");
    let rest = get_json(&server, "/api/v1/tasks?delayed=false").await;
    assert_eq!(rest["meta"]["total"], 1, "{rest}");
    assert_eq!(rest["data"][0]["title"], "right away");

    // The retried task: attempt 2, when it runs, its policy and its history.
    click_text(browser, "#task-list a", "flaky upload").await;
    wait_url(browser, &format!("/ui/tasks/{}", retried.id)).await;
    wait_text(browser, "#run-control", "Next attempt").await;
    let facts = wait_css(browser, "#run-control")
        .await
        .text()
        .await
        .unwrap();
    assert!(
        facts.contains("Attempt\n2") || facts.contains("Attempt 2"),
        "{facts}"
    );
    assert!(
        facts.contains("Heartbeat timeout\n300s") || facts.contains("300s"),
        "{facts}"
    );
    wait_text(browser, "#retry-policy", "3 attempts").await;
    wait_text(browser, "#retry-policy", "never retried: auth").await;
    let history = wait_text(browser, "#retry-history", "the bucket answered 503").await;
    let history = history.text().await.unwrap();
    assert!(history.contains("1 → 2"), "{history}");
    assert!(history.contains("(network)"), "{history}");
    assert!(history.contains("60s"), "{history}");
    // The next attempt's exact time, as the record has it.
    let run_at = after.run_at.expect("a run_at").as_datetime();
    let seconds = format!(":{}", run_at.format("%S"));
    assert!(history.contains(&seconds), "{history} has no {seconds}");

    // The delayed task: scheduled for later, with its expiry and no lease.
    browser
        .goto(&server.at(&format!("/ui/tasks/{}", later.id)))
        .await
        .unwrap();
    wait_text(browser, "#run-control", "Scheduled for").await;
    wait_text(browser, "#run-control", "Expires").await;
    wait_text(browser, "#run-control", "none (no lease)").await;
    wait_text(browser, "main", "No retries").await;
    driver.close().await;
}
