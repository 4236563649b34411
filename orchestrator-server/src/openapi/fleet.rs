//! The fleet: workers and containers: each route's input and output types.

use super::describe::*;
use http::Method as M;
use orchestrator_core::api::fleet::{Container, FleetWorker};

/// The fleet: workers and containers.
pub(super) fn docs() -> Vec<Doc> {
    vec![
        op(M::GET, "/api/v1/fleet/workers", "The fleet's workers", ok::<Vec<FleetWorker>>()),
        op(M::GET, "/api/v1/fleet/live-containers", "Live containers", ok::<Vec<Container>>()),
        op(M::GET, "/api/v1/containers", "List containers", page::<Container>())
            .param("worker_id", UUID, "One worker's containers")
            .query_enum::<orchestrator_core::api::fleet::ContainerState>("state", "Container state")
            .param("task_id", UUID, "One task's containers")
            .paged(),
    ]
}
