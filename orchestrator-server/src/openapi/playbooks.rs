//! Playbooks: each route's input and output types.

use super::describe::*;
use http::Method as M;
use orchestrator_core::api::playbooks::{ArchivePlaybook, CreatePlaybook, DeletedPlaybook, PatchPlaybook, Playbook, PlaybookDeleteImpact, PlaybookSummary};

/// Playbooks.
pub(super) fn docs() -> Vec<Doc> {
    vec![
        op(M::POST, "/api/v1/playbooks", "Create a playbook", created::<Playbook>()).body::<CreatePlaybook>(),
        op(M::GET, "/api/v1/playbooks", "List playbooks", page::<PlaybookSummary>()).paged(),
        op(M::GET, "/api/v1/playbooks/{id}", "Get a playbook", ok::<Playbook>()),
        op(M::PATCH, "/api/v1/playbooks/{id}", "Patch a playbook (new revision)", ok::<Playbook>()).body::<PatchPlaybook>(),
        op(M::PUT, "/api/v1/playbooks/{id}", "Replace a playbook (new revision)", ok::<Playbook>()).body::<CreatePlaybook>(),
        op(M::DELETE, "/api/v1/playbooks/{id}", "Delete a playbook (soft)", ok::<DeletedPlaybook>()),
        op(M::GET, "/api/v1/playbooks/{id}/revisions", "A playbook's revisions", page::<Playbook>()).paged(),
        op(M::PATCH, "/api/v1/playbooks/{id}/archive", "Archive or unarchive a playbook", ok::<Playbook>()).body::<ArchivePlaybook>(),
        op(M::GET, "/api/v1/playbooks/{id}/delete-impact", "What deleting a playbook would touch", ok::<PlaybookDeleteImpact>()),
        op(M::DELETE, "/api/v1/playbooks/{id}/permanent", "Delete a playbook permanently", ok::<DeletedPlaybook>()),
    ]
}
