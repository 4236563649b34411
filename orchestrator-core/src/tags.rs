//! Routing tags: their normal form, and the tags a task requires of its
//! claimer. Shared by agents, workers, tasks and the claim
//! engine, so none of them has to reach into another for it.

use crate::api::TaskKind;

/// Trims, lower-cases, deduplicates and sorts routing tags.
pub fn normalise_tags<'a>(tags: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    let mut out: Vec<String> = tags
        .into_iter()
        .map(|t| t.trim().to_lowercase())
        .filter(|t| !t.is_empty())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The tags a task requires of its claimer.
pub(crate) fn required_tags(role: Option<&str>, kind: TaskKind) -> Vec<String> {
    let mut tags = Vec::new();
    if let Some(role) = role {
        tags.push(format!("role:{}", role.trim().to_lowercase()));
    }
    if kind == TaskKind::Orchestrator {
        tags.push("orchestrator".to_owned());
    }
    tags.sort();
    tags
}
