//! Names where people think in names: a playbook, workspace, workflow or
//! agent argument may be its id, a unique prefix of its id, its slug or its
//! name; a task or work item argument its id or a unique prefix. Every one
//! may also be the short id listings show (the last 8 hex digits, see
//! [`crate::output::short_id`]): UUIDv7 ids share their leading timestamp
//! digits, so the tail is the part people can tell apart and type back.
//! Nothing matching exits 4 (as a 404 would); several matches are an error
//! that lists them.
//!
//! Tasks, workflows and agents are asked of the server with the list
//! filters `id_prefix`, `id_suffix` and `name` (not for tasks): at most
//! three requests made together, whatever the tenant holds. Playbooks and
//! workspaces are few per tenant and are read whole.

use crate::output;
use orchestrator_client::Client;
use orchestrator_client::api::workspaces::WorkspaceFilter;
use orchestrator_client::api::{
    Agent, AgentFilter, Page, PageRequest, Task, TaskFilter, WorkflowFilter,
};
use orchestrator_client::api::{WorkItem, WorkflowDetail, WorkflowListItem};
use std::future::Future;
use uuid::Uuid;

/// Shortest id prefix taken as one (shorter text is only a name); the
/// server's `id_prefix` and `id_suffix` filters take the same.
const MIN_PREFIX: usize = 4;

/// Most hex digits an id has (the server's filters take at most these).
const MAX_DIGITS: usize = 32;

/// How many matches of each filter are fetched: enough to list an
/// ambiguous text's matches, and one is all a unique text needs.
const SHOWN: u32 = 20;

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
    let fetch = |lookup: Lookup, value: String| async move {
        let mut filter = WorkflowFilter::default();
        match lookup {
            Lookup::Name => filter.name = Some(value),
            Lookup::Prefix => filter.id_prefix = Some(value),
            Lookup::Suffix => filter.id_suffix = Some(value),
        }
        client.workflows().list(&filter, first_page()).await
    };
    let candidate = |w: WorkflowListItem| Candidate {
        id: w.workflow.id,
        names: vec![w.workflow.name],
    };
    look_up("workflow", text, true, fetch, candidate).await
}

/// An agent by id, id prefix, short id or name.
pub async fn agent(client: &Client, text: &str) -> anyhow::Result<Uuid> {
    if let Ok(id) = Uuid::parse_str(text) {
        return Ok(id);
    }
    let fetch = |lookup: Lookup, value: String| async move {
        let mut filter = AgentFilter::default();
        match lookup {
            Lookup::Name => filter.name = Some(value),
            Lookup::Prefix => filter.id_prefix = Some(value),
            Lookup::Suffix => filter.id_suffix = Some(value),
        }
        client.agents().list_matching(&filter, first_page()).await
    };
    let candidate = |a: Agent| Candidate {
        id: a.id,
        names: vec![a.name],
    };
    look_up("agent", text, true, fetch, candidate).await
}

/// [`agent`] for an optional argument (a filter flag).
pub async fn agent_opt(client: &Client, text: Option<&str>) -> anyhow::Result<Option<Uuid>> {
    match text {
        Some(text) => agent(client, text).await.map(Some),
        None => Ok(None),
    }
}

/// [`workflow`] for an optional argument (a filter flag).
pub async fn workflow_opt(client: &Client, text: Option<&str>) -> anyhow::Result<Option<Uuid>> {
    match text {
        Some(text) => workflow(client, text).await.map(Some),
        None => Ok(None),
    }
}

/// [`task`] for an optional argument (a filter flag).
pub async fn task_opt(client: &Client, text: Option<&str>) -> anyhow::Result<Option<Uuid>> {
    match text {
        Some(text) => task(client, text).await.map(Some),
        None => Ok(None),
    }
}

/// [`workspace`] for an optional argument (a filter flag).
pub async fn workspace_opt(client: &Client, text: Option<&str>) -> anyhow::Result<Option<Uuid>> {
    match text {
        Some(text) => workspace(client, text).await.map(Some),
        None => Ok(None),
    }
}

/// A work item named by a filter flag: its id anywhere, its id prefix,
/// short id or title only within `workflow` (work items are listed per
/// workflow; the tenant has no list of them all).
pub async fn work_item_opt(
    client: &Client,
    workflow: Option<Uuid>,
    text: Option<&str>,
) -> anyhow::Result<Option<Uuid>> {
    let Some(text) = text else {
        return Ok(None);
    };
    if let Ok(id) = Uuid::parse_str(text) {
        return Ok(Some(id));
    }
    let Some(workflow) = workflow else {
        anyhow::bail!(
            "give the work item `{text}` by its whole id, or give its workflow too to name it \
             by id prefix, short id or title"
        );
    };
    let items = client.workflows().work_items(workflow).await?;
    work_item_of(&items, text).map(Some)
}

