//! Why a task failed, and why a pending task waits: what `orch tasks why`
//! prints for one task and what `--watch` prints when a workflow ends
//! failed or stalls, so nobody has to dig through the logs to find out.

use orchestrator_client::Client;
use orchestrator_client::api::{
    Agent, LogFilter, LogLevel, LogQuery, PageRequest, Task, TaskState,
};
use std::fmt::Write;

/// The stderr lines of a failed command shown at most.
const TAIL: usize = 10;

/// The explanation of one task's failure: its error, and the last lines
/// its command wrote to stderr (from the worker's `task.failed` log row).
pub async fn failure(client: &Client, task: &Task) -> anyhow::Result<String> {
    let mut text = String::new();
    writeln!(text, "task {} ({}) is {}", task.id, task.title, task.state)?;
    if let Some(error) = &task.error {
        let field = |k: &str| error.get(k).and_then(|v| v.as_str()).map(str::to_owned);
        if let Some(category) = field("category") {
            writeln!(text, "  category: {category}")?;
        }
        if let Some(message) = field("message") {
            writeln!(text, "  error: {message}")?;
        }
    } else if task.state == TaskState::Failed {
        writeln!(text, "  (no error was reported)")?;
    }
    let rows = client
        .logs()
        .query(&LogQuery {
            filter: LogFilter {
                task_id: Some(task.id),
                level: Some(LogLevel::Error),
                operation: Some("task.failed".into()),
                ..Default::default()
            },
            per_page: Some(1),
            ..Default::default()
        })
        .await?;
    let lines: Vec<String> = rows
        .items
        .first()
        .and_then(|row| row.payload.as_ref()?.get("last_lines")?.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|l| l.as_str().map(str::to_owned))
        .collect();
    if !lines.is_empty() {
        writeln!(text, "  last stderr lines:")?;
        for line in &lines[lines.len().saturating_sub(TAIL)..] {
            writeln!(text, "    {line}")?;
        }
    }
    Ok(text)
}

/// For pending tasks nobody can claim: "no online agent has tags …", once
/// per set of required tags; empty when every pending task has a taker.
pub async fn unclaimable(client: &Client, tasks: &[Task]) -> anyhow::Result<Vec<String>> {
    let pending: Vec<&Task> = tasks
        .iter()
        .filter(|t| t.state == TaskState::Pending)
        .collect();
    if pending.is_empty() {
        return Ok(Vec::new());
    }
    let agents = online_agents(client).await?;
    let mut said = Vec::new();
    for task in pending {
        let takers = agents.iter().any(|a| {
            task.required_tags
                .iter()
                .all(|t| a.routing_tags.contains(t))
        });
        if takers {
            continue;
        }
        let line = if task.required_tags.is_empty() {
            "no agent is online to claim pending tasks".to_owned()
        } else {
            format!(
                "no online agent has tags {} (start one: orch worker run --name NAME --tag {} -- COMMAND)",
                task.required_tags.join(", "),
                task.required_tags.join(" --tag ")
            )
        };
        if !said.contains(&line) {
            said.push(line);
        }
    }
    Ok(said)
}

/// Every agent that is online (`active` or `busy`; all pages).
async fn online_agents(client: &Client) -> anyhow::Result<Vec<Agent>> {
    let mut all = Vec::new();
    let mut page = PageRequest {
        page: 1,
        per_page: 100,
    };
    loop {
        let got = client.agents().list(page).await?;
        let more = u64::from(got.page) * u64::from(got.per_page) < got.total;
        all.extend(
            got.items
                .into_iter()
                .filter(|a| matches!(a.status.as_str(), "active" | "busy")),
        );
        if !more {
            return Ok(all);
        }
        page.page = got.page + 1;
    }
}
