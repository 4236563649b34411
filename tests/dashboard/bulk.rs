//! Bulk select on the task and workflow lists (issue 32): checkboxes,
//! select all on the page, a confirmation naming the count, and the bulk
//! action's counts as it runs, through `POST /bulk-actions` with `ids`.

use super::*;
use orchestrator_client::api::PageRequest;

/// Clicks the checkbox of the row whose id is `id` in table `table`.
async fn pick(browser: &Browser, table: &str, id: Uuid) {
    click(
        browser,
        &format!("{table} tr[data-id='{id}'] input.bulk-one"),
    )
    .await;
}

#[tokio::test]
async fn tasks_and_workflows_are_selected_confirmed_and_acted_on_in_bulk() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let mut ids = Vec::new();
    for title in ["alpha", "bravo", "charlie", "delta"] {
        let task = admin
            .tasks()
            .create(&CreateTask {
                title: title.into(),
                task_type: "code".into(),
                ..Default::default()
            })
            .await
            .unwrap();
        ids.push(task.id);
    }
    let driver = signed_in(&server).await;
    let browser = driver.browser();

    // Select the whole page, then leave one out: three are cancelled.
    browser.goto(&server.at("/ui/tasks")).await.unwrap();
    wait_text(browser, "#task-list", "delta").await;
    wait_text(browser, "#bulk-count", "Select tasks").await;
    click(browser, "#task-list input.bulk-all").await;
    wait_text(browser, "#bulk-count", "4 tasks selected").await;
    pick(browser, "#task-list", ids[3]).await;
    wait_text(browser, "#bulk-count", "3 tasks selected").await;
    click(browser, "[data-bulk='cancel']").await;
    wait_text(browser, "#bulk-confirm", "Cancel 3 tasks?").await;
    // Nothing happens before the confirmation.
    let still = admin.tasks().get(ids[0]).await.unwrap();
    assert_eq!(still.state, TaskState::Pending);
    type_into(browser, "#bulk-reason", "cleanup after the outage").await;
    click(browser, "#bulk-go").await;
    wait_text(browser, "#bulk-counts", "3 of 3 handled").await;
    wait_text(browser, "#bulk-counts", "3 succeeded").await;
    wait_text(browser, "#bulk-progress", "completed").await;
    for (i, id) in ids.iter().enumerate() {
        let task = admin.tasks().get(*id).await.unwrap();
        let want = if i == 3 {
            TaskState::Pending
        } else {
            TaskState::Cancelled
        };
        assert_eq!(task.state, want, "task {i}");
    }
    let actions = admin
        .bulk_actions()
        .list(PageRequest::new(1, 10))
        .await
        .unwrap();
    assert_eq!(actions.items.len(), 1);
    let action = &actions.items[0];
    assert_eq!(action.counts.matched, 3);
    assert_eq!(action.reason.as_deref(), Some("cleanup after the outage"));
    // The list redrew after the action: the rows show their new state.
    wait_text(
        browser,
        &format!("#task-list tr[data-id='{}']", ids[0]),
        "cancelled",
    )
    .await;

    // Retry over all four: the pending one is skipped.
    click(browser, "#task-list input.bulk-all").await;
    wait_text(browser, "#bulk-count", "4 tasks selected").await;
    click(browser, "[data-bulk='retry']").await;
    wait_text(browser, "#bulk-confirm", "Retry 4 tasks?").await;
    click(browser, "#bulk-go").await;
    wait_text(browser, "#bulk-counts", "3 succeeded · 1 skipped").await;
    for id in &ids {
        let task = admin.tasks().get(*id).await.unwrap();
        assert_eq!(task.state, TaskState::Pending);
    }

    // Workflows on the rail: pause two of three, after the confirmation.
    let fixtures = server.launch_fixtures("Bulk", "Bulk repo").await;
    let mut runs = Vec::new();
    for name in ["run one", "run two", "run three"] {
        let run = admin
            .workflows()
            .create(&launch(fixtures, name))
            .await
            .unwrap();
        runs.push(run.id);
    }
    browser
        .goto(&server.at("/ui/workflows?mode=live"))
        .await
        .unwrap();
    wait_text(browser, "#rail", "run three").await;
    pick(browser, "#rail", runs[0]).await;
    pick(browser, "#rail", runs[1]).await;
    wait_text(browser, "#bulk-count", "2 workflows selected").await;
    click(browser, "[data-bulk='pause']").await;
    // "Back" leaves the selection and changes nothing.
    wait_text(browser, "#bulk-confirm", "Pause 2 workflows?").await;
    click(browser, "#bulk-back").await;
    wait_text(browser, "#bulk-count", "2 workflows selected").await;
    click(browser, "[data-bulk='pause']").await;
    click(browser, "#bulk-go").await;
    wait_text(browser, "#bulk-counts", "2 succeeded").await;
    for (i, id) in runs.iter().enumerate() {
        let state = admin.workflows().get(*id).await.unwrap().workflow.state;
        if i < 2 {
            assert_eq!(state, WorkflowState::Paused, "run {i}");
        } else {
            assert_ne!(state, WorkflowState::Paused, "run {i}");
        }
    }
    driver.close().await;
}

/// "All N matching" on a filtered task list: more rows than a page, acted on
/// through the bulk `filter` after a dry run counted them; rows outside the
/// filter are not part of the set (they would count as skipped).
#[tokio::test]
async fn all_tasks_matching_a_filtered_list_are_counted_by_a_dry_run_then_cancelled() {
    use orchestrator_client::TaskOperation;
    use orchestrator_client::api::TaskAction;
    let server = TestServer::start().await;
    let admin = server.admin();
    let mut pending = Vec::new();
    for i in 0..27 {
        let task = admin
            .tasks()
            .create(&CreateTask {
                title: format!("job {i:02}"),
                task_type: "code".into(),
                ..Default::default()
            })
            .await
            .unwrap();
        if i < 3 {
            admin
                .tasks()
                .act(task.id, TaskOperation::Cancel, &TaskAction::default())
                .await
                .unwrap();
        } else {
            pending.push(task.id);
        }
    }
    let driver = signed_in(&server).await;
    let browser = driver.browser();
    browser
        .goto(&server.at("/ui/tasks?state=pending"))
        .await
        .unwrap();
    wait_text(browser, "#task-list", "job 26").await;
    // The page shows 20 rows; the offer names all 24 that match.
    wait_text(
        browser,
        "#bulk-all-matching",
        "Select all 24 tasks matching",
    )
    .await;
    click(browser, "#bulk-all-matching").await;
    wait_text(browser, "#bulk-count", "All 24 tasks matching").await;
    click(browser, "[data-bulk='cancel']").await;
    wait_text(
        browser,
        "#bulk-confirm",
        "Cancel 24 tasks matching the list's filter?",
    )
    .await;
    // The dry run changed nothing.
    for id in &pending {
        assert_eq!(
            admin.tasks().get(*id).await.unwrap().state,
            TaskState::Pending
        );
    }
    let actions = admin
        .bulk_actions()
        .list(PageRequest::new(1, 10))
        .await
        .unwrap();
    assert_eq!(actions.items.len(), 1);
    assert!(actions.items[0].dry_run);
    assert_eq!(actions.items[0].counts.matched, 24);
    click(browser, "#bulk-go").await;
    wait_text(browser, "#bulk-counts", "24 of 24 handled").await;
    wait_text(browser, "#bulk-counts", "24 succeeded · 0 skipped").await;
    for id in &pending {
        assert_eq!(
            admin.tasks().get(*id).await.unwrap().state,
            TaskState::Cancelled
        );
    }
    driver.close().await;
}