/// A task by id, id prefix or short id, among every task of the tenant.
pub async fn task(client: &Client, text: &str) -> anyhow::Result<Uuid> {
    if let Ok(id) = Uuid::parse_str(text) {
        return Ok(id);
    }
    let fetch = |lookup: Lookup, value: String| async move {
        let mut filter = TaskFilter::default();
        match lookup {
            Lookup::Name => {}
            Lookup::Prefix => filter.id_prefix = Some(value),
            Lookup::Suffix => filter.id_suffix = Some(value),
        }
        client.tasks().list(&filter, first_page()).await
    };
    let candidate = |t: Task| Candidate {
        id: t.id,
        names: vec![t.title],
    };
    look_up("task", text, false, fetch, candidate).await
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
    Found {
        candidates,
        more: false,
    }
    .pick_id("task", text)
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

/// What one lookup request asks the server's list filters for.
enum Lookup {
    /// `name`: the text as typed.
    Name,
    /// `id_prefix`: the text's hex digits.
    Prefix,
    /// `id_suffix`: the text's hex digits (a short id).
    Suffix,
}

/// The first page of a lookup: as many matches as an error lists.
fn first_page() -> PageRequest {
    PageRequest::new(1, SHOWN)
}

/// The one thing `text` names, asked of the server in at most three
/// requests made together (the name when `by_name`, the id prefix and the
/// short id when the text is hex digits): a name is taken before an id, as
/// in [`pick`]; things not named by name (tasks) only show theirs.
async fn look_up<T, F, Fut>(
    kind: &str,
    text: &str,
    by_name: bool,
    fetch: F,
    candidate: impl Fn(T) -> Candidate,
) -> anyhow::Result<Uuid>
where
    F: Fn(Lookup, String) -> Fut,
    Fut: Future<Output = orchestrator_client::Result<Page<T>>>,
{
    let hex = id_digits(text);
    let named = async {
        if by_name {
            fetch(Lookup::Name, text.to_owned()).await.map(Some)
        } else {
            Ok(None)
        }
    };
    let by_id = async {
        match &hex {
            Some(hex) => tokio::try_join!(
                fetch(Lookup::Prefix, hex.clone()),
                fetch(Lookup::Suffix, hex.clone())
            )
            .map(Some),
            None => Ok(None),
        }
    };
    let (named, by_id) = tokio::try_join!(named, by_id)?;
    if let Some(named) = named {
        let found = Found::of([named], &candidate);
        if !found.candidates.is_empty() {
            return found.pick(kind, text);
        }
    }
    let found = match by_id {
        Some((prefixed, suffixed)) => Found::of([prefixed, suffixed], &candidate),
        None => Found::default(),
    };
    if by_name {
        found.pick(kind, text)
    } else {
        found.pick_id(kind, text)
    }
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
    Found {
        candidates,
        more: false,
    }
    .pick(kind, text)
}

/// What the server's filters found for a text: the first page of each,
/// merged, and whether any filter matched more than that page.
#[derive(Default)]
struct Found {
    candidates: Vec<Candidate>,
    more: bool,
}

impl Found {
    /// The candidates of every page, each once.
    fn of<T, const N: usize>(pages: [Page<T>; N], candidate: impl Fn(T) -> Candidate) -> Self {
        let mut found = Self::default();
        for page in pages {
            found.more |= page.total > page.items.len() as u64;
            for item in page.items {
                let c = candidate(item);
                if !found.candidates.iter().any(|seen| seen.id == c.id) {
                    found.candidates.push(c);
                }
            }
        }
        found
    }

    /// [`pick`]'s rule over what was found.
    fn pick(self, kind: &str, text: &str) -> anyhow::Result<Uuid> {
        let lower = text.to_lowercase();
        let named: Vec<&Candidate> = self
            .candidates
            .iter()
            .filter(|c| c.names.iter().any(|n| n.to_lowercase() == lower))
            .collect();
        let matches = if named.is_empty() {
            by_id(text, &self.candidates)
        } else {
            named
        };
        one_of(
            kind,
            text,
            "id, id prefix, short id, slug or name",
            &matches,
            self.more,
        )
    }

    /// For things people name by id only (tasks): a title is shown with a
    /// match but never matched.
    fn pick_id(self, kind: &str, text: &str) -> anyhow::Result<Uuid> {
        let matches = by_id(text, &self.candidates);
        one_of(kind, text, "id, id prefix or short id", &matches, self.more)
    }
}

/// The hex digits of `text` (dashes dropped, lower case) when it can be an
/// id prefix or short id the server's filters take.
fn id_digits(text: &str) -> Option<String> {
    let hex = text.replace('-', "").to_ascii_lowercase();
    let fits = (MIN_PREFIX..=MAX_DIGITS).contains(&hex.len())
        && hex.bytes().all(|b| b.is_ascii_hexdigit());
    fits.then_some(hex)
}

/// The candidates whose id starts with `text` or whose last hex digits are
/// `text` (the short id), dashes aside; nothing for text that is not 4 to
/// 32 hex digits.
fn by_id<'a>(text: &str, candidates: &'a [Candidate]) -> Vec<&'a Candidate> {
    let Some(hex) = id_digits(text) else {
        return Vec::new();
    };
    candidates
        .iter()
        .filter(|c| {
            let id = c.id.simple().to_string();
            id.starts_with(&hex) || id.ends_with(&hex)
        })
        .collect()
}

/// The one match, or the error for none (exit 4) or several (the list;
/// `more` when the server had more matches than were fetched).
fn one_of(
    kind: &str,
    text: &str,
    forms: &str,
    matches: &[&Candidate],
    more: bool,
) -> anyhow::Result<Uuid> {
    match matches {
        [one] if !more => Ok(one.id),
        [] => Err(output::not_found(format!(
            "no {kind} has the {forms} `{text}`"
        ))),
        several => {
            let mut list: Vec<String> = several
                .iter()
                .map(|c| format!("  {} {}", c.id, c.names.last().cloned().unwrap_or_default()))
                .collect();
            let count = if more {
                list.push("  …".to_owned());
                format!("more than {}", several.len())
            } else {
                several.len().to_string()
            };
            anyhow::bail!(
                "`{text}` names {count} {kind}s; give one of their ids:\n{}",
                list.join("\n")
            )
        }
    }
}
