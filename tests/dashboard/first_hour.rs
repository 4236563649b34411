//! What a new operator trips over in the dashboard (issue 36): the rail
//! opens on the tab that has something; times are exact on hover and in
//! headings; tables name agents and workers; a failed workflow says why,
//! and pending tasks nobody can claim say so.

use super::*;
use orchestrator_client::api::{
    ClaimTask, CompleteTask, ExecutionMode, FailTask, RegisterAgent, RegisterWorker, TaskError,
    WorkerAgentSpec,
};

#[tokio::test]
async fn the_rail_opens_on_recent_when_nothing_is_live() {
    let server = TestServer::start().await;
    let fixtures = server.launch_fixtures("Rail", "Rail repo").await;
    let admin = server.admin();
    let driver = Driver::start().await;
    let browser = driver.browser();
    // Nothing anywhere: the rail stays on live.
    sign_in(browser, &server, &server.admin_key).await;
    wait_url(browser, "/ui/workflows").await;
    wait_text(browser, "main", "No workflows here yet").await;
    assert!(
        !browser
            .current_url()
            .await
            .unwrap()
            .as_str()
            .contains("mode=")
    );

    // Only a cancelled run: the rail opens on recent and shows it.
    let done = admin
        .workflows()
        .create(&launch(fixtures, "finished run"))
        .await
        .unwrap();
    admin
        .workflows()
        .act(done.id, "cancel", &Default::default())
        .await
        .unwrap();
    browser.goto(&server.at("/ui/workflows")).await.unwrap();
    wait_url(browser, "mode=recent").await;
    wait_text(browser, "#rail", "finished run").await;
    wait_text(browser, ".tab.on", "Recent").await;

    // A live run: the rail opens on live again; a chosen tab is kept.
    admin
        .workflows()
        .create(&launch(fixtures, "running run"))
        .await
        .unwrap();
    browser.goto(&server.at("/ui/workflows")).await.unwrap();
    wait_text(browser, "#rail", "running run").await;
    assert!(
        !browser
            .current_url()
            .await
            .unwrap()
            .as_str()
            .contains("mode=")
    );
    browser
        .goto(&server.at("/ui/workflows?mode=history"))
        .await
        .unwrap();
    wait_text(browser, ".tab.on", "History").await;
    driver.close().await;
}

