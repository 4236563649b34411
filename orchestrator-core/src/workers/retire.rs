//! A worker that leaves or comes back: `DELETE /workers/:id` deregisters
//! one, and registration with `take_over_offline` reuses an offline one of
//! the same name (a restarted `orch worker run`). Both revoke every live key
//! of the worker and its agents here, so a process that is gone leaves no
//! credential behind, and retire the agents nobody runs any more.

use crate::api::{DeletedWorker, ExecutionMode};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::store::{StoredJson, Tx, on_db};
use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::types::Json;
use uuid::Uuid;

/// An offline worker claimed for a new run of the same name.
pub(super) struct TakenOver {
    pub id: Uuid,
    /// Its agents, oldest first: reused in this order for the new run.
    pub agents: Vec<Uuid>,
    /// Keys revoked in the transaction (to drop from the credential cache
    /// once it commits).
    pub revoked: Vec<Uuid>,
}

/// Takes over the newest offline worker named `name`: it becomes online
/// (the conditional update makes two concurrent runs of one name take
/// over at most once; the loser registers a new worker) and every live key
/// of it and its agents is revoked. `None` when there is no such worker.
pub(super) async fn take_over(
    tx: &mut Tx,
    tenant_id: Uuid,
    name: &str,
    now: DateTime<Utc>,
) -> Result<Option<TakenOver>> {
    let found: Option<(Uuid,)> = on_db!(tx, c => sqlx::query_as(
        "SELECT id FROM workers WHERE tenant_id = $1 AND name = $2 AND status = 'offline' \
         ORDER BY updated_at DESC, id DESC LIMIT 1",
    )
    .bind(tenant_id)
    .bind(name)
    .fetch_optional(c)
    .await)?;
    let Some((id,)) = found else {
        return Ok(None);
    };
    let claimed = on_db!(tx, c => sqlx::query(
        "UPDATE workers SET status = 'online', current_task_id = NULL, last_heartbeat_at = $1, \
         updated_at = $1 WHERE id = $2 AND tenant_id = $3 AND status = 'offline'",
    )
    .bind(now)
    .bind(id)
    .bind(tenant_id)
    .execute(c).await.map(|r| r.rows_affected()))?;
    if claimed == 0 {
        return Ok(None);
    }
    let agents = agents_of(tx, tenant_id, id).await?;
    let revoked = revoke_keys(tx, tenant_id, id, &agents, now).await?;
    Ok(Some(TakenOver {
        id,
        agents,
        revoked,
    }))
}

/// The worker's agents, oldest first.
async fn agents_of(tx: &mut Tx, tenant_id: Uuid, worker_id: Uuid) -> Result<Vec<Uuid>> {
    let rows: Vec<(Uuid,)> = on_db!(tx, c => sqlx::query_as(
        "SELECT id FROM agents WHERE tenant_id = $1 AND worker_id = $2 ORDER BY created_at, id",
    )
    .bind(tenant_id)
    .bind(worker_id)
    .fetch_all(c)
    .await)?;
    Ok(rows.into_iter().map(|(id,)| id).collect())
}

/// Revokes every live key owned by the worker or one of `agents`, with the
/// sessions minted from them; answers the revoked keys' ids.
async fn revoke_keys(
    tx: &mut Tx,
    tenant_id: Uuid,
    worker_id: Uuid,
    agents: &[Uuid],
    now: DateTime<Utc>,
) -> Result<Vec<Uuid>> {
    let mut revoked = Vec::new();
    for (owner_type, owner_id) in
        std::iter::once(("worker", worker_id)).chain(agents.iter().map(|a| ("agent", *a)))
    {
        let ids: Vec<(Uuid,)> = on_db!(tx, c => sqlx::query_as(
            "UPDATE api_keys SET revoked_at = $1 WHERE tenant_id = $2 AND owner_type = $3 \
             AND owner_id = $4 AND revoked_at IS NULL RETURNING id",
        )
        .bind(now)
        .bind(tenant_id)
        .bind(owner_type)
        .bind(owner_id)
        .fetch_all(c)
        .await)?;
        for (key_id,) in ids {
            on_db!(tx, c => sqlx::query(
                "UPDATE refresh_sessions SET revoked_at = $1 WHERE api_key_id = $2 AND revoked_at IS NULL",
            )
            .bind(now)
            .bind(key_id)
            .execute(c).await.map(|r| r.rows_affected()))?;
            revoked.push(key_id);
        }
    }
    Ok(revoked)
}

