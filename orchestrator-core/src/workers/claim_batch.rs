//! `POST /workers/:id/claim-batch` (beyond the contract): tasks for the
//! worker's agents that hold none, up to `limit`, in one write transaction
//! ([`crate::lifecycle::claim_batch`]), with the long poll of the one-task
//! claim ([`crate::lifecycle::long_poll`]).

use super::{check_worker_access, find};
use crate::api::batch::MAX_BATCH;
use crate::api::{ClaimBatch, ClaimedTask};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::lifecycle::claim::{check_claim_environment, claimer_tags};
use crate::lifecycle::claim_batch::{BatchClaimer, BatchFilter, claim_batch};
use crate::store::{Access, on_db};
use uuid::Uuid;

/// The worker's agents that hold no claimed or in-progress task, oldest
/// first, at most `limit`. A read outside the claim's transaction: an agent
/// that takes a task meanwhile (a concurrent batch for the same worker) is
/// then skipped by the claim, which is why the caller reads more agents than
/// it means to claim for.
///
/// The limit is `CAST($3 AS BIGINT)`, not `$3`: SQLite's planner reads a
/// bare `LIMIT` parameter's value, and a statement whose plan read a
/// parameter is compiled again at every execution (bench/HISTORY.md items
/// 37 and 38).
async fn idle_agents(
    access: &mut impl Access,
    tenant_id: Uuid,
    worker_id: Uuid,
    limit: i64,
) -> Result<Vec<Uuid>> {
    let rows: Vec<(Uuid,)> = on_db!(access, c => sqlx::query_as(
        "SELECT a.id FROM agents a WHERE a.tenant_id = $1 AND a.worker_id = $2 \
         AND NOT EXISTS (SELECT 1 FROM tasks h WHERE h.assigned_agent_id = a.id \
           AND h.state IN ('claimed', 'in_progress')) \
         ORDER BY a.created_at, a.id LIMIT CAST($3 AS BIGINT)",
    )
    .bind(tenant_id)
    .bind(worker_id)
    .bind(limit)
    .fetch_all(c)
    .await)?;
    Ok(rows.into_iter().map(|(id,)| id).collect())
}

impl ControlPlane {
    /// `POST /workers/:id/claim-batch`: the tasks claimed, one per agent,
    /// each with its agent; empty when nothing was claimable within
    /// `wait_seconds`. A worker key claims only for its own worker.
    pub async fn claim_batch(
        &self,
        caller: &Caller,
        id: Uuid,
        request: ClaimBatch,
    ) -> Result<Vec<ClaimedTask>> {
        if !(1..=MAX_BATCH).contains(&request.limit) {
            return Err(Error::schema_field("limit", "must be 1 to 256"));
        }
        let wait = crate::lifecycle::long_poll::requested_wait(request.wait_seconds)?;
        check_worker_access(caller, id)?;
        let found = crate::lifecycle::long_poll::long_poll(self.store(), wait, || {
            let (this, caller, request) = (self.clone(), caller.clone(), request.clone());
            self.store().on_writer(async move {
                let claimed = this.claim_batch_here(&caller, id, request).await?;
                Ok((!claimed.is_empty()).then_some(claimed))
            })
        })
        .await?;
        Ok(found.unwrap_or_default())
    }

    async fn claim_batch_here(
        &self,
        caller: &Caller,
        id: Uuid,
        request: ClaimBatch,
    ) -> Result<Vec<ClaimedTask>> {
        let mut conn = self.store().read().await?;
        find(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("worker"))?;
        // Up to four times the limit: room for concurrent batches of the
        // same worker to find different idle agents.
        let idle = idle_agents(&mut conn, caller.tenant_id, id, request.limit * 4).await?;
        drop(conn);
        check_claim_environment(
            self.store(),
            caller.tenant_id,
            request.execution_environment_id,
        )
        .await?;
        let mut claimers = Vec::with_capacity(idle.len());
        for agent_id in idle {
            let agent = self.acting_agent(caller, agent_id, Some(id)).await?;
            let tags = claimer_tags(&agent, None);
            claimers.push(BatchClaimer { agent, tags });
        }
        let filter = BatchFilter {
            workflow_id: request.workflow_id,
            environment: request.execution_environment_id,
            start: request.start,
            limit: request.limit as usize,
            now: self.now().as_datetime(),
        };
        let rows = claim_batch(self.store(), caller, &claimers, &filter).await?;
        let mut claimed = Vec::with_capacity(rows.len());
        for row in rows {
            let agent_id = row.assigned_agent_id.unwrap_or_default();
            let task = self
                .claimed_task(caller, row, request.include_context)
                .await?;
            claimed.push(ClaimedTask { agent_id, task });
        }
        Ok(claimed)
    }
}
