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
    /// Every workflow of the workspace.
    pub workflow_count: i64,
    /// Workflows not yet completed, failed or cancelled.
    pub open_workflow_count: i64,
}

/// A workspace record. The git token is never returned; `git_token_configured`
/// says whether one is stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Workspace {
    /// The workspace's id, used in `/workspaces/:id` routes.
    pub id: Uuid,
    /// The workspace's name.
    pub name: String,
    /// The workspace's slug, unique in the tenant.
    pub slug: String,
    /// What the workspace is for (empty when not given).
    pub description: String,
    /// The git repository the workspace's work happens in, if any.
    pub repository_url: Option<String>,
    /// The repository branch work starts from, if set.
    pub default_branch: Option<String>,
    /// Free-form settings (a JSON object, e.g. `{"storage": {"type": "git"}}`).
    pub settings: Value,
    /// Standing memory shared by the workspace's workflows (a JSON object, at
    /// most [`MAX_MEMORY_BYTES`] serialized).
    pub memory: Value,
    /// Whether the workspace is in use (`PATCH` with `is_active: false`
    /// retires it without deleting anything).
    pub is_active: bool,
    /// Whether a git token is stored (the token itself is never returned).
    pub git_token_configured: bool,
    /// How many workflows the workspace has, and how many are open.
    pub summary: WorkspaceSummary,
    /// When the workspace was created.
    pub created_at: Timestamp,
    /// When the workspace last changed.
    pub updated_at: Timestamp,
}

/// `POST /workspaces`. Only `name` is required.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateWorkspace {
    /// The workspace's name (required).
    pub name: String,
    /// Derived from the name when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slug: Option<String>,
    /// What the workspace is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The git repository the workspace's work happens in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_url: Option<String>,
    /// The repository branch work starts from.
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
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// `PATCH /workspaces/:id`: at least one field. An empty `repository_url`
/// or `default_branch` clears it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PatchWorkspace {
    /// A new name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A new slug, unique in the tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slug: Option<String>,
    /// A new description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A new repository URL; empty clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_url: Option<String>,
    /// A new default branch; empty clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_branch: Option<String>,
    /// New settings, replacing the old ones (a JSON object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Value>,
    /// Mark the workspace in use or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_active: Option<bool>,
    /// Replays the first answer when sent again.
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
    /// Only active (`true`) or only inactive (`false`) workspaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_active: Option<bool>,
}

/// `PATCH /workspaces/:id/memory`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SetMemory {
    /// The memory key to set.
    pub key: String,
    /// The value to store under the key (any JSON).
    pub value: Value,
    /// Replays the first answer when sent again.
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
    /// The workspace the spec belongs to.
    pub workspace_id: Uuid,
    /// The spec's version: 1 for the first PUT, one more for each; 0 before
    /// any.
    pub version: i32,
    /// The resources part (a JSON object).
    pub resources: Value,
    /// The documents part (a JSON object).
    pub documents: Value,
    /// The tools part (a JSON object).
    pub tools: Value,
    /// The configuration part (a JSON object).
    pub config: Value,
    /// The instructions part (a JSON object).
    pub instructions: Value,
    /// When this version was put; null for version 0.
    pub created_at: Option<Timestamp>,
}

/// `PUT /workspaces/:id/spec`: every part is a JSON object; an absent part is `{}`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PutWorkspaceSpec {
    /// The resources part; `{}` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Value>,
    /// The documents part; `{}` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documents: Option<Value>,
    /// The tools part; `{}` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Value>,
    /// The configuration part; `{}` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Value>,
    /// The instructions part; `{}` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<Value>,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// One file to upload (`POST /workspaces/:id/files`, and each item of a batch).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FileUpload {
    /// The file's name; the key is derived from it when `key` is absent.
    pub file_name: String,
    /// Standard base64 (padding optional); at most 10 MiB decoded.
    pub content_base64: String,
    /// Guessed from the file name's extension when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// What the file is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Stable logical key; derived from the file name when absent. Uploading
    /// to an existing key replaces that file's content (same id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// `POST /workspaces/:id/files/batch`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct BatchUpload {
    /// The files, at most [`MAX_BATCH_FILES`].
    pub files: Vec<FileUpload>,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// A stored workspace file (never its bytes; fetch `download_url`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkspaceFile {
    /// The file's id; kept when its key is uploaded again.
    pub id: Uuid,
    /// The workspace the file belongs to.
    pub workspace_id: Uuid,
    /// The file's stable logical key, unique in the workspace.
    pub key: String,
    /// The file's name as uploaded.
    pub file_name: String,
    /// What the file is, if given.
    pub description: Option<String>,
    /// The file's media type.
    pub content_type: String,
    /// The file's size in bytes.
    pub size_bytes: i64,
    /// `text`, `image` or `download`, from the content type.
    pub preview_mode: String,
    /// Lower-case hex SHA-256 of the bytes (also the download's `ETag`).
    pub checksum: String,
    /// Where to download the bytes.
    pub download_url: String,
    /// When the file was first uploaded.
    pub created_at: Timestamp,
    /// When its content was last replaced.
    pub updated_at: Timestamp,
}

