//! Playbooks, the community catalog, workspaces and the fleet from the browser.

use super::*;

#[tokio::test]
async fn catalog_import_and_rail_search_work_from_the_browser() {
    let server = TestServer::start().await;
    let (_, workspace_id) = server.launch_fixtures("Unused", "Main repo").await;
    let driver = Driver::start().await;
    let browser = driver.browser();
    sign_in(browser, &server, &server.admin_key).await;
    wait_url(browser, "/ui/workflows").await;

    // Import a catalog playbook: preview (one decision per artifact), import.
    browser.goto(&server.at("/ui/catalog")).await.unwrap();
    click_text(browser, ".cards button", "Preview import").await;
    click_text(browser, "main button", "Import").await;
    let done = wait_text(browser, "[role=status]", "Imported").await;
    let imported = done.text().await.unwrap();
    let playbooks = server
        .admin()
        .playbooks()
        .list(Default::default())
        .await
        .unwrap();
    let local = playbooks
        .items
        .iter()
        .find(|p| imported.contains(&p.name) && p.name != "Unused")
        .expect("the imported playbook is listed by the API");

    // Two workflows from it; the rail's search narrows to one, in the URL.
    for name in ["alpha release", "beta release"] {
        server
            .admin()
            .workflows()
            .create(&orchestrator_client::api::CreateWorkflow {
                playbook_id: local.id,
                workspace_id,
                name: name.into(),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    browser.goto(&server.at("/ui/workflows")).await.unwrap();
    wait_text(browser, "#rail", "beta release").await;
    let search = wait_css(browser, "#rail-search").await;
    search.send_keys("alpha").await.unwrap();
    search
        .send_keys(&fantoccini::key::Key::Enter.to_string())
        .await
        .unwrap();
    wait_url(browser, "search=alpha").await;
    wait_text(browser, "main", "1 in all").await;
    let rail = wait_css(browser, "#rail").await.text().await.unwrap();
    assert!(
        rail.contains("alpha release") && !rail.contains("beta release"),
        "{rail}"
    );
    driver.close().await;
}

#[tokio::test]
async fn playbooks_workspaces_and_fleet_act_from_the_browser() {
    let server = TestServer::start().await;
    let (playbook_id, workspace_id) = server.launch_fixtures("Old flow", "Files repo").await;
    let admin = server.admin();
    let environment = admin
        .environments()
        .create(
            &orchestrator_client::api::environments::CreateExecutionEnvironment {
                name: "Debian tools".into(),
                image: "debian:bookworm".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    admin
        .workers()
        .register(&orchestrator_client::api::RegisterWorker {
            name: "box-one".into(),
            agents: Some(vec![orchestrator_client::api::WorkerAgentSpec {
                name: "box-one-agent".into(),
                routing_tags: None,
                execution_mode: None,
            }]),
            ..Default::default()
        })
        .await
        .unwrap();
    let driver = Driver::start().await;
    let browser = driver.browser();
    sign_in(browser, &server, &server.admin_key).await;
    wait_url(browser, "/ui/workflows").await;

    // Playbooks: archive one; it shows archived and the API agrees.
    browser.goto(&server.at("/ui/playbooks")).await.unwrap();
    click(
        browser,
        &format!("tr[data-id='{playbook_id}'] button.archive"),
    )
    .await;
    wait_text(browser, "[role=status]", "Old flow archived").await;
    wait_text(browser, &format!("tr[data-id='{playbook_id}']"), "archived").await;
    assert!(admin.playbooks().get(playbook_id).await.unwrap().archived);

    // A workspace: set a memory entry, delete it; upload a file, download it.
    browser
        .goto(&server.at(&format!("/ui/workspaces/{workspace_id}")))
        .await
        .unwrap();
    wait_text(browser, "#memory", "No memory entries").await;
    type_into(browser, "#memory-key", "release").await;
    type_into(browser, "#memory-value", r#"{"train": 7}"#).await;
    click(browser, "#memory-save").await;
    wait_text(browser, "#memory tr[data-key=release]", r#"{"train":7}"#).await;
    let stored = admin.workspaces().get(workspace_id).await.unwrap();
    assert_eq!(stored.memory["release"], json!({ "train": 7 }));
    click(browser, "#memory tr[data-key=release] button").await;
    wait_text(browser, "#memory", "No memory entries").await;
    assert!(admin.workspaces().get(workspace_id).await.unwrap().memory["release"].is_null());

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "uploaded from the browser\n").unwrap();
    wait_css(browser, "#file-upload")
        .await
        .send_keys(path.to_str().unwrap())
        .await
        .unwrap();
    click(browser, "#file-upload-submit").await;
    wait_text(browser, "#files a.download", "notes.txt").await;
    // The download link serves the bytes to the cookie session.
    let body: Value = browser
        .execute_async(
            r#"const done = arguments[0];
               const href = document.querySelector('#files a.download').getAttribute('href');
               fetch(href, { credentials: 'same-origin' }).then(async (r) => done({ status: r.status, text: await r.text() }), (e) => done({ status: 0, text: String(e) }));"#,
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(body["status"], 200, "{body}");
    assert_eq!(body["text"], "uploaded from the browser\n");

    // The fleet: the environment with its image and posture, the worker.
    click(browser, "a[data-nav=fleet]").await;
    let row = format!("#environments tr[data-id='{}']", environment.id);
    wait_text(browser, &row, "debian:bookworm").await;
    wait_text(browser, &row, "unknown").await;
    wait_text(browser, "#workers", "box-one").await;
    wait_text(browser, "#agents", "box-one-agent").await;
    click(browser, &format!("{row} button[data-act=blocked]")).await;
    wait_text(browser, &format!("{row} td.support"), "blocked").await;
    assert_eq!(
        admin
            .environments()
            .get(environment.id)
            .await
            .unwrap()
            .support_status,
        Some(orchestrator_client::api::environments::SupportStatus::Blocked)
    );
    click(browser, &format!("{row} button[data-act=verify]")).await;
    wait_text(browser, "[role=status]", "Debian tools:").await;
    driver.close().await;
}
