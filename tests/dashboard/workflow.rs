//! The workflow and task pages: launch, follow, steer, and the actions each state allows.

use super::*;

#[tokio::test]
async fn operator_launches_follows_and_steers_a_workflow() {
    let server = TestServer::start().await;
    let (playbook_id, workspace_id) = server.launch_fixtures("Ship it", "Main repo").await;
    let driver = Driver::start().await;
    let browser = driver.browser();

    // Opening a page signed out lands on sign-in, then returns to it.
    browser.goto(&server.at("/ui/launch")).await.unwrap();
    wait_url(browser, "/ui/signin?next=").await;
    submit_key(browser, &server.admin_key).await;
    wait_url(browser, "/ui/launch").await;

    // Launch: the pickers list the playbook and workspace.
    wait_text(browser, "#launch-playbook option", "Ship it").await;
    wait_text(browser, "#launch-workspace option", "Main repo").await;
    type_into(browser, "#launch-name", "Browser launch").await;
    type_into(browser, "#launch-parameters", "ticket=OPS-7").await;
    type_into(browser, "#launch-summary", "Ship the fix for OPS-7").await;
    let dir = tempfile::tempdir().unwrap();
    let brief = dir.path().join("brief.md");
    std::fs::write(&brief, "# Brief\n").unwrap();
    wait_css(browser, "#launch-files")
        .await
        .send_keys(brief.to_str().unwrap())
        .await
        .unwrap();
    click(browser, "#launch").await;
    let url = wait_url(browser, "/ui/workflows/").await;
    let workflow_id: Uuid = url.rsplit('/').next().unwrap().parse().unwrap();
    wait_text(browser, "h1", "Browser launch").await;
    let detail = server.admin().workflows().get(workflow_id).await.unwrap();
    assert_eq!(detail.workflow.playbook_id, playbook_id);
    assert_eq!(detail.workflow.workspace_id, workspace_id);
    assert_eq!(detail.workflow.parameters["ticket"], "OPS-7");
    let packet = detail
        .workflow
        .initial_input_packet
        .expect("an input packet");
    assert_eq!(packet.summary.as_deref(), Some("Ship the fix for OPS-7"));
    let files = packet.files.expect("the uploaded file");
    assert_eq!(files[0].file_name, "brief.md");
    assert_eq!(files[0].content_base64, "IyBCcmllZgo=");
    wait_text(browser, "#input-packet", "brief.md").await;
    wait_text(browser, "#input-packet", "8 bytes").await;
    wait_text(browser, "#feed-state", "live").await;

    // Operator actions on the workflow: pause, then resume.
    click(browser, "#pause").await;
    wait_text(browser, "#workflow-state", "paused").await;
    click(browser, "#resume").await;
    wait_css(browser, "#pause").await;
    let state = server.admin().workflows().get(workflow_id).await.unwrap();
    assert_ne!(state.workflow.state, WorkflowState::Paused);

    // A task created through the API appears on the open page, no reload.
    let task = server
        .admin()
        .tasks()
        .create(&CreateTask {
            title: "Created behind the page's back".into(),
            task_type: "code".into(),
            workflow_id: Some(workflow_id),
            ..Default::default()
        })
        .await
        .unwrap();
    wait_text(browser, "#tasks", "Created behind the page's back").await;
    wait_text(browser, "#feed", "task.created").await;
    // The feed names the task by the random end of its UUIDv7 id (the last 8
    // hex digits), not by its first 8, a timestamp shared by everything
    // created within a minute.
    let simple = task.id.simple().to_string();
    wait_text(browser, "#feed", &format!("task {}", &simple[24..])).await;

    // Open it and run an action its state allows: skip a pending task.
    click_text(browser, "#tasks a", "Created behind the page's back").await;
    wait_url(browser, &format!("/ui/tasks/{}", task.id)).await;
    wait_text(browser, "#task-state", "pending").await;
    click(browser, "#act-skip").await;
    wait_text(browser, "#action-done", "skip").await;
    wait_text(browser, "#task-state", "completed").await;
    let skipped = server.admin().tasks().get(task.id).await.unwrap();
    assert_eq!(skipped.state, TaskState::Completed);

    // The live tail shows a log line written after the page opened.
    browser
        .goto(&server.at(&format!("/ui/logs?workflow_id={workflow_id}")))
        .await
        .unwrap();
    wait_text(browser, "#tail-state", "live").await;
    ingest(&server, workflow_id, "tool.browser_probe").await;
    wait_text(browser, "#log-rows", "tool.browser_probe").await;

    // Pausing the tail stops new lines; resuming catches up on them.
    click(browser, "#tail-toggle").await;
    wait_text(browser, "#tail-state", "paused").await;
    ingest(&server, workflow_id, "tool.while_paused").await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    let rows = wait_css(browser, "#log-rows").await.text().await.unwrap();
    assert!(
        !rows.contains("tool.while_paused"),
        "paused tail showed a line"
    );
    click(browser, "#tail-toggle").await;
    wait_text(browser, "#log-rows", "tool.while_paused").await;

    // Sign out: back at sign-in, and the session no longer opens pages.
    let access = browser
        .get_named_cookie("service_access_token")
        .await
        .unwrap()
        .value()
        .to_owned();
    click(browser, "#signout").await;
    wait_url(browser, "/ui/signin").await;
    browser.goto(&server.at("/ui/workflows")).await.unwrap();
    wait_url(browser, "/ui/signin?next=").await;
    // The server revoked the session (the logout carried the CSRF header):
    // a copy of the access cookie is dead too.
    let me = server
        .http()
        .get(server.at("/api/v1/auth/me"))
        .bearer_auth(&access)
        .send()
        .await
        .unwrap();
    assert_eq!(me.status(), 401, "sign-out must revoke the session");
    driver.close().await;
}

