//! Workspaces: standing repository and memory context. One file per part:
//! `rows`, `records`, `repository`, `memory`, `spec`.
//!
//! A workspace has a unique slug per tenant, JSON `settings` and a sticky
//! key/value `memory` (a JSON object of at most 1 MiB serialized). Its git
//! token is encrypted at rest, bound to the workspace id, and never read back
//! (records say `git_token_configured`).
//!
//! For other modules: `find_workspace` reads a workspace of a tenant by id.
//! `workflow_summary` is the hook the workflows module fills in.

mod memory;
mod records;
mod repository;
mod rows;
mod spec;

pub(crate) use repository::{
    check_token_host, repository_host, validate_branch, validate_repository_url,
};
pub(crate) use rows::{
    find_workspace, lock_workspace, require_workspace, update_row, workflow_summary,
};
