//! The webhooks page (issue 32): create (the secret shown once), the
//! delivery log with status, response code and error, redeliver, test send,
//! disable and enable, rotate, delete, against a real receiver.

use super::*;
use orchestrator_tests::webhook_receiver::Receiver;

#[tokio::test]
async fn webhooks_are_created_tested_redelivered_rotated_and_deleted_from_the_browser() {
    let server = TestServer::start().await;
    let admin = server.admin();
    // The first post is refused with a 500, every later one accepted.
    let receiver = Receiver::start(&[500], 200).await;
    let driver = signed_in(&server).await;
    let browser = driver.browser();

    click_text(browser, "nav a", "Webhooks").await;
    wait_url(browser, "/ui/webhooks").await;
    wait_text(browser, "#webhooks", "No webhooks yet").await;
    let url_field = wait_css(browser, "#new-webhook-url").await;
    url_field.send_keys(&receiver.url).await.unwrap();
    let events = wait_css(browser, "#new-webhook-events").await;
    events.clear().await.unwrap();
    events.send_keys("task.created").await.unwrap();
    type_into(browser, "#new-webhook-description", "ops channel").await;
    click(browser, "#new-webhook-save").await;
    let secret = wait_text(browser, "#webhook-secret", "whsec_").await;
    let secret = secret.text().await.unwrap();
    wait_text(browser, "#webhook-list", &receiver.url).await;
    let hooks = admin.webhooks().list(Default::default()).await.unwrap();
    assert_eq!(hooks.items.len(), 1);
    let hook = hooks.items[0].clone();
    assert_eq!(hook.event_types, vec!["task.created".to_owned()]);
    assert_eq!(hook.description.as_deref(), Some("ops channel"));

    // The secret is shown once: not on the webhook's own page.
    click_text(browser, "#webhook-list a", &receiver.url).await;
    wait_url(browser, &format!("/ui/webhooks/{}", hook.id)).await;
    wait_text(browser, "#webhook", "task.created").await;
    wait_text(browser, "#deliveries", "No deliveries yet").await;
    let source = browser.source().await.unwrap();
    assert!(!source.contains(secret.trim()), "the secret shown again");

    // A test send meets the 500: the log shows the code and the retry
    // scheduled; the retry (about 5 s later) is delivered.
    click(browser, "#webhook-test").await;
    wait_text(browser, "#webhook-done", "Test sent").await;
    wait_text(browser, "#delivery-log", "HTTP 500").await;
    wait_text(browser, "#delivery-log", "webhook.test").await;
    let started = Instant::now();
    while receiver.calls().len() < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(40),
            "the retry of the test delivery never came"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    wait_text(
        browser,
        "#delivery-log tr[data-status='delivered']",
        "HTTP 200",
    )
    .await;
    // Redeliver the delivered attempt: a third post with the same id.
    click(
        browser,
        "#delivery-log tr[data-status='delivered'] button[data-act='redeliver']",
    )
    .await;
    wait_text(browser, "#webhook-done", "queued again").await;
    let calls = receiver.wait_for(3).await;
    assert_eq!(calls[0].answered, 500);
    assert!(
        calls.iter().all(|c| c.id == calls[0].id),
        "every attempt of the delivery has one webhook-id"
    );
    wait_text(
        browser,
        "#delivery-log tr[data-attempt='3'][data-status='delivered']",
        "HTTP 200",
    )
    .await;

    // An event of the chosen type is delivered and logged by itself.
    admin
        .tasks()
        .create(&CreateTask {
            title: "announce me".into(),
            task_type: "code".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    wait_text(browser, "#delivery-log", "task.created").await;

    // Disable, then enable again.
    click_text(browser, "#webhook-toggle", "Disable").await;
    wait_text(browser, "#webhook", "disabled").await;
    assert!(!admin.webhooks().get(hook.id).await.unwrap().enabled);
    click_text(browser, "#webhook-toggle", "Enable").await;
    wait_text(browser, "#webhook", "enabled").await;
    assert!(admin.webhooks().get(hook.id).await.unwrap().enabled);

    // Rotate: a new secret, shown once, and the old one's overlap.
    click(browser, "#webhook-rotate").await;
    let rotated = wait_text(browser, "#webhook-secret", "whsec_").await;
    let rotated = rotated.text().await.unwrap();
    assert_ne!(rotated.trim(), secret.trim());
    wait_text(browser, "#webhook", "Previous secret signs until").await;

    // Delete, after the confirmation.
    click(browser, "#webhook-delete").await;
    click(browser, "#webhook-delete-go").await;
    wait_url(browser, "/ui/webhooks").await;
    wait_text(browser, "#webhooks", "No webhooks yet").await;
    assert!(
        admin
            .webhooks()
            .list(Default::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    driver.close().await;
}
