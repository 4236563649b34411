//! Schedules from the browser.

use super::*;

#[tokio::test]
async fn schedules_are_created_with_a_preview_triggered_and_followed_from_the_browser() {
    let server = TestServer::start().await;
    let driver = Driver::start().await;
    let browser = driver.browser();
    sign_in(browser, &server, &server.admin_key).await;
    wait_url(browser, "/ui/workflows").await;

    // The form previews the next five fires in the zone as it is typed.
    browser.goto(&server.at("/ui/schedules")).await.unwrap();
    wait_text(browser, "#schedules", "No schedules yet").await;
    type_into(browser, "#new-name", "Paris nightly").await;
    type_into(browser, "#new-cron", "0 2 * * *").await;
    let zone = wait_css(browser, "#new-timezone").await;
    zone.clear().await.unwrap();
    zone.send_keys("Europe/Paris").await.unwrap();
    zone.send_keys(&fantoccini::key::Key::Tab.to_string())
        .await
        .unwrap();
    // Paris is at +01:00 or +02:00, never at UTC's +00:00.
    wait_text(browser, "#new-preview li", "T02:00:00+0").await;
    let started = Instant::now();
    let preview = loop {
        let text = wait_css(browser, "#new-preview")
            .await
            .text()
            .await
            .unwrap();
        if !text.contains("+00:00") || started.elapsed() > PATIENCE {
            break text;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(preview.matches("T02:00:00+0").count(), 5, "{preview}");
    assert!(!preview.contains("+00:00"), "{preview}");

    // A task target; created, the schedule's page opens.
    browser
        .find(Locator::Css("#new-target option[value=task]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    type_into(
        browser,
        "#new-task",
        r#"{"title": "Nightly report", "type": "code"}"#,
    )
    .await;
    click(browser, "#new-save").await;
    wait_url(browser, "/ui/schedules/").await;
    wait_text(browser, "main", "0 2 * * * (Europe/Paris)").await;

    // Trigger: a launched run linking to its task.
    click_text(browser, "main button", "Trigger").await;
    wait_text(browser, "[role=status]", "launched").await;
    click_text(browser, "#runs a", "task").await;
    wait_url(browser, "/ui/tasks/").await;
    wait_text(browser, "main", "Nightly report").await;

    // Back on the list: next fire and last outcome, and pause.
    browser.goto(&server.at("/ui/schedules")).await.unwrap();
    wait_text(browser, "#schedules", "launched").await;
    click_text(browser, "#schedules button", "Pause").await;
    wait_text(browser, "#schedules", "paused").await;
    let listed = server
        .admin()
        .schedules()
        .list(&Default::default(), Default::default())
        .await
        .unwrap();
    assert!(listed.items[0].paused);
    driver.close().await;
}
