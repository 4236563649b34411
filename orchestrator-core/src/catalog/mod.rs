//! The community playbook catalog: playbooks, specialists and skills written
//! for orch and bundled with the program (`catalog/` in this crate, embedded
//! at build time), or read from the directory `ORCH_CATALOG_DIR` names.
//!
//! Layout (the same bundled or on disk):
//! - `catalog.json`: `{source_repository, catalog_version}`;
//! - `playbooks/<id>/playbook.json`: `{id, name, summary, category,
//!   stability, version, description, outcome, lifecycle, definition,
//!   specialist_ids, skill_ids}` and `playbooks/<id>/README.md`;
//! - `specialists/<id>.json` and `skills/<id>.json`: `{id, name,
//!   description, definition}`.
//!
//! Import makes ordinary tenant-local copies (no upstream sync): the
//! playbook as a new family (or a new revision of the matching one with
//! `override_existing`), and each specialist and skill as a local record.
//! Conflicts are matched by slug (the catalog id) or by name. Without a
//! decision an artifact is created new; when its slug or name is taken the
//! copy is renamed `Name (2)` / `slug-2`. Imported records keep their
//! provenance (`source_repository`, `catalog_id`, `catalog_version`), and the
//! imported playbook's definition gets `catalog_links` mapping catalog
//! specialist and skill ids to the local ids.

mod browse;
mod bundle;
mod import;
mod library;
