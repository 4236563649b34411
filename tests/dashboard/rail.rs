//! The workflow rail: paging and narrowing in the URL, and eight tabs over one shared stream.

use super::*;

/// Eight tabs of the dashboard: a browser allows six HTTP/1.1 connections
/// to one host, so a stream per tab would leave the seventh tab loading
/// forever. The tabs share one event stream (the leader tab follows it and
/// passes frames on), so every tab loads and every tab sees live changes.
#[tokio::test]
async fn eight_tabs_load_and_follow_live_changes_over_one_shared_stream() {
    let server = TestServer::start().await;
    let (playbook_id, workspace_id) = server.launch_fixtures("Tabs", "Tab repo").await;
    let launch = |name: &str| orchestrator_client::api::CreateWorkflow {
        playbook_id,
        workspace_id,
        name: name.into(),
        ..Default::default()
    };
    server
        .admin()
        .workflows()
        .create(&launch("first run"))
        .await
        .unwrap();
    let driver = Driver::start().await;
    let browser = driver.browser();
    sign_in(browser, &server, &server.admin_key).await;
    wait_url(browser, "/ui/workflows").await;
    for tab in 1..8 {
        let opened = browser.new_window(true).await.unwrap();
        browser.switch_to_window(opened.handle).await.unwrap();
        let rail = server.at("/ui/workflows");
        tokio::time::timeout(Duration::from_secs(20), browser.goto(&rail))
            .await
            .unwrap_or_else(|_| panic!("tab {} did not load (connections used up)", tab + 1))
            .unwrap();
        wait_text(browser, "#rail", "first run").await;
    }
    // A change shows live in the last tab, which is not the one streaming.
    server
        .admin()
        .workflows()
        .create(&launch("late run"))
        .await
        .unwrap();
    wait_text(browser, "#rail", "late run").await;
    driver.close().await;
}

#[tokio::test]
async fn the_rail_pages_and_narrows_in_the_url() {
    let server = TestServer::start().await;
    let (playbook_id, workspace_id) = server.launch_fixtures("Many", "Main repo").await;
    let admin = server.admin();
    for n in 0..23 {
        admin
            .workflows()
            .create(&orchestrator_client::api::CreateWorkflow {
                playbook_id,
                workspace_id,
                name: format!("run {n:02}"),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    let driver = Driver::start().await;
    let browser = driver.browser();
    sign_in(browser, &server, &server.admin_key).await;
    wait_text(browser, "main", "Page 1 of 2 · 23 in all").await;
    click_text(browser, ".pager button", "Next").await;
    wait_url(browser, "page=2").await;
    wait_text(browser, "main", "Page 2 of 2 · 23 in all").await;
    let rows = browser
        .find_all(Locator::Css("#rail tbody tr"))
        .await
        .unwrap();
    assert_eq!(rows.len(), 3);
    // The page is a URL: opening it again shows the same page.
    browser.refresh().await.unwrap();
    wait_text(browser, "main", "Page 2 of 2").await;
    // Needs action only: none of these has a task needing a human.
    click(browser, "#rail-needs").await;
    wait_url(browser, "needs_action_only=true").await;
    wait_text(browser, "main", "No workflows here yet").await;
    driver.close().await;
}
