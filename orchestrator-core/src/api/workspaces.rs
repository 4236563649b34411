//! Workspaces: standing repository and memory context, with files, a
//! versioned spec, artifacts and a timeline.

use super::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// Largest serialized `memory` object (1 MiB).
pub const MAX_MEMORY_BYTES: usize = 1024 * 1024;

/// Workflow counts of a workspace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkspaceSummary {
    pub workflow_count: i64,
    /// Workflows not yet completed, failed or cancelled.
    pub open_workflow_count: i64,
}

/// A workspace record. The git token is never returned; `git_token_configured`
/// says whether one is stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Workspace {
    pub id: Uuid,
    pub name: String,
    pub slug: String,
    pub description: String,
    pub repository_url: Option<String>,
    pub default_branch: Option<String>,
    pub settings: Value,
    pub memory: Value,
    pub is_active: bool,
    pub git_token_configured: bool,
    pub summary: WorkspaceSummary,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// `POST /workspaces`. Only `name` is required.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateWorkspace {
    pub name: String,
    /// Derived from the name when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slug: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_branch: Option<String>,
    /// A JSON object (e.g. `{"storage": {"type": "git"}}`); `{}` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Value>,
    /// A JSON object; `{}` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Value>,
    /// Stored encrypted, never returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// `PATCH /workspaces/:id`: at least one field. An empty `repository_url`
/// or `default_branch` clears it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PatchWorkspace {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slug: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_active: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

impl PatchWorkspace {
    /// Whether the patch names any field.
    pub fn is_empty(&self) -> bool {
        self.name.is_none()
            && self.slug.is_none()
            && self.description.is_none()
            && self.repository_url.is_none()
            && self.default_branch.is_none()
            && self.settings.is_none()
            && self.is_active.is_none()
    }
}

/// `GET /workspaces` filters.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkspaceFilter {
    /// Case-insensitive substring of name, slug or description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_active: Option<bool>,
}

/// `PATCH /workspaces/:id/memory`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SetMemory {
    pub key: String,
    pub value: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// Largest decoded file (10 MiB).
pub const MAX_FILE_BYTES: usize = 10 * 1024 * 1024;
/// Most files in one batch upload.
pub const MAX_BATCH_FILES: usize = 10;

/// `GET /workspaces/:id/spec`: a version of the workspace spec. Version 0
/// (all objects empty) when none was ever put.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkspaceSpec {
    pub workspace_id: Uuid,
    pub version: i32,
    pub resources: Value,
    pub documents: Value,
    pub tools: Value,
    pub config: Value,
    pub instructions: Value,
    pub created_at: Option<Timestamp>,
}

/// `PUT /workspaces/:id/spec`: every part is a JSON object; an absent part is `{}`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PutWorkspaceSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documents: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// One file to upload (`POST /workspaces/:id/files`, and each item of a batch).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FileUpload {
    pub file_name: String,
    /// Standard base64 (padding optional); at most 10 MiB decoded.
    pub content_base64: String,
    /// Guessed from the file name's extension when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Stable logical key; derived from the file name when absent. Uploading
    /// to an existing key replaces that file's content (same id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// `POST /workspaces/:id/files/batch`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct BatchUpload {
    pub files: Vec<FileUpload>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// A stored workspace file (never its bytes; fetch `download_url`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkspaceFile {
    pub id: Uuid,
    pub workspace_id: Uuid,
    pub key: String,
    pub file_name: String,
    pub description: Option<String>,
    pub content_type: String,
    pub size_bytes: i64,
    /// `text`, `image` or `download`, from the content type.
    pub preview_mode: String,
    /// Lower-case hex SHA-256 of the bytes (also the download's `ETag`).
    pub checksum: String,
    pub download_url: String,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// An artifact: a file a task produced, as the explorer lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Artifact {
    pub id: Uuid,
    pub workspace_id: Option<Uuid>,
    pub workflow_id: Option<Uuid>,
    pub work_item_id: Option<Uuid>,
    pub task_id: Option<Uuid>,
    pub stage_name: Option<String>,
    pub role: Option<String>,
    pub file_name: String,
    pub key: String,
    pub description: Option<String>,
    pub content_type: String,
    pub size_bytes: i64,
    /// `text`, `image` or `download`, from the content type.
    pub preview_mode: String,
    /// Lower-case hex SHA-256 of the bytes (also the download's `ETag`).
    pub checksum: String,
    pub download_url: String,
    pub created_at: Timestamp,
}

/// `POST /workspaces/:id/artifacts` (admin; beyond the contract): a file item
/// plus optional linkage.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct UploadArtifact {
    pub file_name: String,
    pub content_base64: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_item_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// `GET /workspaces/:id/artifacts` filters. `sort` is `created_at`,
/// `file_name` or `size_bytes`, ascending, or descending with a leading `-`
/// (default `-created_at`, newest first).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ArtifactFilter {
    /// Case-insensitive substring of file name, key or description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_item_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Exact type, or a prefix ending in `/` or `/*` (`image/`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview_mode: Option<String>,
    /// Inclusive lower bound on `created_at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_from: Option<Timestamp>,
    /// Inclusive upper bound on `created_at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_to: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort: Option<String>,
}

/// What `verify-git-access` does with the stored token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum GitTokenMode {
    /// Use (and keep) the stored token.
    #[default]
    Preserve,
    /// Use `git_token` and store it (encrypted) when the check passes.
    Replace,
    /// Check without a token and remove the stored one when the check passes.
    Clear,
}

/// `POST /workspaces/:id/verify-git-access`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct VerifyGitAccess {
    pub repository_url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_branch: Option<String>,
    pub git_token_mode: GitTokenMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// The verification packet. A passing check answers `200` with it (and
/// stores the URL, branch and token change); a failing one answers `400
/// VERIFICATION_FAILED` with it in `error.details` and stores nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GitVerification {
    pub reachable: bool,
    /// The URL checked (credentials never appear in it).
    pub repository_url: String,
    /// The branch that was asked for, or the remote's default when none was.
    pub default_branch: Option<String>,
    /// Whether `default_branch` exists on the remote.
    pub branch_found: bool,
    /// The remote's HEAD branch, when it advertises one.
    pub remote_head: Option<String>,
    /// How many branches the remote lists.
    pub branch_count: i64,
    pub git_token_mode: GitTokenMode,
    /// Whether a token was used for the check.
    pub used_token: bool,
    /// Which step failed (`connect`, `branch`), when one did.
    pub failed_step: Option<String>,
    /// Why the check failed, when it did.
    pub reason: Option<String>,
    pub checked_at: Timestamp,
}
