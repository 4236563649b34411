//! Artifacts a task's holder attaches (`POST /tasks/:id/artifacts`, and the
//! `artifacts` of a completion), stored through the files module.

use crate::api::Scope;
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::idempotency::{Storage, begin_write};
use crate::store::Tx;
use crate::tasks::acting::Acting;
use crate::tasks::rows::{TaskRow, find_for_update};
use uuid::Uuid;

/// Stores one artifact of `task` (through the files module).
pub(crate) async fn store_artifact(
    tx: &mut Tx,
    caller: &Caller,
    task: &TaskRow,
    artifact: &crate::api::TaskArtifact,
) -> Result<crate::api::workspaces::Artifact> {
    let content = crate::files::decode_content(
        "content_base64",
        &artifact.file_name,
        &artifact.content_base64,
    )?;
    crate::files::insert_artifact(
        tx,
        caller,
        crate::files::NewArtifact {
            workspace_id: task.workspace_id,
            workflow_id: task.workflow_id,
            work_item_id: task.work_item_id,
            task_id: Some(task.id),
            stage_name: task.stage_name.clone(),
            role: task.role.clone(),
            file_name: artifact.file_name.clone(),
            key: artifact.key.clone(),
            description: artifact.description.clone(),
            content_type: artifact.content_type.clone(),
            content,
        },
    )
    .await
}

impl ControlPlane {
    /// `POST /tasks/:id/artifacts`: by the assignee while the task is held,
    /// or by an admin at any time.
    pub async fn add_task_artifact(
        &self,
        caller: &Caller,
        id: Uuid,
        request: crate::api::TaskArtifact,
    ) -> Result<crate::api::workspaces::Artifact> {
        let acting = Acting::resolve(caller, request.agent_id, None)?;
        let mut write = begin_write!(self, caller, "tasks.artifact", request, Storage::Plain);
        let row = find_for_update(&mut write.tx, caller.tenant_id, id).await?;
        let admin = caller.scope.satisfies(Scope::Admin);
        if !(admin || (acting.holds(&row) && row.state()?.is_held())) {
            return Err(Error::forbidden(
                "only the task's assignee (while it is held) or an admin may add artifacts",
            ));
        }
        let artifact = store_artifact(&mut write.tx, caller, &row, &request).await?;
        write.finish(artifact).await
    }
}
