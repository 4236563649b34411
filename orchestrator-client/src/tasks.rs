//! `/tasks`.

use crate::client::{Client, M, page_query};
use crate::error::Result;
use orchestrator_core::api::{
    ClaimCredentials, ClaimTask, CompleteTask, CreateHandoff, CreateTask, FailTask, Handoff,
    IssueTaskToken, Page, PageRequest, StartTask, Task, TaskAction, TaskContext, TaskFilter,
    TaskGit, TaskToken,
};
use serde_json::Value;
use uuid::Uuid;

pub struct Tasks<'c> {
    pub(crate) client: &'c Client,
}

/// The operator operations (`POST /tasks/:id/<op>`, admin scope).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskOperation {
    Retry,
    RequestChanges,
    Reassign,
    Skip,
    Escalate,
    ResolveEscalation,
    ApproveOutput,
    Cancel,
}

impl TaskOperation {
    pub fn path(self) -> &'static str {
        match self {
            Self::Retry => "retry",
            Self::RequestChanges => "request-changes",
            Self::Reassign => "reassign",
            Self::Skip => "skip",
            Self::Escalate => "escalate",
            Self::ResolveEscalation => "resolve-escalation",
            Self::ApproveOutput => "approve-output",
            Self::Cancel => "cancel",
        }
    }
}

impl Tasks<'_> {
    /// `POST /tasks`: a pending task.
    pub async fn create(&self, request: &CreateTask) -> Result<Task> {
        self.client
            .data(self.client.request(M::POST, "/api/v1/tasks").json(request))
            .await
    }

    /// `GET /tasks`: newest first.
    pub async fn list(&self, filter: &TaskFilter, page: PageRequest) -> Result<Page<Task>> {
        self.client
            .page(
                self.client
                    .request(M::GET, "/api/v1/tasks")
                    .query(filter)
                    .query(&page_query(page)),
            )
            .await
    }

    /// `GET /tasks/:id` (with `latest_handoff`).
    pub async fn get(&self, id: Uuid) -> Result<Task> {
        self.client
            .data(self.client.request(M::GET, &format!("/api/v1/tasks/{id}")))
            .await
    }

    /// `POST /tasks/claim`: `None` when nothing is claimable (204).
    pub async fn claim(&self, request: &ClaimTask) -> Result<Option<Task>> {
        self.client
            .data_or_none(
                self.client
                    .request(M::POST, "/api/v1/tasks/claim")
                    .json(request),
            )
            .await
    }

    /// `POST /tasks/:id/start`.
    pub async fn start(&self, id: Uuid, request: &StartTask) -> Result<Task> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/tasks/{id}/start"))
                    .json(request),
            )
            .await
    }

    /// `POST /tasks/:id/complete`.
    pub async fn complete(&self, id: Uuid, request: &CompleteTask) -> Result<Task> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/tasks/{id}/complete"))
                    .json(request),
            )
            .await
    }

    /// `POST /tasks/:id/fail`.
    pub async fn fail(&self, id: Uuid, request: &FailTask) -> Result<Task> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/tasks/{id}/fail"))
                    .json(request),
            )
            .await
    }

    /// An operator operation: retry, request-changes, reassign, skip,
    /// escalate, resolve-escalation, approve-output or cancel.
    pub async fn act(
        &self,
        id: Uuid,
        operation: TaskOperation,
        request: &TaskAction,
    ) -> Result<Task> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/tasks/{id}/{}", operation.path()))
                    .json(request),
            )
            .await
    }

    /// `GET /tasks/:id/context`.
    pub async fn context(&self, id: Uuid) -> Result<TaskContext> {
        self.client
            .data(
                self.client
                    .request(M::GET, &format!("/api/v1/tasks/{id}/context")),
            )
            .await
    }

    /// `GET /tasks/:id/context?agent_id=`: the packet as `agent_id` sees it
    /// (404 for an unknown agent, 409 when another agent holds the task).
    pub async fn context_for_agent(&self, id: Uuid, agent_id: Uuid) -> Result<TaskContext> {
        self.client
            .data(
                self.client
                    .request(M::GET, &format!("/api/v1/tasks/{id}/context"))
                    .query(&[("agent_id", agent_id)]),
            )
            .await
    }

    /// `GET /tasks/:id/git`.
    pub async fn git(&self, id: Uuid) -> Result<TaskGit> {
        self.client
            .data(
                self.client
                    .request(M::GET, &format!("/api/v1/tasks/{id}/git")),
            )
            .await
    }

    /// `POST /tasks/:id/claim-credentials`.
    pub async fn claim_credentials(&self, id: Uuid, request: &ClaimCredentials) -> Result<Value> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/tasks/{id}/claim-credentials"))
                    .json(request),
            )
            .await
    }

    /// `POST /tasks/:id/token`: a credential limited to this task while its
    /// current assignment lasts (use it with [`crate::Client::with_api_key`]).
    pub async fn token(&self, id: Uuid, request: &IssueTaskToken) -> Result<TaskToken> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/tasks/{id}/token"))
                    .json(request),
            )
            .await
    }

    /// `POST /tasks/:id/handoffs`.
    pub async fn handoff(&self, id: Uuid, request: &CreateHandoff) -> Result<Handoff> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/tasks/{id}/handoffs"))
                    .json(request),
            )
            .await
    }

    /// `GET /tasks/:id/handoffs`: oldest first.
    pub async fn handoffs(&self, id: Uuid) -> Result<Vec<Handoff>> {
        self.client
            .data(
                self.client
                    .request(M::GET, &format!("/api/v1/tasks/{id}/handoffs")),
            )
            .await
    }
}
