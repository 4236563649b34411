//! `/tasks`.

use crate::client::{Client, JsonWithRequestId, M, page_query};
use crate::error::Result;
use crate::paging;
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use orchestrator_core::api::workspaces::Artifact;
use orchestrator_core::api::{
    ClaimCredentials, ClaimTask, ClaimedCredentials, CompleteTask, CreateHandoff, CreateTask,
    Event, FailTask, Handoff, IssueTaskToken, Page, PageRequest, StartTask, Task, TaskAction,
    TaskArtifact, TaskContext, TaskFilter, TaskGit, TaskToken,
};
use orchestrator_core::api::{
    CompleteBatch, CompletedItem, CreateBatch, CreatedItem, RescheduleTask, TaskHeartbeat,
    TaskHeartbeatAck,
};
use uuid::Uuid;

/// The `Tasks` routes: get one from [`Client::tasks`](crate::Client::tasks).
pub struct Tasks<'c> {
    pub(crate) client: &'c Client,
}

/// The operator operations (`POST /tasks/:id/<op>`, admin scope).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskOperation {
    /// `retry`: a failed or cancelled task back to pending.
    Retry,
    /// `request-changes`: a completed task back for rework.
    RequestChanges,
    /// `reassign`: another agent or worker.
    Reassign,
    /// `skip`: done without running.
    Skip,
    /// `escalate`: to a human.
    Escalate,
    /// `resolve-escalation`.
    ResolveEscalation,
    /// `approve-output`: accept an output awaiting approval.
    ApproveOutput,
    /// `cancel`.
    Cancel,
}

impl TaskOperation {
    /// The route segment (`request-changes`, ...).
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
            .data(
                self.client
                    .request(M::POST, "/api/v1/tasks")
                    .json_id(self.client, request),
            )
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
                    .json_id(self.client, request),
            )
            .await
    }

    /// `POST /tasks/:id/complete`.
    pub async fn complete(&self, id: Uuid, request: &CompleteTask) -> Result<Task> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/tasks/{id}/complete"))
                    .json_id(self.client, request),
            )
            .await
    }

    /// `POST /tasks/create-batch` (beyond the contract): one answer per
    /// item, in order: the created `task` (or, with a `dedupe_key`, the live
    /// one, `deduplicated: true`), or the `error` `create` would have
    /// answered (that item wrote nothing). Items with a `request_id` replay
    /// as `create` does.
    pub async fn create_batch(&self, request: &CreateBatch) -> Result<Vec<CreatedItem>> {
        self.client
            .data(
                self.client
                    .request(M::POST, "/api/v1/tasks/create-batch")
                    .json(request),
            )
            .await
    }

    /// `POST /tasks/complete-batch` (beyond the contract): one answer per
    /// item, in order: its new `state`, or the `error` the one-task
    /// complete would have answered (that item wrote nothing). Items with a
    /// `request_id` replay as `complete` does.
    pub async fn complete_batch(&self, request: &CompleteBatch) -> Result<Vec<CompletedItem>> {
        self.client
            .data(
                self.client
                    .request(M::POST, "/api/v1/tasks/complete-batch")
                    .json(request),
            )
            .await
    }

    /// `POST /tasks/:id/heartbeat` (run control §4): renews the holder's
    /// lease, stores `progress`; the answer says whether to stop.
    pub async fn heartbeat(&self, id: Uuid, request: &TaskHeartbeat) -> Result<TaskHeartbeatAck> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/tasks/{id}/heartbeat"))
                    .json(request),
            )
            .await
    }

    /// `POST /tasks/:id/reschedule` (run control §3): a new `run_at` for a
    /// pending task.
    pub async fn reschedule(&self, id: Uuid, request: &RescheduleTask) -> Result<Task> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/tasks/{id}/reschedule"))
                    .json_id(self.client, request),
            )
            .await
    }

    /// `POST /tasks/:id/fail`.
    pub async fn fail(&self, id: Uuid, request: &FailTask) -> Result<Task> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/tasks/{id}/fail"))
                    .json_id(self.client, request),
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
                    .json_id(self.client, request),
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
    pub async fn claim_credentials(
        &self,
        id: Uuid,
        request: &ClaimCredentials,
    ) -> Result<ClaimedCredentials> {
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
                    .json_id(self.client, request),
            )
            .await
    }

    /// `POST /tasks/:id/artifacts`: attaches a file to the task, linked to
    /// its workspace, workflow, work item, stage and role (as the task's
    /// assignee while it is held, or as an admin). Retried like any write
    /// when it carries a `request_id`.
    pub async fn add_artifact(&self, id: Uuid, artifact: &TaskArtifact) -> Result<Artifact> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/tasks/{id}/artifacts"))
                    .json_id(self.client, artifact),
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

impl Tasks<'_> {
    /// Every task (newest first) matching `filter`, read page after page (100 at a
    /// time) as one stream; an error ends it.
    pub fn list_all(&self, filter: &TaskFilter) -> BoxStream<'static, Result<Task>> {
        let client = self.client.clone();
        let filter = filter.clone();
        paging::pages(move |page| {
            let client = client.clone();
            let filter = filter.clone();
            async move { client.tasks().list(&filter, page).await }
        })
    }
}

impl Tasks<'_> {
    /// `GET /tasks/:id/stream`: the task's events after `after` (all when
    /// `None`), then live; reconnects and resumes after the last event
    /// yielded. A task that is not streaming (not held) answers 409, which
    /// the stream yields once and ends.
    pub fn stream(&self, id: Uuid, after: Option<i64>) -> BoxStream<'static, Result<Event>> {
        crate::sse::reconnecting(
            self.client.clone(),
            format!("/api/v1/tasks/{id}/stream"),
            Vec::new(),
            Some(after.unwrap_or(0).to_string()),
        )
        .map(|item| {
            item.and_then(|frame| {
                serde_json::from_str::<Event>(&frame.data).map_err(|e| crate::Error::Decode {
                    status: 200,
                    message: format!("bad event frame: {e}"),
                })
            })
        })
        .boxed()
    }
}