/// An artifact: a file a task produced, as the explorer lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Artifact {
    /// The artifact's id.
    pub id: Uuid,
    /// The workspace the artifact belongs to.
    pub workspace_id: Option<Uuid>,
    /// The workflow that produced it, if any.
    pub workflow_id: Option<Uuid>,
    /// The work item it was produced for, if any.
    pub work_item_id: Option<Uuid>,
    /// The task that produced it, if any.
    pub task_id: Option<Uuid>,
    /// The workflow stage it was produced in, if any.
    pub stage_name: Option<String>,
    /// The role of the task that produced it, if any.
    pub role: Option<String>,
    /// The file's name as uploaded.
    pub file_name: String,
    /// The artifact's stable logical key.
    pub key: String,
    /// What the artifact is, if given.
    pub description: Option<String>,
    /// The file's media type.
    pub content_type: String,
    /// The file's size in bytes.
    pub size_bytes: i64,
    /// `text`, `image` or `download`, from the content type.
    pub preview_mode: String,
    /// Lower-case hex SHA-256 of the bytes (also the download's `ETag`).
    pub checksum: String,
    /// Where to download the bytes (`/artifacts/:id/content`).
    pub download_url: String,
    /// When the artifact was uploaded.
    pub created_at: Timestamp,
}

/// `POST /workspaces/:id/artifacts` (admin; beyond the contract): a file item
/// plus optional linkage.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct UploadArtifact {
    /// The file's name.
    pub file_name: String,
    /// The bytes, standard base64 (padding optional); at most 10 MiB decoded.
    pub content_base64: String,
    /// The media type; guessed from the file name's extension when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// What the artifact is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Stable logical key; derived from the file name when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The workflow that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    /// The work item it was produced for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_item_id: Option<Uuid>,
    /// The task that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<Uuid>,
    /// The workflow stage it was produced in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage_name: Option<String>,
    /// The role of the task that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Replays the first answer when sent again.
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
    /// Only artifacts of this workflow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<Uuid>,
    /// Only artifacts of this work item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_item_id: Option<Uuid>,
    /// Only artifacts of this task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<Uuid>,
    /// Only artifacts of this stage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage_name: Option<String>,
    /// Only artifacts of this role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Exact type, or a prefix ending in `/` or `/*` (`image/`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// Only artifacts previewed this way: `text`, `image` or `download`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview_mode: Option<String>,
    /// Inclusive lower bound on `created_at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_from: Option<Timestamp>,
    /// Inclusive upper bound on `created_at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_to: Option<Timestamp>,
    /// `created_at`, `file_name` or `size_bytes`, with a leading `-` for
    /// descending (default `-created_at`).
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
    /// The repository to check.
    pub repository_url: String,
    /// The branch to look for; the remote's default when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_branch: Option<String>,
    /// What to do with the stored token.
    pub git_token_mode: GitTokenMode,
    /// The token to check with, for `replace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_token: Option<String>,
    /// Replays the first answer when sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// The verification packet. A passing check answers `200` with it (and
/// stores the URL, branch and token change); a failing one answers `400
/// VERIFICATION_FAILED` with it in `error.details` and stores nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GitVerification {
    /// Whether the repository answered.
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
    /// The token mode the check ran with.
    pub git_token_mode: GitTokenMode,
    /// Whether a token was used for the check.
    pub used_token: bool,
    /// Which step failed (`connect`, `branch`), when one did.
    pub failed_step: Option<String>,
    /// Why the check failed, when it did.
    pub reason: Option<String>,
    /// When the check ran.
    pub checked_at: Timestamp,
}
