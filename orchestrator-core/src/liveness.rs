//! Liveness and timeouts, run by the background runner
//! ([`ControlPlane::sweep_liveness`], every
//! [`crate::CoreConfig::liveness_interval`]; see [`crate::background`]):
//!
//! - an active agent with no heartbeat for 2 x its interval becomes
//!   `inactive`; an online worker likewise becomes `offline`;
//! - once an inactive agent has been silent for a further
//!   [`crate::CoreConfig::liveness_grace`], its claimed or in-progress task
//!   is released: back to `pending` with `retry_count + 1`, or `failed`
//!   (error category `agent_lost`) when its retries are spent;
//! - a claimed or in-progress task older than its `timeout_minutes` fails
//!   with error category `timeout`.
//!
//! Each change is its own transaction with its events, acted by the
//! `system` owner.

use crate::api::TaskError;
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::Result;
use crate::events::{self, NewEvent};
use crate::lifecycle::failure::{Cause, Failure, fail_in};
use crate::store::on_db;
use crate::tasks::{self, TaskRow};
use chrono::{DateTime, Duration, Utc};
use serde_json::json;
use uuid::Uuid;

/// What one sweep changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Swept {
    /// Active agents marked `inactive` (no heartbeat for twice their
    /// interval).
    pub agents_inactive: u64,
    /// Online workers marked `offline`, by the same rule.
    pub workers_offline: u64,
    /// Tasks taken back from agents silent past the grace period (back to
    /// `pending`, or `failed` with `agent_lost` when out of retries).
    pub tasks_released: u64,
    /// Claimed or running tasks failed for passing their
    /// `timeout_minutes`.
    pub tasks_timed_out: u64,
}

impl ControlPlane {
    /// One liveness and timeout sweep (see the module docs).
    pub async fn sweep_liveness(&self) -> Result<Swept> {
        let mut swept = Swept::default();
        let now = self.clock().now();
        let grace =
            Duration::from_std(self.config().liveness_grace).unwrap_or(Duration::seconds(60));

        // Agents and workers past 2 x their interval.
        for table in ["agents", "workers"] {
            let (alive, dead, entity) = if table == "agents" {
                ("active", "inactive", "agent")
            } else {
                ("online", "offline", "worker")
            };
            let sql = format!(
                "SELECT id, tenant_id, heartbeat_interval_seconds, last_heartbeat_at FROM {table} WHERE status = $1"
            );
            let mut conn = self.store().read().await?;
            let rows: Vec<(Uuid, Uuid, i32, DateTime<Utc>)> = on_db!(&mut conn, c => sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
                .bind(alive).fetch_all(c).await)?;
            drop(conn);
            for (id, tenant_id, interval, last) in rows {
                if last + Duration::seconds(2 * i64::from(interval)) > now {
                    continue;
                }
                let mut tx = self.store().begin().await?;
                let update = format!(
                    "UPDATE {table} SET status = $1, updated_at = $2 WHERE id = $3 AND status = $4 AND last_heartbeat_at = $5"
                );
                let changed = on_db!(&mut tx, c => sqlx::query(sqlx::AssertSqlSafe(update.as_str()))
                    .bind(dead).bind(now).bind(id).bind(alive).bind(last)
                    .execute(c).await.map(|r| r.rows_affected()))?;
                if changed == 1 {
                    events::record(&mut tx, &Caller::system(tenant_id), tenant_id, NewEvent::new(
                        &format!("{entity}.status_changed"), entity, id,
                        json!({ format!("{entity}_id"): id, "status": dead, "reason": "missed heartbeats" }),
                    )).await?;
                    if table == "agents" {
                        swept.agents_inactive += 1
                    } else {
                        swept.workers_offline += 1
                    }
                }
                tx.commit().await?;
            }
        }

        // Tasks held by agents that stayed silent past the grace.
        let mut conn = self.store().read().await?;
        let held: Vec<(Uuid, Uuid, Uuid, i32, DateTime<Utc>)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT t.id, t.tenant_id, a.id, a.heartbeat_interval_seconds, a.last_heartbeat_at FROM tasks t \
             JOIN agents a ON a.id = t.assigned_agent_id \
             WHERE t.state IN ('claimed', 'in_progress') AND a.status = 'inactive'",
        )
        .fetch_all(c)
        .await)?;
        let timed: Vec<(Uuid, Uuid, i32, DateTime<Utc>)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT id, tenant_id, timeout_minutes, claimed_at FROM tasks \
             WHERE state IN ('claimed', 'in_progress') AND claimed_at IS NOT NULL ORDER BY claimed_at",
        )
        .fetch_all(c)
        .await)?;
        drop(conn);
        for (task_id, tenant_id, agent_id, interval, last) in held {
            if last + Duration::seconds(2 * i64::from(interval)) + grace > now {
                continue;
            }
            if self
                .release(tenant_id, task_id, Some(agent_id), false)
                .await?
            {
                swept.tasks_released += 1;
            }
        }
        for (task_id, tenant_id, minutes, claimed_at) in timed {
            if claimed_at + Duration::minutes(i64::from(minutes)) > now {
                continue;
            }
            if self.release(tenant_id, task_id, None, true).await? {
                swept.tasks_timed_out += 1;
            }
        }
        Ok(swept)
    }

    /// Releases (agent lost) or times out one held task; `false` when it
    /// changed in the meantime.
    pub(crate) async fn release(
        &self,
        tenant_id: Uuid,
        task_id: Uuid,
        agent_id: Option<Uuid>,
        timeout: bool,
    ) -> Result<bool> {
        let caller = Caller::system(tenant_id);
        let mut tx = self.store().begin().await?;
        let row: TaskRow = tasks::rows::find_for_update(&mut tx, tenant_id, task_id).await?;
        let from = row.state()?;
        if !from.is_held() || (agent_id.is_some() && row.assigned_agent_id != agent_id) {
            return Ok(false);
        }
        let (cause, category, message) = if timeout {
            (
                Cause::Timeout,
                "timeout",
                format!("no result within {} minutes", row.timeout_minutes),
            )
        } else {
            (
                Cause::AgentLost,
                "agent_lost",
                "the assigned agent stopped sending heartbeats".to_owned(),
            )
        };
        let error = TaskError {
            category: Some(category.into()),
            message: Some(message),
            recoverable: Some(true),
        };
        let failure = Failure {
            cause,
            error: &error,
            reason: category,
            retry_after: None,
            now: self.now().as_datetime(),
        };
        let row = fail_in(&mut tx, &caller, row, failure).await?;
        tx.commit().await?;
        if let Some(run_at) = row.run_at {
            self.wake_background(run_at);
        }
        Ok(true)
    }
}
