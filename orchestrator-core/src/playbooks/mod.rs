//! Playbooks: revision families of authored process definitions.
//!
//! Storage model (migration 0002): one row per revision. `family_id` is the
//! id of revision 1; `version` counts from 1 within the family; exactly one
//! row per family is `is_current` (the newest). `is_active` is true on the
//! current revision unless the family is archived, false on older revisions.
//! PATCH and PUT insert a new current revision (history is never updated);
//! archive flips `archived`/`is_active` on the current revision only. Slugs
//! and names are unique among the current revisions of a tenant.
//!
//! Every route accepts the family id or any revision id and works on the
//! family's current revision. Editing an archived playbook is a conflict
//! (unarchive it first).
//!
//! For other modules: `find_revision` reads one revision by id (what a
//! workflow stores), `find_current` the current revision of the family any
//! id belongs to. `workflow_references` and `delete_family_workflows` are
//! the hooks the workflows module fills in.

mod operations;
mod revisions;
mod rows;

pub(crate) use revisions::{RevisionFields, create_family, revise, validate_definition};
pub(crate) use rows::{find_current, find_revision};
