//! Names where people think in names: a playbook, workspace or workflow
//! argument may be its id, a unique prefix of its id, its slug or its name.
//! Nothing matching exits 4 (as a 404 would); several matches are an error
//! that lists them.

use crate::output;
use orchestrator_client::Client;
use orchestrator_client::api::workspaces::WorkspaceFilter;
use orchestrator_client::api::{Page, PageRequest, WorkflowFilter};
use std::future::Future;
use uuid::Uuid;

/// Shortest id prefix taken as one (shorter text is only a name).
const MIN_PREFIX: usize = 4;

/// One candidate: its id and the words that name it (slug, name).
struct Candidate {
    id: Uuid,
    names: Vec<String>,
}

/// A playbook by id, id prefix, slug or name.
pub async fn playbook(client: &Client, text: &str) -> anyhow::Result<Uuid> {
    if let Ok(id) = Uuid::parse_str(text) {
        return Ok(id);
    }
    let playbooks = client.playbooks();
    let list = every(|p| playbooks.list(p)).await?;
    let candidates = list
        .into_iter()
        .map(|p| Candidate {
            id: p.id,
            names: vec![p.slug, p.name],
        })
        .collect();
    pick("playbook", text, candidates)
}

/// A workspace by id, id prefix, slug or name.
pub async fn workspace(client: &Client, text: &str) -> anyhow::Result<Uuid> {
    if let Ok(id) = Uuid::parse_str(text) {
        return Ok(id);
    }
    let filter = WorkspaceFilter::default();
    let workspaces = client.workspaces();
    let list = every(|p| workspaces.list(&filter, p)).await?;
    let candidates = list
        .into_iter()
        .map(|w| Candidate {
            id: w.id,
            names: vec![w.slug, w.name],
        })
        .collect();
    pick("workspace", text, candidates)
}

/// A workflow by id, id prefix or name.
pub async fn workflow(client: &Client, text: &str) -> anyhow::Result<Uuid> {
    if let Ok(id) = Uuid::parse_str(text) {
        return Ok(id);
    }
    let filter = WorkflowFilter::default();
    let workflows = client.workflows();
    let list = every(|p| workflows.list(&filter, p)).await?;
    let candidates = list
        .into_iter()
        .map(|w| Candidate {
            id: w.workflow.id,
            names: vec![w.workflow.name],
        })
        .collect();
    pick("workflow", text, candidates)
}

/// Every item of a paged list.
async fn every<T, F, Fut>(mut fetch: F) -> anyhow::Result<Vec<T>>
where
    F: FnMut(PageRequest) -> Fut,
    Fut: Future<Output = orchestrator_client::Result<Page<T>>>,
{
    let mut all = Vec::new();
    let mut number = 1;
    loop {
        let page = fetch(PageRequest::new(number, 100)).await?;
        let done =
            page.items.is_empty() || u64::from(page.page) * u64::from(page.per_page) >= page.total;
        all.extend(page.items);
        if done {
            return Ok(all);
        }
        number += 1;
    }
}

/// The one candidate `text` names: an exact slug or name first
/// (case-insensitive), else a unique id prefix.
fn pick(kind: &str, text: &str, candidates: Vec<Candidate>) -> anyhow::Result<Uuid> {
    let named: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| c.names.iter().any(|n| n.eq_ignore_ascii_case(text)))
        .collect();
    let matches = if named.is_empty() && text.len() >= MIN_PREFIX {
        let prefix = text.to_ascii_lowercase();
        candidates
            .iter()
            .filter(|c| c.id.to_string().starts_with(&prefix))
            .collect()
    } else {
        named
    };
    match matches.as_slice() {
        [one] => Ok(one.id),
        [] => Err(output::not_found(format!(
            "no {kind} has the id, id prefix, slug or name `{text}`"
        ))),
        several => {
            let list: Vec<String> = several
                .iter()
                .map(|c| format!("  {} {}", c.id, c.names.last().cloned().unwrap_or_default()))
                .collect();
            anyhow::bail!(
                "`{text}` names {} {kind}s; give one of their ids:\n{}",
                several.len(),
                list.join("\n")
            )
        }
    }
}
