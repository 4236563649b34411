//! `/workflows` (with work items, activations and the event feed).

use crate::client::{Client, JsonWithRequestId, M, decode, page_query};
use crate::error::Result;
use crate::paging;
use futures_util::stream::BoxStream;
use orchestrator_core::api::{
    Activation, Applied, Board, CreateWorkItem, CreateWorkflow, EnqueueActivation, Event,
    EventFeed, Page, PageRequest, PlanningWorkflow, RailItem, RailQuery, RedriveWorkflow,
    UpdateWorkItem, WorkItem, Workflow, WorkflowAction, WorkflowDetail, WorkflowEventQuery,
    WorkflowFilter, WorkflowListItem, WorkflowStage, WorkspacePacket, WorkspacePacketQuery,
};
use serde::Deserialize;
use uuid::Uuid;

/// The `Workflows` routes: get one from [`Client::workflows`](crate::Client::workflows).
pub struct Workflows<'c> {
    pub(crate) client: &'c Client,
}

#[derive(Deserialize)]
struct FeedEnvelope {
    data: Vec<Event>,
    meta: FeedMeta,
}

#[derive(Deserialize)]
struct FeedMeta {
    next_after: Option<String>,
    #[serde(default)]
    has_more: bool,
}

impl Workflows<'_> {
    /// `POST /workflows`.
    pub async fn create(&self, request: &CreateWorkflow) -> Result<Workflow> {
        self.client
            .data(
                self.client
                    .request(M::POST, "/api/v1/workflows")
                    .json_id(self.client, request),
            )
            .await
    }

    /// `GET /workflows`: newest first.
    pub async fn list(
        &self,
        filter: &WorkflowFilter,
        page: PageRequest,
    ) -> Result<Page<WorkflowListItem>> {
        self.client
            .page(
                self.client
                    .request(M::GET, "/api/v1/workflows")
                    .query(filter)
                    .query(&page_query(page)),
            )
            .await
    }

    /// `GET /workflows/:id`.
    pub async fn get(&self, id: Uuid) -> Result<WorkflowDetail> {
        self.client
            .data(
                self.client
                    .request(M::GET, &format!("/api/v1/workflows/{id}")),
            )
            .await
    }

    /// `POST /workflows/:id/redrives`.
    pub async fn redrive(&self, id: Uuid, request: &RedriveWorkflow) -> Result<Applied> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/workflows/{id}/redrives"))
                    .json_id(self.client, request),
            )
            .await
    }

    /// `GET /workflows/:id/events`: oldest first after `query.after`.
    pub async fn events(&self, id: Uuid, query: &WorkflowEventQuery) -> Result<EventFeed> {
        let builder = self
            .client
            .request(M::GET, &format!("/api/v1/workflows/{id}/events"))
            .query(query);
        let response = self.client.send(builder).await?;
        let feed: FeedEnvelope = decode(response).await?;
        Ok(EventFeed {
            events: feed.data,
            next_after: feed.meta.next_after,
            has_more: feed.meta.has_more,
        })
    }

    /// `POST /workflows/:id/activations`.
    pub async fn enqueue_activation(
        &self,
        id: Uuid,
        request: &EnqueueActivation,
    ) -> Result<Applied> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/workflows/{id}/activations"))
                    .json_id(self.client, request),
            )
            .await
    }

    /// `GET /workflows/:id/activations`.
    pub async fn activations(&self, id: Uuid) -> Result<Vec<Activation>> {
        self.client
            .data(
                self.client
                    .request(M::GET, &format!("/api/v1/workflows/{id}/activations")),
            )
            .await
    }

    /// `GET /workflows/:id/board`.
    pub async fn board(&self, id: Uuid) -> Result<Board> {
        self.client
            .data(
                self.client
                    .request(M::GET, &format!("/api/v1/workflows/{id}/board")),
            )
            .await
    }

    /// `GET /operations/workflows/rail`: the dashboard's workflow rail (its
    /// page and size are the query's `page` and `per_page`).
    pub async fn rail(&self, query: &RailQuery) -> Result<Page<RailItem>> {
        self.client
            .page(
                self.client
                    .request(M::GET, "/api/v1/operations/workflows/rail")
                    .query(query),
            )
            .await
    }

    /// `GET /operations/workflows/:id/workspace`: one workflow's operations
    /// packet (detail, board, selection and the incremental sections).
    pub async fn workspace_packet(
        &self,
        id: Uuid,
        query: &WorkspacePacketQuery,
    ) -> Result<WorkspacePacket> {
        self.client
            .data(
                self.client
                    .request(
                        M::GET,
                        &format!("/api/v1/operations/workflows/{id}/workspace"),
                    )
                    .query(query),
            )
            .await
    }

    /// `GET /workflows/:id/stages`.
    pub async fn stages(&self, id: Uuid) -> Result<Vec<WorkflowStage>> {
        self.client
            .data(
                self.client
                    .request(M::GET, &format!("/api/v1/workflows/{id}/stages")),
            )
            .await
    }

    /// `POST /workflows/:id/pause|resume|cancel` (`action` is one of those words).
    pub async fn act(&self, id: Uuid, action: &str, request: &WorkflowAction) -> Result<Workflow> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/workflows/{id}/{action}"))
                    .json_id(self.client, request),
            )
            .await
    }

    /// `POST /workflows/:id/work-items`.
    pub async fn create_work_item(&self, id: Uuid, request: &CreateWorkItem) -> Result<WorkItem> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/workflows/{id}/work-items"))
                    .json_id(self.client, request),
            )
            .await
    }

    /// `GET /workflows/:id/work-items`.
    pub async fn work_items(&self, id: Uuid) -> Result<Vec<WorkItem>> {
        self.client
            .data(
                self.client
                    .request(M::GET, &format!("/api/v1/workflows/{id}/work-items")),
            )
            .await
    }

    /// `PATCH /workflows/:id/work-items/:work_item_id`.
    pub async fn update_work_item(
        &self,
        id: Uuid,
        item: Uuid,
        request: &UpdateWorkItem,
    ) -> Result<WorkItem> {
        self.client
            .data(
                self.client
                    .request(
                        M::PATCH,
                        &format!("/api/v1/workflows/{id}/work-items/{item}"),
                    )
                    .json(request),
            )
            .await
    }

    /// `POST /workspaces/:id/planning-workflow`.
    pub async fn planning(
        &self,
        workspace_id: Uuid,
        request: &PlanningWorkflow,
    ) -> Result<Workflow> {
        self.client
            .data(
                self.client
                    .request(
                        M::POST,
                        &format!("/api/v1/workspaces/{workspace_id}/planning-workflow"),
                    )
                    .json_id(self.client, request),
            )
            .await
    }
}

impl Workflows<'_> {
    /// Every workflow (newest first) matching `filter`, read page after page (100 at a
    /// time) as one stream; an error ends it.
    pub fn list_all(
        &self,
        filter: &WorkflowFilter,
    ) -> BoxStream<'static, Result<WorkflowListItem>> {
        let client = self.client.clone();
        let filter = filter.clone();
        paging::pages(move |page| {
            let client = client.clone();
            let filter = filter.clone();
            async move { client.workflows().list(&filter, page).await }
        })
    }
}
