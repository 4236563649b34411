//! Agents and workers: each route's input and output types.

use super::describe::*;
use http::Method as M;
use orchestrator_core::api::*;

/// Agents and workers.
pub(super) fn docs() -> Vec<Doc> {
    vec![
        op(M::POST, "/api/v1/agents/register", "Register an agent", created::<Agent>()).body::<RegisterAgent>(),
        op(M::GET, "/api/v1/agents", "List agents", page::<Agent>()).query::<AgentFilter>(),
        op(M::GET, "/api/v1/agents/{id}", "Get an agent", ok::<Agent>()),
        op(M::POST, "/api/v1/agents/{id}/heartbeat", "Agent heartbeat", ok::<HeartbeatAck>()),
        op(M::POST, "/api/v1/workers/register", "Register a worker", created::<RegisteredWorker>()).body::<RegisterWorker>(),
        op(M::GET, "/api/v1/workers", "List workers", page::<Worker>()).paged(),
        op(M::GET, "/api/v1/workers/{id}", "Get a worker", ok::<Worker>()),
        op(M::DELETE, "/api/v1/workers/{id}", "Deregister an offline worker and revoke its keys", ok::<DeletedWorker>()),
        op(M::POST, "/api/v1/workers/{id}/heartbeat", "Worker heartbeat", ok::<WorkerHeartbeatAck>()).body::<WorkerHeartbeat>(),
        op(M::POST, "/api/v1/workers/{id}/next", "Claim the worker's next task", ok::<Task>()).body::<WorkerNext>().or_no_content(),
        op(M::POST, "/api/v1/workers/{id}/claim-batch", "Claim tasks for several of the worker's idle agents", ok::<Vec<ClaimedTask>>()).body::<ClaimBatch>(),
        op(M::POST, "/api/v1/workers/{id}/signal", "Send a signal to a connected worker", ok::<SignalSent>()).body::<SignalWorker>(),
    ]
}
