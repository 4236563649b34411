//! `/fleet/workers`, `/fleet/live-containers`, `/containers` (admin).

use crate::client::{Client, M, page_query};
use crate::error::Result;
use orchestrator_core::api::fleet::{Container, ContainerFilter, FleetWorker};
use orchestrator_core::api::{Page, PageRequest};

/// The `Fleet` routes: get one from [`Client::fleet`](crate::Client::fleet).
pub struct Fleet<'c> {
    pub(crate) client: &'c Client,
}

impl Fleet<'_> {
    /// `GET /fleet/workers`: every worker with its agents, held tasks,
    /// running containers and environments.
    pub async fn workers(&self) -> Result<Vec<FleetWorker>> {
        self.client
            .data(self.client.request(M::GET, "/api/v1/fleet/workers"))
            .await
    }

    /// `GET /fleet/live-containers`: containers of online workers with a
    /// fresh report.
    pub async fn live_containers(&self) -> Result<Vec<Container>> {
        self.client
            .data(self.client.request(M::GET, "/api/v1/fleet/live-containers"))
            .await
    }

    /// `GET /containers` with `worker_id`, `state` and `task_id` filters.
    pub async fn containers(
        &self,
        filter: &ContainerFilter,
        page: PageRequest,
    ) -> Result<Page<Container>> {
        self.client
            .page(
                self.client
                    .request(M::GET, "/api/v1/containers")
                    .query(filter)
                    .query(&page_query(page)),
            )
            .await
    }
}
