//! `orch workflows launch`: resolving the playbook and workspace, the input
//! packet, and `--watch`'s progress bar.

use super::{LaunchArgs, show_workflow};
use crate::cli::GlobalOpts;
use base64::Engine;
use indicatif::{ProgressBar, ProgressStyle};
use orchestrator_client::Client;
use orchestrator_client::api::workspaces::WorkspaceFilter;
use orchestrator_client::api::{
    CreateWorkflow, InitialInputPacket, InputFile, PageRequest, TaskState, WorkflowState,
};
use std::collections::BTreeMap;
use std::time::Duration;
use uuid::Uuid;

/// Launches a workflow; with `--watch`, follows it to its end and fails unless it completed.
pub(super) async fn launch(
    global: &GlobalOpts,
    client: &Client,
    args: LaunchArgs,
) -> anyhow::Result<()> {
    let playbook_id = resolve_playbook(client, &args.playbook).await?;
    let workspace_id = resolve_workspace(client, &args.workspace).await?;
    let mut parameters = BTreeMap::new();
    for param in &args.params {
        let (k, v) = param
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("--param takes key=value, got `{param}`"))?;
        parameters.insert(k.to_owned(), v.to_owned());
    }
    let mut files = Vec::new();
    for path in &args.files {
        let bytes = std::fs::read(path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
        files.push(InputFile {
            file_name: path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("file")
                .to_owned(),
            content_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
            content_type: content_type(path),
        });
    }
    let packet = (args.summary.is_some() || !files.is_empty()).then(|| InitialInputPacket {
        summary: args.summary.clone(),
        structured_inputs: None,
        files: (!files.is_empty()).then_some(files),
    });
    let workflow = client
        .workflows()
        .create(&CreateWorkflow {
            request_id: args.request_id,
            playbook_id,
            workspace_id,
            name: args.name,
            parameters: (!parameters.is_empty()).then_some(parameters),
            initial_input_packet: packet,
            ..Default::default()
        })
        .await?;
    if !args.watch {
        show_workflow(global, &workflow);
        return Ok(());
    }
    eprintln!("launched workflow {} ({})", workflow.id, workflow.name);
    let state = watch(client, workflow.id).await?;
    let detail = client.workflows().get(workflow.id).await?;
    show_workflow(global, &detail.workflow);
    if state != WorkflowState::Completed {
        anyhow::bail!("workflow {} ended {}", workflow.id, state.as_str());
    }
    Ok(())
}

async fn resolve_playbook(client: &Client, text: &str) -> anyhow::Result<Uuid> {
    if let Ok(id) = Uuid::parse_str(text) {
        return Ok(id);
    }
    let page = client.playbooks().list(PageRequest::new(1, 100)).await?;
    page.items
        .iter()
        .find(|p| p.slug == text || p.name == text)
        .map(|p| p.id)
        .ok_or_else(|| anyhow::anyhow!("no playbook with slug or name `{text}`"))
}

async fn resolve_workspace(client: &Client, text: &str) -> anyhow::Result<Uuid> {
    if let Ok(id) = Uuid::parse_str(text) {
        return Ok(id);
    }
    let page = client
        .workspaces()
        .list(
            &WorkspaceFilter {
                q: Some(text.to_owned()),
                is_active: None,
            },
            PageRequest::new(1, 100),
        )
        .await?;
    page.items
        .iter()
        .find(|w| w.slug == text || w.name == text)
        .map(|w| w.id)
        .ok_or_else(|| anyhow::anyhow!("no workspace with slug or name `{text}`"))
}

fn content_type(path: &std::path::Path) -> Option<String> {
    let ext = path.extension()?.to_str()?.to_lowercase();
    Some(
        match ext.as_str() {
            "md" => "text/markdown",
            "txt" => "text/plain",
            "json" => "application/json",
            "yaml" | "yml" => "application/yaml",
            "pdf" => "application/pdf",
            "png" => "image/png",
            _ => "application/octet-stream",
        }
        .to_owned(),
    )
}

/// Polls until the workflow ends, drawing task progress; the final state.
async fn watch(client: &Client, id: Uuid) -> anyhow::Result<WorkflowState> {
    let bar = ProgressBar::new(0);
    bar.set_style(ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} tasks done  {msg}",
    )?);
    bar.enable_steady_tick(Duration::from_millis(120));
    loop {
        let detail = client.workflows().get(id).await?;
        let count = |s: TaskState| detail.tasks.iter().filter(|t| t.state == s).count();
        let done = detail.tasks.iter().filter(|t| t.state.is_done()).count();
        bar.set_length(detail.tasks.len() as u64);
        bar.set_position(done as u64);
        bar.set_message(format!(
            "{} | pending {} claimed {} in_progress {} completed {} failed {}",
            detail.workflow.state.as_str(),
            count(TaskState::Pending),
            count(TaskState::Claimed),
            count(TaskState::InProgress),
            count(TaskState::Completed),
            count(TaskState::Failed),
        ));
        if detail.workflow.state.is_terminal() {
            bar.finish();
            return Ok(detail.workflow.state);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
