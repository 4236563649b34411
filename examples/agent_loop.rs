//! A minimal agent over the SDK: registers itself (execution mode `hybrid`,
//! so it takes orchestrator tasks as well as specialist ones), then claims,
//! starts and completes tasks until Ctrl-C.
//!
//! What it does with a task, kept deliberately simple:
//! - an orchestrator task of a workflow's `workflow.created` activation plans
//!   the run: for every stage of the workflow it creates a work item and one
//!   task on it (`stage_name` set, no role, so this same agent can take it),
//!   then completes the orchestrator task; the workflow completes when those
//!   tasks are done;
//! - any other task is completed with `{"done": true}` as its output.
//!
//! ```sh
//! ORCH_URL=http://127.0.0.1:8080 ORCH_API_KEY=orch_admin_... cargo run --example agent_loop
//! ```
//!
//! `ORCH_API_KEY` needs agent scope or higher (to register); the loop then
//! runs with the agent key the registration issues.

use orchestrator_client::Client;
use orchestrator_client::api::{
    ClaimTask, CompleteTask, CreateTask, CreateWorkItem, ExecutionMode, RegisterAgent, StartTask,
    Task,
};
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let url = std::env::var("ORCH_URL").unwrap_or_else(|_| "http://127.0.0.1:8080".into());
    let key = std::env::var("ORCH_API_KEY").map_err(|_| anyhow::anyhow!("set ORCH_API_KEY"))?;
    let name = std::env::var("AGENT_NAME").unwrap_or_else(|_| "example-agent".into());
    let bootstrap = Client::new(&url)?.with_api_key(key);
    let agent = bootstrap
        .agents()
        .register(&RegisterAgent {
            name: name.clone(),
            execution_mode: Some(ExecutionMode::Hybrid),
            issue_api_key: Some(true),
            heartbeat_interval_seconds: Some(30),
            ..Default::default()
        })
        .await?;
    let client =
        Client::new(&url)?.with_api_key(agent.api_key.clone().expect("registration issues a key"));
    eprintln!(
        "agent {} ({}) registered with tags {:?}; Ctrl-C to stop",
        agent.name, agent.id, agent.routing_tags
    );

    let mut last_beat = Instant::now();
    loop {
        if last_beat.elapsed() > Duration::from_secs(10) {
            client.agents().heartbeat(agent.id).await?;
            last_beat = Instant::now();
        }
        let tasks = client.tasks();
        let request = ClaimTask {
            agent_id: agent.id,
            ..Default::default()
        };
        let claimed = tokio::select! {
            _ = tokio::signal::ctrl_c() => break,
            claimed = tasks.claim(&request) => claimed?,
        };
        let Some(task) = claimed else {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => break,
                _ = tokio::time::sleep(Duration::from_millis(500)) => continue,
            }
        };
        eprintln!(
            "claimed {} [{}] {}",
            task.id,
            task.task_kind.as_str(),
            task.title
        );
        client.tasks().start(task.id, &StartTask::default()).await?;
        let output = if task.is_orchestrator_task {
            plan(&client, &task).await?
        } else {
            json!({ "done": true, "by": name })
        };
        client
            .tasks()
            .complete(
                task.id,
                &CompleteTask {
                    output: Some(output),
                    request_id: Some(format!("complete-{}", task.id)),
                    ..Default::default()
                },
            )
            .await?;
        eprintln!("completed {}", task.id);
    }
    eprintln!("stopping");
    Ok(())
}

/// Plans a workflow's first activation: one work item and task per stage.
async fn plan(client: &Client, task: &Task) -> anyhow::Result<serde_json::Value> {
    let Some(workflow_id) = task.workflow_id else {
        return Ok(json!({ "planned": 0 }));
    };
    if task.input["event_type"] != "workflow.created" {
        return Ok(json!({ "planned": 0, "note": "nothing to plan for this activation" }));
    }
    let detail = client.workflows().get(workflow_id).await?;
    let brief = detail
        .workflow
        .initial_input_packet
        .as_ref()
        .and_then(|p| p.summary.clone())
        .unwrap_or_default();
    for stage in &detail.workflow_stages {
        let item = client
            .workflows()
            .create_work_item(
                workflow_id,
                &CreateWorkItem {
                    title: format!("{}: {}", stage.name, detail.workflow.name),
                    stage_name: Some(stage.name.clone()),
                    goal: stage.goal.clone(),
                    request_id: Some(format!("plan-{}-{}", task.id, stage.name)),
                    ..Default::default()
                },
            )
            .await?;
        client
            .tasks()
            .create(&CreateTask {
                title: format!("Do the {} stage", stage.name),
                task_type: "code".into(),
                workflow_id: Some(workflow_id),
                work_item_id: Some(item.id),
                stage_name: Some(stage.name.clone()),
                input: Some(json!({ "brief": brief, "parameters": detail.workflow.parameters })),
                request_id: Some(format!("plan-task-{}-{}", task.id, stage.name)),
                ..Default::default()
            })
            .await?;
    }
    Ok(json!({ "planned": detail.workflow_stages.len() }))
}
