//! Names where people think in names: a playbook, workspace or workflow
//! argument may be its id, a unique prefix of its id, its slug or its name;
//! a task or work item argument its id or a unique prefix. Every one may
//! also be the short id listings show (the last 8 hex digits, see
//! [`crate::output::short_id`]): UUIDv7 ids share their leading timestamp
//! digits, so the tail is the part people can tell apart and type back.
//! Nothing matching exits 4 (as a 404 would); several matches are an error
//! that lists them.

use crate::output;
use orchestrator_client::Client;
use orchestrator_client::api::workspaces::WorkspaceFilter;
use orchestrator_client::api::{Page, PageRequest, TaskFilter, WorkflowFilter};
use orchestrator_client::api::{WorkItem, WorkflowDetail};
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

/// A workflow by id, id prefix, short id or name.
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

/// A task by id, id prefix or short id, among every task of the tenant.
pub async fn task(client: &Client, text: &str) -> anyhow::Result<Uuid> {
    if let Ok(id) = Uuid::parse_str(text) {
        return Ok(id);
    }
    let filter = TaskFilter::default();
    let tasks = client.tasks();
    let list = every(|p| tasks.list(&filter, p)).await?;
    let candidates = list
        .into_iter()
        .map(|t| Candidate {
            id: t.id,
            names: vec![t.title],
        })
        .collect();
    pick_id("task", text, candidates)
}

/// A task of one workflow by id, id prefix or short id.
pub fn task_of(detail: &WorkflowDetail, text: &str) -> anyhow::Result<Uuid> {
    if let Ok(id) = Uuid::parse_str(text) {
        return Ok(id);
    }
    let candidates = detail
        .tasks
        .iter()
        .map(|t| Candidate {
            id: t.id,
            names: vec![t.title.clone()],
        })
        .collect();
    pick_id("task", text, candidates)
}

/// A work item of one workflow by id, id prefix, short id or title.
pub fn work_item_of(items: &[WorkItem], text: &str) -> anyhow::Result<Uuid> {
    if let Ok(id) = Uuid::parse_str(text) {
        return Ok(id);
    }
    let candidates = items
        .iter()
        .map(|w| Candidate {
            id: w.id,
            names: vec![w.title.clone()],
        })
        .collect();
    pick("work item", text, candidates)
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
/// (case-insensitive), else a unique id prefix or short id.
fn pick(kind: &str, text: &str, candidates: Vec<Candidate>) -> anyhow::Result<Uuid> {
    let named: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| c.names.iter().any(|n| n.eq_ignore_ascii_case(text)))
        .collect();
    let matches = if named.is_empty() {
        by_id(text, &candidates)
    } else {
        named
    };
    one_of(
        kind,
        text,
        "id, id prefix, short id, slug or name",
        &matches,
    )
}

/// [`pick`] for things people name by id only (tasks): a title is shown
/// with a match but never matched.
fn pick_id(kind: &str, text: &str, candidates: Vec<Candidate>) -> anyhow::Result<Uuid> {
    let matches = by_id(text, &candidates);
    one_of(kind, text, "id, id prefix or short id", &matches)
}

/// The candidates whose id starts with `text` or whose last hex digits are
/// `text` (the short id); nothing for text shorter than [`MIN_PREFIX`].
fn by_id<'a>(text: &str, candidates: &'a [Candidate]) -> Vec<&'a Candidate> {
    if text.len() < MIN_PREFIX {
        return Vec::new();
    }
    let wanted = text.to_ascii_lowercase();
    let hex = wanted.replace('-', "");
    candidates
        .iter()
        .filter(|c| {
            c.id.to_string().starts_with(&wanted)
                || (!hex.is_empty() && c.id.simple().to_string().ends_with(&hex))
        })
        .collect()
}

/// The one match, or the error for none (exit 4) or several (the list).
fn one_of(kind: &str, text: &str, forms: &str, matches: &[&Candidate]) -> anyhow::Result<Uuid> {
    match matches {
        [one] => Ok(one.id),
        [] => Err(output::not_found(format!(
            "no {kind} has the {forms} `{text}`"
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
