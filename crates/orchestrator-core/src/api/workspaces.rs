//! Workspaces: standing repository and memory context, with files, a
//! versioned spec, artifacts and a timeline.

use super::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// Largest serialized `memory` object (decisions §8: 1 MiB).
pub const MAX_MEMORY_BYTES: usize = 1024 * 1024;

/// Workflow counts of a workspace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceSummary {
    pub workflow_count: i64,
    /// Workflows not yet completed, failed or cancelled.
    pub open_workflow_count: i64,
}

/// A workspace record. The git token is never returned; `git_token_configured`
/// says whether one is stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
pub struct WorkspaceFilter {
    /// Case-insensitive substring of name, slug or description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_active: Option<bool>,
}

/// `PATCH /workspaces/:id/memory`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetMemory {
    pub key: String,
    pub value: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}