#[tokio::test]
async fn a_failed_workflow_says_why_and_tables_name_agents_and_workers() {
    let server = TestServer::start().await;
    let fixtures = server.launch_fixtures("Doomed", "Doomed repo").await;
    let admin = server.admin();
    let workflow = admin
        .workflows()
        .create(&launch(fixtures, "nightly build"))
        .await
        .unwrap();
    // The orchestrator plans one task for a developer.
    let planner = admin
        .agents()
        .register(&RegisterAgent {
            name: "planner".into(),
            execution_mode: Some(ExecutionMode::Hybrid),
            ..Default::default()
        })
        .await
        .unwrap();
    let plan = admin
        .tasks()
        .claim(&ClaimTask {
            agent_id: planner.id,
            ..Default::default()
        })
        .await
        .unwrap()
        .expect("the planning task");
    let compile = admin
        .tasks()
        .create(&CreateTask {
            title: "compile".into(),
            task_type: "code".into(),
            role: Some("dev".into()),
            workflow_id: Some(workflow.id),
            ..Default::default()
        })
        .await
        .unwrap();
    let done = CompleteTask {
        agent_id: Some(planner.id),
        ..Default::default()
    };
    admin.tasks().complete(plan.id, &done).await.unwrap();
    // A worker named "laptop" runs it through its agent "dev box", and fails.
    let worker = admin
        .workers()
        .register(&RegisterWorker {
            name: "laptop".into(),
            agents: Some(vec![WorkerAgentSpec {
                name: "dev box".into(),
                routing_tags: Some(vec!["role:dev".into()]),
                execution_mode: Some(ExecutionMode::Specialist),
            }]),
            ..Default::default()
        })
        .await
        .unwrap();
    let agent_id = worker.agents[0].id;
    let claimed = admin
        .tasks()
        .claim(&ClaimTask {
            agent_id,
            worker_id: Some(worker.worker_id),
            ..Default::default()
        })
        .await
        .unwrap()
        .expect("the compile task");
    assert_eq!(claimed.id, compile.id);
    // What `orch worker run` writes when a command fails: its stderr tail.
    let ingested = server
        .http()
        .post(server.at("/api/v1/logs/ingest"))
        .bearer_auth(&server.admin_key)
        .json(&json!({ "entries": [{
            "category": "task_lifecycle", "operation": "task.failed", "level": "error",
            "task_id": compile.id, "workflow_id": workflow.id,
            "payload": { "stream": "stderr", "last_lines": ["cc -c main.c", "main.c:1: fatal error: foo.h: No such file"] },
        }] }))
        .send()
        .await
        .unwrap();
    assert!(ingested.status().is_success(), "{}", ingested.status());
    admin
        .tasks()
        .fail(
            compile.id,
            &FailTask {
                error: Some(TaskError {
                    category: Some("exit_code".into()),
                    message: Some("the compiler crashed".into()),
                    recoverable: Some(true),
                }),
                agent_id: Some(agent_id),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let state = admin
        .workflows()
        .get(workflow.id)
        .await
        .unwrap()
        .workflow
        .state;
    assert_eq!(state, WorkflowState::Failed);
    // Another run waits for a writer nobody runs.
    let waiting = admin
        .workflows()
        .create(&launch(fixtures, "docs run"))
        .await
        .unwrap();
    admin
        .tasks()
        .create(&CreateTask {
            title: "write the docs".into(),
            task_type: "docs".into(),
            role: Some("writer".into()),
            workflow_id: Some(waiting.id),
            ..Default::default()
        })
        .await
        .unwrap();

    let driver = signed_in(&server).await;
    let browser = driver.browser();

    // The failed run says why: the task, its error, its last stderr lines.
    browser
        .goto(&server.at(&format!("/ui/workflows/{}", workflow.id)))
        .await
        .unwrap();
    wait_text(browser, "#why", "Why it failed").await;
    wait_text(browser, "#why", "the compiler crashed").await;
    wait_text(browser, "#why", "fatal error: foo.h").await;
    wait_text(browser, "#why a", "compile").await;
    // Its task table names the agent, not its id.
    wait_text(
        browser,
        &format!("#tasks tr[data-id='{}']", compile.id),
        "dev box",
    )
    .await;

    // The waiting run says nobody can claim its task.
    browser
        .goto(&server.at(&format!("/ui/workflows/{}", waiting.id)))
        .await
        .unwrap();
    wait_text(
        browser,
        "#unclaimable",
        "No online agent has tags role:writer",
    )
    .await;

    // The task page: agent and worker by name; exact times in the heading
    // and on hover.
    browser
        .goto(&server.at(&format!("/ui/tasks/{}", compile.id)))
        .await
        .unwrap();
    wait_text(browser, "main", "dev box").await;
    wait_text(browser, "main", "laptop").await;
    wait_text(browser, "#why-failed", "the compiler crashed").await;
    wait_text(browser, "#why-failed", "fatal error: foo.h").await;
    let exact = wait_css(browser, "main .heading .at .exact").await;
    let exact = exact.text().await.unwrap();
    let created = compile.created_at.as_datetime();
    let shape = exact.len() >= 19
        && exact.as_bytes()[4] == b'-'
        && exact.as_bytes()[10] == b' '
        && exact.as_bytes()[13] == b':';
    assert!(shape, "not an exact time: {exact}");
    assert_eq!(
        &exact[17..19],
        created.format("%S").to_string(),
        "{exact} vs {created}"
    );
    let hover = wait_css(browser, "main .heading .at time").await;
    assert_eq!(
        hover.attr("title").await.unwrap().as_deref(),
        Some(exact.as_str())
    );

    // The fleet's agent table names each agent's worker.
    browser.goto(&server.at("/ui/fleet")).await.unwrap();
    wait_text(
        browser,
        &format!("#agents tr[data-id='{agent_id}']"),
        "laptop",
    )
    .await;
    driver.close().await;
}
