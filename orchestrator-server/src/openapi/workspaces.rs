//! Workspaces, their files and artifacts: each route's input and output types.

use super::describe::*;
use http::Method as M;
use orchestrator_core::api::*;
use orchestrator_core::api::workspaces::{Artifact, ArtifactFilter, BatchUpload, CreateWorkspace, FileUpload, GitVerification, PatchWorkspace, PutWorkspaceSpec, SetMemory, UploadArtifact, VerifyGitAccess, Workspace, WorkspaceFile, WorkspaceSpec};

/// Workspaces, their files and artifacts.
pub(super) fn docs() -> Vec<Doc> {
    vec![
        op(M::POST, "/api/v1/workspaces", "Create a workspace", created::<Workspace>()).body::<CreateWorkspace>(),
        op(M::GET, "/api/v1/workspaces", "List workspaces", page::<Workspace>())
            .param("q", TEXT, "Free-text search")
            .param("is_active", BOOL, "Active or inactive workspaces only")
            .paged(),
        op(M::GET, "/api/v1/workspaces/{id}", "Get a workspace", ok::<Workspace>()),
        op(M::PATCH, "/api/v1/workspaces/{id}", "Patch a workspace", ok::<Workspace>()).body::<PatchWorkspace>(),
        op(M::PATCH, "/api/v1/workspaces/{id}/memory", "Set workspace memory entries", ok::<Workspace>()).body::<SetMemory>(),
        op(M::DELETE, "/api/v1/workspaces/{id}/memory/{key}", "Delete a workspace memory entry", ok::<Workspace>()).text_params(&["key"]),
        op(M::GET, "/api/v1/workspaces/{id}/spec", "A workspace's spec", ok::<WorkspaceSpec>())
            .param("version", r#"{"type": "integer", "minimum": 0}"#, "A past version"),
        op(M::PUT, "/api/v1/workspaces/{id}/spec", "Replace a workspace's spec", ok::<WorkspaceSpec>()).body::<PutWorkspaceSpec>(),
        op(M::GET, "/api/v1/workspaces/{id}/timeline", "A workspace's timeline", page::<Event>()).paged(),
        op(M::POST, "/api/v1/workspaces/{id}/verify-git-access", "Check a workspace's git access", ok::<GitVerification>()).body::<VerifyGitAccess>(),
        op(M::GET, "/api/v1/workspaces/{id}/files", "A workspace's files", page::<WorkspaceFile>()).paged(),
        op(M::POST, "/api/v1/workspaces/{id}/files", "Upload a file (base64 content in JSON)", created::<WorkspaceFile>()).body::<FileUpload>(),
        op(M::POST, "/api/v1/workspaces/{id}/files/batch", "Upload several files (base64 content in JSON)", created::<Vec<WorkspaceFile>>()).body::<BatchUpload>(),
        op(M::DELETE, "/api/v1/workspaces/{id}/files/{file_id}", "Delete a file", ok::<WorkspaceFile>()),
        op(M::GET, "/api/v1/workspaces/{id}/files/{file_id}/content", "Download a file", Success::Download),
        op(M::GET, "/api/v1/workspaces/{id}/artifacts", "A workspace's artifacts", page::<Artifact>()).query::<ArtifactFilter>().paged(),
        op(M::POST, "/api/v1/workspaces/{id}/artifacts", "Upload an artifact (base64 content in JSON)", created::<Artifact>()).body::<UploadArtifact>(),
        op(M::GET, "/api/v1/artifacts/{id}/content", "Download an artifact", Success::Download),
    ]
}
