//! Stored bytes, workspace files and artifacts.
//!
//! Bytes live in the database on both backends, apart from the metadata: a
//! `blobs` row (size, SHA-256, chunk count) and `blob_chunks` rows of at most
//! [`CHUNK_BYTES`] each, so lists never touch them and a download reads one
//! chunk per query ([`BlobStream`]) instead of loading the file. Deleting a
//! blob deletes its chunks and the file or artifact row that points at it
//! (foreign keys with `ON DELETE CASCADE`), so a delete leaves nothing behind.
//!
//! Workspace files have a stable `key` per workspace (derived from the file
//! name when omitted): uploading to an existing key replaces that file's
//! content and keeps its id.
//!
//! Artifacts are files that tasks produce. Row shape: `id, workspace_id,
//! workflow_id, work_item_id, task_id, stage_name, role` (plain nullable
//! linkage, no foreign keys to workflow tables), `file_name, key,
//! description, content_type, size_bytes, preview_mode` (`text`, `image` or
//! `download`, derived from the content type), `checksum` (SHA-256 hex, the
//! download's `ETag`), `created_at` and `download_url`
//! (`/api/v1/artifacts/:id/content`). `ControlPlane::add_artifact` stores
//! one; `insert_artifact` does it inside a caller's transaction (task
//! completion attaches artifacts that way).

mod artifacts;
mod blobs;
mod content;
mod workspace_files;

pub(crate) use artifacts::{NewArtifact, insert_artifact};
pub use blobs::{BlobStream, CHUNK_BYTES, Download};
pub(crate) use content::decode_content;
