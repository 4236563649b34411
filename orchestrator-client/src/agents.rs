//! `/agents` and `/workers`.

use crate::client::{Client, JsonWithRequestId, M, page_query};
use crate::error::Result;
use crate::paging;
use futures_util::stream::BoxStream;
use orchestrator_core::api::{
    Agent, AgentFilter, ClaimBatch, ClaimedTask, DeletedWorker, HeartbeatAck, Page, PageRequest,
    RegisterAgent, RegisterWorker, RegisteredWorker, Task, Worker, WorkerHeartbeat,
    WorkerHeartbeatAck, WorkerNext,
};
use uuid::Uuid;

/// The `Agents` routes: get one from [`Client::agents`](crate::Client::agents).
pub struct Agents<'c> {
    pub(crate) client: &'c Client,
}

impl Agents<'_> {
    /// `POST /agents/register`: `api_key` carries the agent's new key unless
    /// `issue_api_key` was `Some(false)`.
    pub async fn register(&self, request: &RegisterAgent) -> Result<Agent> {
        self.client
            .data(
                self.client
                    .request(M::POST, "/api/v1/agents/register")
                    .json_id(self.client, request),
            )
            .await
    }

    /// `POST /agents/:id/heartbeat`.
    pub async fn heartbeat(&self, id: Uuid) -> Result<HeartbeatAck> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/agents/{id}/heartbeat")),
            )
            .await
    }

    /// `GET /agents`: newest first.
    pub async fn list(&self, page: PageRequest) -> Result<Page<Agent>> {
        self.client
            .page(
                self.client
                    .request(M::GET, "/api/v1/agents")
                    .query(&page_query(page)),
            )
            .await
    }

    /// `GET /agents` with filters: the agents whose id starts or ends with
    /// some hex digits, or with a name; newest first.
    pub async fn list_matching(
        &self,
        filter: &AgentFilter,
        page: PageRequest,
    ) -> Result<Page<Agent>> {
        self.client
            .page(
                self.client
                    .request(M::GET, "/api/v1/agents")
                    .query(filter)
                    .query(&page_query(page)),
            )
            .await
    }

    /// `GET /agents/:id`.
    pub async fn get(&self, id: Uuid) -> Result<Agent> {
        self.client
            .data(self.client.request(M::GET, &format!("/api/v1/agents/{id}")))
            .await
    }
}

/// The `Workers` routes: get one from [`Client::workers`](crate::Client::workers).
pub struct Workers<'c> {
    pub(crate) client: &'c Client,
}

impl Workers<'_> {
    /// `POST /workers/register`: the worker key and agent keys are shown once.
    pub async fn register(&self, request: &RegisterWorker) -> Result<RegisteredWorker> {
        self.client
            .data(
                self.client
                    .request(M::POST, "/api/v1/workers/register")
                    .json_id(self.client, request),
            )
            .await
    }

    /// `POST /workers/:id/heartbeat`.
    pub async fn heartbeat(
        &self,
        id: Uuid,
        request: &WorkerHeartbeat,
    ) -> Result<WorkerHeartbeatAck> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/workers/{id}/heartbeat"))
                    .json(request),
            )
            .await
    }

    /// `POST /workers/:id/next`: `None` when there is nothing to claim (204).
    pub async fn next(&self, id: Uuid, request: &WorkerNext) -> Result<Option<Task>> {
        self.client
            .data_or_none(
                self.client
                    .request(M::POST, &format!("/api/v1/workers/{id}/next"))
                    .json(request),
            )
            .await
    }

    /// `POST /workers/:id/claim-batch` (beyond the contract): up to
    /// `request.limit` tasks, one per agent of the worker that holds none,
    /// each with its agent; empty when nothing was claimable within
    /// `wait_seconds`.
    pub async fn claim_batch(&self, id: Uuid, request: &ClaimBatch) -> Result<Vec<ClaimedTask>> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/workers/{id}/claim-batch"))
                    .json(request),
            )
            .await
    }

    /// `GET /workers`: newest first.
    pub async fn list(&self, page: PageRequest) -> Result<Page<Worker>> {
        self.client
            .page(
                self.client
                    .request(M::GET, "/api/v1/workers")
                    .query(&page_query(page)),
            )
            .await
    }

    /// `GET /workers/:id`.
    pub async fn get(&self, id: Uuid) -> Result<Worker> {
        self.client
            .data(
                self.client
                    .request(M::GET, &format!("/api/v1/workers/{id}")),
            )
            .await
    }

    /// `DELETE /workers/:id` (admin): deregisters an offline worker,
    /// revokes its keys and its agents' keys; 409 while it is online.
    pub async fn delete(&self, id: Uuid) -> Result<DeletedWorker> {
        self.client
            .data(
                self.client
                    .request(M::DELETE, &format!("/api/v1/workers/{id}")),
            )
            .await
    }
}

impl Agents<'_> {
    /// Every agent, read page after page (100 at a time) as one
    /// stream; an error ends it.
    pub fn list_all(&self) -> BoxStream<'static, Result<Agent>> {
        let client = self.client.clone();
        paging::pages(move |page| {
            let client = client.clone();
            async move { client.agents().list(page).await }
        })
    }
}

impl Workers<'_> {
    /// Every worker, read page after page (100 at a time) as one
    /// stream; an error ends it.
    pub fn list_all(&self) -> BoxStream<'static, Result<Worker>> {
        let client = self.client.clone();
        paging::pages(move |page| {
            let client = client.clone();
            async move { client.workers().list(page).await }
        })
    }
}
