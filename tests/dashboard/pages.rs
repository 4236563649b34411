//! Every page wide, narrow and dark (and the screenshots of the docs).

use super::*;

/// Every page at 1280×800 and in a narrow window (no sideways scrolling),
/// and the workflow page in the dark theme, with no console errors. With
/// `ORCH_SCREENSHOTS=<dir>` it also saves each view there as a PNG (how
/// docs/screenshots is made).
#[tokio::test]
async fn every_page_renders_wide_narrow_and_dark() {
    let server = TestServer::start().await;
    let (playbook_id, workspace_id) = server.launch_fixtures("Release train", "Main repo").await;
    let admin = server.admin();
    let workflow = admin
        .workflows()
        .create(&orchestrator_client::api::CreateWorkflow {
            playbook_id,
            workspace_id,
            name: "Release 2.4".into(),
            parameters: Some([("ticket".to_owned(), "OPS-7".to_owned())].into()),
            ..Default::default()
        })
        .await
        .unwrap();
    for (title, column) in [
        ("Changelog", "inbox"),
        ("Migrate the schema", "active"),
        ("Tag the release", "done"),
    ] {
        admin
            .workflows()
            .create_work_item(
                workflow.id,
                &orchestrator_client::api::CreateWorkItem {
                    title: title.into(),
                    stage_name: Some("build".into()),
                    column_id: Some(column.into()),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    }
    let mut task_id = None;
    for title in [
        "Write the changelog",
        "Run the migrations",
        "Review the diff",
    ] {
        let task = admin
            .tasks()
            .create(&CreateTask {
                title: title.into(),
                task_type: "code".into(),
                workflow_id: Some(workflow.id),
                input: Some(json!({ "branch": "release/2.4" })),
                ..Default::default()
            })
            .await
            .unwrap();
        task_id.get_or_insert(task.id);
    }
    for operation in ["tool.git_checkout", "tool.run_tests", "llm.plan"] {
        ingest(&server, workflow.id, operation).await;
    }
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
    let _ = environment;
    admin
        .workers()
        .register(&orchestrator_client::api::RegisterWorker {
            name: "build-box".into(),
            routing_tags: Some(vec!["env:runner".into()]),
            agents: Some(vec![orchestrator_client::api::WorkerAgentSpec {
                name: "build-box-agent".into(),
                routing_tags: None,
                execution_mode: None,
            }]),
            ..Default::default()
        })
        .await
        .unwrap();

    let shots = std::env::var_os("ORCH_SCREENSHOTS").map(std::path::PathBuf::from);
    let driver = Driver::start().await;
    let browser = driver.browser();
    browser.goto(&server.at("/ui/signin")).await.unwrap();
    wait_css(browser, "#api-key").await;
    let shoot = |name: &'static str| {
        let shots = shots.clone();
        async move {
            if let Some(dir) = shots {
                // Relative times and fonts settle before the picture.
                tokio::time::sleep(Duration::from_millis(300)).await;
                let png = browser.screenshot().await.unwrap();
                std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
            }
        }
    };
    shoot("signin").await;
    submit_key(browser, &server.admin_key).await;
    wait_text(browser, "#rail", "Release 2.4").await;

    let pages: Vec<(&str, String, &str, &str)> = vec![
        ("rail", "/ui/workflows".into(), "#rail", "Release 2.4"),
        (
            "workflow",
            format!("/ui/workflows/{}", workflow.id),
            "#tasks",
            "Review the diff",
        ),
        (
            "task",
            format!("/ui/tasks/{}", task_id.unwrap()),
            "main h1",
            "Write the changelog",
        ),
        (
            "tasks",
            "/ui/tasks".into(),
            "#task-list",
            "Write the changelog",
        ),
        (
            "webhooks",
            "/ui/webhooks".into(),
            "#webhooks",
            "No webhooks yet",
        ),
        (
            "logs",
            format!("/ui/logs?workflow_id={}", workflow.id),
            "#log-rows",
            "tool.run_tests",
        ),
        (
            "launch",
            "/ui/launch".into(),
            "#launch-playbook",
            "Release train",
        ),
        ("catalog", "/ui/catalog".into(), ".cards", "Preview import"),
        (
            "playbooks",
            "/ui/playbooks".into(),
            "main table",
            "Release train",
        ),
        (
            "workspace",
            format!("/ui/workspaces/{workspace_id}"),
            "main h1",
            "Main repo",
        ),
        (
            "fleet",
            "/ui/fleet".into(),
            "#environments",
            "debian:bookworm",
        ),
    ];
    for (width, suffix) in [(1280u32, ""), (420u32, "narrow-")] {
        browser.set_window_size(width, 800).await.unwrap();
        for (name, path, css, text) in &pages {
            browser.goto(&server.at(path)).await.unwrap();
            wait_text(browser, css, text).await;
            // Nothing wider than the window: no sideways scrolling.
            wait_js(
                browser,
                "return document.documentElement.scrollWidth <= window.innerWidth + 1;",
                &format!("{path} fits {width} px"),
            )
            .await;
            if suffix.is_empty() || *name == "workflow" || *name == "rail" {
                let name = format!("{suffix}{name}");
                if let Some(dir) = &shots {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    let png = browser.screenshot().await.unwrap();
                    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
                }
            }
        }
    }

    // The dark theme follows the system setting.
    browser.set_window_size(1280, 800).await.unwrap();
    browser
        .issue_cmd(DevTools(json!({
            "cmd": "Emulation.setEmulatedMedia",
            "params": { "features": [{ "name": "prefers-color-scheme", "value": "dark" }] }
        })))
        .await
        .unwrap();
    browser
        .goto(&server.at(&format!("/ui/workflows/{}", workflow.id)))
        .await
        .unwrap();
    wait_text(browser, "#tasks", "Review the diff").await;
    let background: Value = browser
        .execute(
            "return getComputedStyle(document.body).backgroundColor;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(background, "rgb(15, 18, 22)", "the dark background");
    shoot("dark-workflow").await;
    driver.close().await;
}