#[tokio::test]
async fn task_and_workflow_actions_follow_the_state() {
    let server = TestServer::start().await;
    let (playbook_id, workspace_id) = server.launch_fixtures("Steer", "Main repo").await;
    let admin = server.admin();
    let workflow = admin
        .workflows()
        .create(&orchestrator_client::api::CreateWorkflow {
            playbook_id,
            workspace_id,
            name: "Steered run".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    // An agent submits a task's output that fails its verification: the
    // task waits for an operator's assessment.
    let agent = admin
        .agents()
        .register(&orchestrator_client::api::RegisterAgent {
            name: "dev".into(),
            execution_mode: Some(orchestrator_client::api::ExecutionMode::Specialist),
            issue_api_key: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    let agent_client = orchestrator_client::Client::new(&server.url)
        .unwrap()
        .with_api_key(agent.api_key.clone().expect("key issued"));
    let assess = admin
        .tasks()
        .create(&CreateTask {
            title: "Assess me".into(),
            task_type: "code".into(),
            workflow_id: Some(workflow.id),
            ..Default::default()
        })
        .await
        .unwrap();
    let claimed = agent_client
        .tasks()
        .claim(&orchestrator_client::api::ClaimTask {
            agent_id: agent.id,
            workflow_id: Some(workflow.id),
            ..Default::default()
        })
        .await
        .unwrap()
        .expect("a task to claim");
    assert_eq!(claimed.id, assess.id);
    agent_client
        .tasks()
        .start(assess.id, &Default::default())
        .await
        .unwrap();
    agent_client
        .tasks()
        .complete(
            assess.id,
            &orchestrator_client::api::CompleteTask {
                output: Some(json!({ "patch": "half done" })),
                verification: Some(json!({ "passed": false })),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let task = admin
        .tasks()
        .create(&CreateTask {
            title: "Cancel me".into(),
            task_type: "code".into(),
            workflow_id: Some(workflow.id),
            ..Default::default()
        })
        .await
        .unwrap();
    let driver = Driver::start().await;
    let browser = driver.browser();
    sign_in(browser, &server, &server.admin_key).await;
    wait_url(browser, "/ui/workflows").await;

    // A pending task offers cancel but not retry; cancelled, it offers retry.
    browser
        .goto(&server.at(&format!("/ui/tasks/{}", task.id)))
        .await
        .unwrap();
    wait_text(browser, "#task-state", "pending").await;
    assert!(
        browser.find(Locator::Css("#act-retry")).await.is_err(),
        "retry offered on a pending task"
    );
    click(browser, "#act-cancel").await;
    wait_text(browser, "#task-state", "cancelled").await;
    wait_text(browser, "#action-done", "cancel").await;
    assert!(
        browser.find(Locator::Css("#act-cancel")).await.is_err(),
        "cancel offered on a cancelled task"
    );
    click(browser, "#act-retry").await;
    wait_text(browser, "#task-state", "pending").await;
    assert_eq!(
        admin.tasks().get(task.id).await.unwrap().state,
        TaskState::Pending
    );
    // Reassign asks for a reason (a form), then sends it.
    click(browser, "summary#act-reassign").await;
    type_into(browser, "#act-reassign-form textarea", "wrong specialist").await;
    click(browser, "#act-reassign-form button").await;
    wait_text(browser, "#action-done", "reassign").await;
    assert_eq!(
        admin.tasks().get(task.id).await.unwrap().state,
        TaskState::Pending
    );

    // Output awaiting assessment: approve and request changes are offered;
    // requesting changes sends the feedback and the task back to pending.
    browser
        .goto(&server.at(&format!("/ui/tasks/{}", assess.id)))
        .await
        .unwrap();
    wait_text(browser, "#task-state", "output pending assessment").await;
    wait_css(browser, "#act-approve-output").await;
    click(browser, "summary#act-request-changes").await;
    type_into(
        browser,
        "#act-request-changes-form textarea",
        "add the tests",
    )
    .await;
    click(browser, "#act-request-changes-form button").await;
    wait_text(browser, "#action-done", "request changes").await;
    wait_text(browser, "#task-state", "pending").await;
    assert_eq!(
        admin.tasks().get(assess.id).await.unwrap().state,
        TaskState::Pending
    );

    // The workflow: cancel (after a confirmation), then redrive it from the form.
    browser
        .goto(&server.at(&format!("/ui/workflows/{}", workflow.id)))
        .await
        .unwrap();
    wait_text(browser, "#feed-state", "live").await;
    type_into(browser, "#action-reason", "wrong branch").await;
    click(browser, "#cancel-workflow").await;
    browser.accept_alert().await.unwrap();
    wait_text(browser, "#workflow-state", "cancelled").await;
    assert_eq!(
        admin
            .workflows()
            .get(workflow.id)
            .await
            .unwrap()
            .workflow
            .state,
        WorkflowState::Cancelled
    );
    click(browser, "#redrive summary").await;
    let name = wait_css(browser, "#redrive-name").await;
    name.clear().await.unwrap();
    type_into(browser, "#redrive-name", "Steered run, again").await;
    type_into(browser, "#redrive-reason", "branch fixed").await;
    click(browser, "#redrive-submit").await;
    click_text(browser, "[role=status] a", "open the new run").await;
    wait_text(browser, "h1", "Steered run, again").await;
    let url = wait_url(browser, "/ui/workflows/").await;
    let new_id: Uuid = url.rsplit('/').next().unwrap().parse().unwrap();
    assert_ne!(new_id, workflow.id);
    let redriven = admin.workflows().get(new_id).await.unwrap();
    assert_eq!(redriven.workflow.redrive_of, Some(workflow.id));
    driver.close().await;
}