/// One of a taken-over worker's agents, made what the new run asked for:
/// its name, routing tags, mode and heartbeat interval, `active` now.
#[allow(clippy::too_many_arguments)]
pub(super) async fn reuse_agent(
    tx: &mut Tx,
    tenant_id: Uuid,
    agent_id: Uuid,
    name: &str,
    tags: &[String],
    mode: ExecutionMode,
    heartbeat: i64,
    now: DateTime<Utc>,
) -> Result<()> {
    let (metadata,): (StoredJson,) = on_db!(tx, c => sqlx::query_as(
        "SELECT metadata FROM agents WHERE id = $1 AND tenant_id = $2",
    )
    .bind(agent_id)
    .bind(tenant_id)
    .fetch_one(c)
    .await)?;
    let mut metadata = metadata.0;
    if let Some(map) = metadata.as_object_mut() {
        map.insert("execution_mode".into(), json!(mode.as_str()));
    }
    on_db!(tx, c => sqlx::query(
        "UPDATE agents SET name = $1, routing_tags = $2, execution_mode = $3, heartbeat_interval_seconds = $4, \
         metadata = $5, status = 'active', last_heartbeat_at = $6, updated_at = $6 WHERE id = $7 AND tenant_id = $8",
    )
    .bind(name.trim())
    .bind(Json(tags))
    .bind(mode.as_str())
    .bind(heartbeat as i32)
    .bind(Json(metadata))
    .bind(now)
    .bind(agent_id)
    .bind(tenant_id)
    .execute(c).await.map(|r| r.rows_affected()))?;
    Ok(())
}

/// Agents nobody runs any more: `inactive` and detached from the worker.
/// Their held tasks are left to the liveness rules, which release the
/// tasks of inactive agents after the grace period.
pub(super) async fn retire_agents(
    tx: &mut Tx,
    tenant_id: Uuid,
    agents: &[Uuid],
    now: DateTime<Utc>,
) -> Result<()> {
    for agent_id in agents {
        on_db!(tx, c => sqlx::query(
            "UPDATE agents SET status = 'inactive', worker_id = NULL, updated_at = $1 \
             WHERE id = $2 AND tenant_id = $3",
        )
        .bind(now)
        .bind(agent_id)
        .bind(tenant_id)
        .execute(c).await.map(|r| r.rows_affected()))?;
    }
    Ok(())
}

impl ControlPlane {
    /// The tasks `agent_id` holds (claimed or in progress).
    pub(super) async fn held_by(&self, tenant_id: Uuid, agent_id: Uuid) -> Result<Vec<Uuid>> {
        let mut conn = self.store().read().await?;
        let rows: Vec<(Uuid,)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT id FROM tasks WHERE tenant_id = $1 AND assigned_agent_id = $2 \
             AND state IN ('claimed', 'in_progress')",
        )
        .bind(tenant_id)
        .bind(agent_id)
        .fetch_all(c)
        .await)?;
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }

    /// `DELETE /workers/:id` (admin, beyond the contract): deregisters a
    /// worker that is not online (409 while it is: drain or stop it
    /// first), revokes its keys and its agents' keys, retires its agents
    /// and deletes it with its container reports.
    pub async fn delete_worker(&self, caller: &Caller, id: Uuid) -> Result<DeletedWorker> {
        let now = self.now().as_datetime();
        let mut tx = self.store().begin().await?;
        let status: Option<(String,)> = on_db!(&mut tx, c => sqlx::query_as(
            "SELECT status FROM workers WHERE id = $1 AND tenant_id = $2",
        )
        .bind(id)
        .bind(caller.tenant_id)
        .fetch_optional(c)
        .await)?;
        let Some((status,)) = status else {
            return Err(Error::not_found("worker"));
        };
        if status == "online" {
            return Err(Error::conflict(
                "the worker is online: stop it (or send it the drain signal) and delete it once it is offline",
            ));
        }
        let agents = agents_of(&mut tx, caller.tenant_id, id).await?;
        let revoked = revoke_keys(&mut tx, caller.tenant_id, id, &agents, now).await?;
        retire_agents(&mut tx, caller.tenant_id, &agents, now).await?;
        on_db!(&mut tx, c => sqlx::query("DELETE FROM workers WHERE id = $1 AND tenant_id = $2")
            .bind(id)
            .bind(caller.tenant_id)
            .execute(c).await.map(|r| r.rows_affected()))?;
        events::record(
            &mut tx,
            caller,
            caller.tenant_id,
            NewEvent::new(
                "worker.deleted",
                "worker",
                id,
                json!({ "worker_id": id, "agents": agents, "keys_revoked": revoked.len() }),
            ),
        )
        .await?;
        tx.commit().await?;
        for key_id in &revoked {
            self.forget_credential(*key_id);
        }
        Ok(DeletedWorker {
            id,
            deleted: true,
            keys_revoked: revoked.len() as u64,
        })
    }
}
