//! The community catalog, specialists and skills: each route's input and output types.

use super::describe::*;
use http::Method as M;
use orchestrator_core::api::catalog::{CatalogDetail, CatalogEntry, ImportPreview, ImportRequest, ImportResult, LibraryItem};

/// The community catalog, specialists and skills.
pub(super) fn docs() -> Vec<Doc> {
    vec![
        op(M::GET, "/api/v1/community-catalog/playbooks", "The community catalog", ok::<Vec<CatalogEntry>>()),
        op(M::GET, "/api/v1/community-catalog/playbooks/{id}", "A catalog playbook", ok::<CatalogDetail>()).text_params(&["id"]),
        op(M::POST, "/api/v1/community-catalog/playbooks/{id}/import-preview", "Preview importing a catalog playbook", ok::<ImportPreview>()).text_params(&["id"]),
        op(M::POST, "/api/v1/community-catalog/playbooks/{id}/import", "Import a catalog playbook (an empty body takes the defaults)", created::<ImportResult>()).text_params(&["id"]).body::<ImportRequest>(),
        op(M::GET, "/api/v1/specialists", "The tenant's specialists", page::<LibraryItem>()).paged(),
        op(M::GET, "/api/v1/skills", "The tenant's skills", page::<LibraryItem>()).paged(),
    ]
}
