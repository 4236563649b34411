//! The SDK's conveniences: retries, generated request ids, auto-paging,
//! per-call timeouts and a task's live stream.
//!
//! ```sh
//! ORCH_API_KEY=orch_admin_... cargo run --example sdk_paging
//! ```

use futures_util::{StreamExt, TryStreamExt};
use orchestrator_client::api::{CreateTask, TaskFilter};
use orchestrator_client::{Client, RetryPolicy};
use std::time::Duration;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let url = std::env::var("ORCH_URL").unwrap_or_else(|_| "http://127.0.0.1:8080".into());
    let key = std::env::var("ORCH_API_KEY")
        .map_err(|_| anyhow::anyhow!("set ORCH_API_KEY to an admin key"))?;
    // Reads, and writes with a request_id, are retried on connection errors,
    // 429 (after Retry-After) and 503; every write here gets a request_id.
    let client = Client::builder(url)
        .bearer(key)
        .retry(RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_millis(200),
            max_delay: Duration::from_secs(30),
        })
        .generate_request_ids(true)
        .build()?;

    let task = client
        .tasks()
        .create(&CreateTask {
            title: "paging example".into(),
            task_type: "code".into(),
            ..Default::default()
        })
        .await?;

    // Every task, page after page, as one stream.
    let count = client
        .tasks()
        .list_all(&TaskFilter::default())
        .try_fold(0usize, |n, _| async move { Ok(n + 1) })
        .await?;
    println!("{count} tasks in the tenant");

    // One call with its own bound.
    let fresh = client
        .with_timeout(Duration::from_secs(5))
        .tasks()
        .get(task.id)
        .await?;
    println!("task {} is {}", fresh.id, fresh.state);

    // A held task's events, live (a pending one answers 409 and ends).
    let mut events = client.tasks().stream(task.id, None);
    if let Some(first) = events.next().await {
        match first {
            Ok(event) => println!("event {}", event.event_type),
            Err(e) => println!("not streaming: {e}"),
        }
    }
    Ok(())
}
