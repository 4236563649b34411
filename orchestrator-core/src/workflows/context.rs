//! The context packet an agent reads for a task (`GET /tasks/:id/context`).

use crate::api::{PageRequest, Task, TaskContext, TaskContextQuery};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use serde_json::json;
use uuid::Uuid;

use super::read::stages_in;
use super::refs;
use super::rows::find;

impl ControlPlane {
    /// `GET /tasks/:id/context` (and the claim's `include_context`): the
    /// task with its workflow, workspace, documents (workspace files) and
    /// attachments (the workflow's input files). With `agent_id`, the
    /// packet is for that agent: it must exist in the tenant, the task must
    /// not be held by another agent, and the packet carries the agent.
    pub async fn task_context(
        &self,
        caller: &Caller,
        id: Uuid,
        query: TaskContextQuery,
    ) -> Result<TaskContext> {
        let task = self.get_task(caller, id).await?;
        let agent = match query.agent_id {
            Some(agent_id) => {
                let agent = self.get_agent(caller, agent_id).await?;
                if let Some(holder) = task.assigned_agent_id
                    && holder != agent_id
                {
                    return Err(Error::conflict(format!(
                        "task {id} is held by agent {holder}, not by agent {agent_id}"
                    )));
                }
                Some(agent)
            }
            None => None,
        };
        let mut packet = self.context_packet(caller, &task).await?;
        packet.agent = agent;
        Ok(packet)
    }

    pub(crate) async fn context_packet(&self, caller: &Caller, task: &Task) -> Result<TaskContext> {
        let mut conn = self.store().read().await?;
        let workflow = match task.workflow_id {
            Some(id) => find(&mut conn, caller.tenant_id, id).await?,
            None => None,
        };
        let workspace_id = task
            .workspace_id
            .or(workflow.as_ref().map(|w| w.workspace_id));
        let workspace = match workspace_id {
            Some(id) => refs::workspace_packet(&mut conn, caller.tenant_id, id).await?,
            None => None,
        };
        // Only a workspace that exists has files to list (a task may name
        // one deleted since).
        let documents = match workspace_id.filter(|_| workspace.is_some()) {
            Some(id) => self
                .list_workspace_files(caller, id, PageRequest::new(1, 100))
                .await?
                .items
                .into_iter()
                .map(serde_json::to_value)
                .collect::<std::result::Result<Vec<_>, _>>()?,
            None => Vec::new(),
        };
        let attachments = workflow
            .as_ref()
            .and_then(|w| w.initial_input_packet.as_ref())
            .and_then(|p| p.0.files.clone())
            .unwrap_or_default()
            .into_iter()
            .map(|f| json!({ "file_name": f.file_name, "content_type": f.content_type, "content_base64": f.content_base64 }))
            .collect();
        let workflow = match workflow {
            Some(w) => {
                let stages = stages_in(&mut conn, w.id).await?;
                let mut value = serde_json::to_value(w.to_api())?;
                value["workflow_stages"] = serde_json::to_value(stages)?;
                Some(value)
            }
            None => None,
        };
        Ok(TaskContext {
            task: task.clone(),
            workflow,
            workspace,
            documents,
            attachments,
            agent: None,
        })
    }
}
