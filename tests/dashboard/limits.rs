//! The limits page (issue 31): every concurrency key with its limit, held
//! and pending counts and every rate limit with its window use, kept up to
//! date; limits set, changed and removed from the page.

use super::*;
use orchestrator_client::api::{ClaimTask, RegisterAgent};

/// The cells of the row of `key` in the table under `table`, once they
/// read `want` (the page re-reads every 5 seconds).
async fn row_reads(browser: &Browser, table: &str, key: &str, want: &[&str]) {
    let css = format!("{table} tr[data-key='{key}'] td");
    let started = Instant::now();
    loop {
        let mut cells = Vec::new();
        if let Ok(found) = browser.find_all(Locator::Css(&css)).await {
            for cell in found {
                cells.push(cell.text().await.unwrap_or_default());
            }
        }
        if cells.len() > want.len() && cells[..want.len()] == *want {
            return;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "`{css}` read {cells:?}, expected {want:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Sets the number field `css` to `value`.
async fn set_number(browser: &Browser, css: &str, value: &str) {
    let field = wait_css(browser, css).await;
    field.clear().await.unwrap();
    field.send_keys(value).await.unwrap();
}

/// A task with the keys; its id.
async fn keyed_task(server: &TestServer, concurrency: Option<&str>, rate: Option<&str>) -> Uuid {
    server
        .admin()
        .tasks()
        .create(&CreateTask {
            title: "keyed".into(),
            task_type: "code".into(),
            concurrency_key: concurrency.map(Into::into),
            rate_limit_key: rate.map(Into::into),
            ..Default::default()
        })
        .await
        .unwrap()
        .id
}

/// A claim for a new agent named `name`: the claimed task's id.
async fn claim_one(server: &TestServer, name: &str) -> Option<Uuid> {
    let admin = server.admin();
    let agent = admin
        .agents()
        .register(&RegisterAgent {
            name: name.into(),
            ..Default::default()
        })
        .await
        .unwrap();
    admin
        .tasks()
        .claim(&ClaimTask {
            agent_id: agent.id,
            ..Default::default()
        })
        .await
        .unwrap()
        .map(|t| t.id)
}

#[tokio::test]
async fn limits_are_listed_with_their_counts_and_set_changed_and_removed_from_the_browser() {
    let server = TestServer::start().await;
    let admin = server.admin();
    // `repo`: limit 2, one held and two pending; `llm`: 5 per minute, one
    // claim in the window.
    admin.limits().set_concurrency("repo", 2).await.unwrap();
    admin.limits().set_rate("llm", 5, 60).await.unwrap();
    for _ in 0..3 {
        keyed_task(&server, Some("repo"), None).await;
    }
    let held = claim_one(&server, "first").await.expect("a repo task");
    keyed_task(&server, None, Some("llm")).await;

    let driver = signed_in(&server).await;
    let browser = driver.browser();
    click_text(browser, "nav a", "Limits").await;
    wait_url(browser, "/ui/limits").await;
    row_reads(
        browser,
        "#concurrency-limits",
        "repo",
        &["repo", "2", "1", "2"],
    )
    .await;
    row_reads(
        browser,
        "#rate-limits",
        "llm",
        &["llm", "5", "60s", "0 of 5", "1"],
    )
    .await;

    // The counts follow the tasks without a reload: a second claim fills
    // the key (shown as full; one task still waits), the rate task's claim
    // uses the window.
    claim_one(&server, "second").await.expect("the second slot");
    claim_one(&server, "third").await.expect("the rate task");
    row_reads(
        browser,
        "#concurrency-limits",
        "repo",
        &["repo", "2", "2 (full)", "1"],
    )
    .await;
    row_reads(
        browser,
        "#rate-limits",
        "llm",
        &["llm", "5", "60s", "1 of 5", "0"],
    )
    .await;

    // A new concurrency limit from the form.
    type_into(browser, "#concurrency-key", "deploy").await;
    set_number(browser, "#concurrency-limit", "3").await;
    click_text(browser, "main button", "Set concurrency limit").await;
    wait_text(browser, "main .ok", "deploy: at most 3 held.").await;
    row_reads(
        browser,
        "#concurrency-limits",
        "deploy",
        &["deploy", "3", "0", "0"],
    )
    .await;
    assert_eq!(
        admin
            .limits()
            .get_concurrency("deploy")
            .await
            .unwrap()
            .limit,
        3
    );

    // Editing: `repo` down to 1 (its two held tasks stay held).
    let key = wait_css(browser, "#concurrency-key").await;
    key.clear().await.unwrap();
    key.send_keys("repo").await.unwrap();
    set_number(browser, "#concurrency-limit", "1").await;
    click_text(browser, "main button", "Set concurrency limit").await;
    wait_text(browser, "main .ok", "repo: at most 1 held.").await;
    row_reads(
        browser,
        "#concurrency-limits",
        "repo",
        &["repo", "1", "2 (full)", "1"],
    )
    .await;
    let repo = admin.limits().get_concurrency("repo").await.unwrap();
    assert_eq!((repo.limit, repo.held), (1, 2));

    // A rate limit changed from its form: 10 per 30 seconds.
    type_into(browser, "#rate-key", "llm").await;
    set_number(browser, "#rate-limit", "10").await;
    set_number(browser, "#rate-period", "30").await;
    click_text(browser, "main button", "Set rate limit").await;
    wait_text(browser, "main .ok", "llm: at most 10 claims per 30s.").await;
    row_reads(
        browser,
        "#rate-limits",
        "llm",
        &["llm", "10", "30s", "1 of 10", "0"],
    )
    .await;
    let llm = admin.limits().get_rate("llm").await.unwrap();
    assert_eq!((llm.limit, llm.period_seconds), (10, 30));

    // A refused value shows the server's answer and changes nothing.
    let key = wait_css(browser, "#concurrency-key").await;
    key.clear().await.unwrap();
    key.send_keys(&"k".repeat(200)).await.unwrap();
    browser
        .execute(
            "const f = document.getElementById('concurrency-key'); f.removeAttribute('maxlength'); f.value = f.value + 'k'; return null;",
            vec![],
        )
        .await
        .unwrap();
    click_text(browser, "main button", "Set concurrency limit").await;
    wait_text(browser, "main .error", "200").await;
    assert_eq!(
        admin
            .limits()
            .list_concurrency(Default::default())
            .await
            .unwrap()
            .items
            .len(),
        2,
        "nothing was stored"
    );

    // Removing `deploy`'s limit: with no task it leaves the list. A held
    // task cancelled frees one of `repo`'s slots on the page (one is still
    // held: full at limit 1).
    click(
        browser,
        "#concurrency-limits tr[data-key='deploy'] button[data-act='delete']",
    )
    .await;
    wait_text(browser, "main .ok", "deploy: back to limit 1.").await;
    let started = Instant::now();
    while browser
        .find(Locator::Css("#concurrency-limits tr[data-key='deploy']"))
        .await
        .is_ok()
    {
        assert!(started.elapsed() < PATIENCE, "deploy stayed listed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    admin
        .tasks()
        .act(
            held,
            orchestrator_client::TaskOperation::Cancel,
            &Default::default(),
        )
        .await
        .unwrap();
    row_reads(
        browser,
        "#concurrency-limits",
        "repo",
        &["repo", "1", "1 (full)", "1"],
    )
    .await;
    driver.close_expecting(&[422]).await;
}
