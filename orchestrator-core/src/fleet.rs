//! Fleet and containers: what each worker last reported it runs, and the
//! admin views over workers, their agents, held tasks and containers.
//!
//! A worker heartbeat with `containers` replaces the worker's rows in
//! `worker_containers` (`replace_containers`, called by `workers.rs` in the
//! heartbeat's transaction); absent keeps them, `[]` clears them. A worker
//! names the environments it can run with routing tags `env:<name or id>`
//! (the claim engine reads the same tags: `lifecycle::claim`).
//!
//! This module reads the `workers`, `agents`, `tasks` and
//! `execution_environments` tables with plain SQL and imports none of their
//! modules, so `workers.rs` can call it.

use crate::api::fleet::{
    Container, ContainerFilter, ContainerReport, ContainerState, FleetAgent, FleetEnvironment,
    FleetWorker,
};
use crate::api::{Page, PageRequest};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::store::{Access, Tx, on_db};
use chrono::{DateTime, Utc};
use sqlx::types::Json;
use std::collections::HashMap;
use uuid::Uuid;

/// Most containers one heartbeat may report.
const MAX_CONTAINERS: usize = 500;

#[derive(sqlx::FromRow)]
struct ContainerRow {
    container_id: String,
    worker_id: Uuid,
    worker_name: String,
    worker_status: String,
    heartbeat_interval_seconds: i32,
    name: String,
    image: String,
    state: String,
    task_id: Option<Uuid>,
    started_at: DateTime<Utc>,
    cpu_percent: Option<f64>,
    memory_bytes: Option<i64>,
    reported_at: DateTime<Utc>,
}

impl ContainerRow {
    fn to_api(&self) -> Container {
        Container {
            id: self.container_id.clone(),
            worker_id: self.worker_id,
            worker_name: self.worker_name.clone(),
            worker_status: self.worker_status.clone(),
            name: self.name.clone(),
            image: self.image.clone(),
            state: ContainerState::parse(&self.state).unwrap_or(ContainerState::Dead),
            task_id: self.task_id,
            started_at: self.started_at.into(),
            cpu_percent: self.cpu_percent,
            memory_bytes: self.memory_bytes,
            reported_at: self.reported_at.into(),
        }
    }
}

macro_rules! container_select {
    () => {
        "SELECT c.container_id, c.worker_id, w.name AS worker_name, w.status AS worker_status, \
         w.heartbeat_interval_seconds, c.name, c.image, c.state, c.task_id, c.started_at, \
         c.cpu_percent, c.memory_bytes, c.reported_at \
         FROM worker_containers c JOIN workers w ON w.id = c.worker_id"
    };
}

/// Checks a heartbeat's `containers` (400 on the first bad entry).
pub(crate) fn validate_reports(reports: &[ContainerReport]) -> Result<()> {
    if reports.len() > MAX_CONTAINERS {
        return Err(Error::invalid_field(
            "containers",
            format!("at most {MAX_CONTAINERS} entries"),
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for report in reports {
        if report.id.trim().is_empty() || report.id.len() > 200 || !seen.insert(&report.id) {
            return Err(Error::invalid_field(
                "containers",
                "every entry needs a distinct, non-empty id of at most 200 characters",
            ));
        }
        if report
            .cpu_percent
            .is_some_and(|c| !c.is_finite() || c < 0.0)
            || report.memory_bytes.is_some_and(|m| m < 0)
        {
            return Err(Error::invalid_field(
                "containers",
                "cpu_percent and memory_bytes must not be negative",
            ));
        }
    }
    Ok(())
}

/// Replaces the worker's last report with `reports`.
pub(crate) async fn replace_containers(
    tx: &mut Tx,
    tenant_id: Uuid,
    worker_id: Uuid,
    reports: &[ContainerReport],
) -> Result<()> {
    on_db!(tx, c => sqlx::query("DELETE FROM worker_containers WHERE worker_id = $1")
        .bind(worker_id)
        .execute(c).await.map(|r| r.rows_affected()))?;
    let now = tx.now().as_datetime();
    for report in reports {
        on_db!(tx, c => sqlx::query(
            "INSERT INTO worker_containers (tenant_id, worker_id, container_id, name, image, state, task_id, \
             started_at, cpu_percent, memory_bytes, reported_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(tenant_id)
        .bind(worker_id)
        .bind(&report.id)
        .bind(&report.name)
        .bind(&report.image)
        .bind(report.state.as_str())
        .bind(report.task_id)
        .bind(report.started_at.as_datetime())
        .bind(report.cpu_percent)
        .bind(report.memory_bytes)
        .bind(now)
        .execute(c).await.map(|r| r.rows_affected()))?;
    }
    Ok(())
}

async fn all_containers(access: &mut impl Access, tenant_id: Uuid) -> Result<Vec<ContainerRow>> {
    Ok(on_db!(access, c => sqlx::query_as(concat!(
        container_select!(), " WHERE c.tenant_id = $1 ORDER BY c.reported_at DESC, c.worker_id, c.container_id"
    ))
    .bind(tenant_id)
    .fetch_all(c)
    .await)?)
}

impl ControlPlane {
    /// `GET /containers`: every container last reported (stopped ones and
    /// those of offline workers too), newest report first.
    pub async fn list_containers(
        &self,
        caller: &Caller,
        filter: ContainerFilter,
        page: PageRequest,
    ) -> Result<Page<Container>> {
        macro_rules! where_clause {
            () => {
                " WHERE c.tenant_id = $1 AND ($2 IS NULL OR c.worker_id = $2) \
                 AND ($3 IS NULL OR c.state = $3) AND ($4 IS NULL OR c.task_id = $4)"
            };
        }
        let state = filter.state.map(ContainerState::as_str);
        let mut conn = self.store().read().await?;
        let (total,): (i64,) = on_db!(&mut conn, c => sqlx::query_as(concat!(
            "SELECT COUNT(*) FROM worker_containers c", where_clause!()
        ))
        .bind(caller.tenant_id)
        .bind(filter.worker_id)
        .bind(state)
        .bind(filter.task_id)
        .fetch_one(c)
        .await)?;
        let rows: Vec<ContainerRow> = on_db!(&mut conn, c => sqlx::query_as(concat!(
            container_select!(), where_clause!(),
            " ORDER BY c.reported_at DESC, c.worker_id, c.container_id LIMIT $5 OFFSET $6"
        ))
        .bind(caller.tenant_id)
        .bind(filter.worker_id)
        .bind(state)
        .bind(filter.task_id)
        .bind(i64::from(page.per_page))
        .bind(page.offset() as i64)
        .fetch_all(c)
        .await)?;
        let items = rows.iter().map(ContainerRow::to_api).collect();
        Ok(Page::new(items, total as u64, page))
    }

    /// `GET /fleet/live-containers`: containers of online workers whose
    /// report is at most two heartbeat intervals old.
    pub async fn live_containers(&self, caller: &Caller) -> Result<Vec<Container>> {
        let mut conn = self.store().read().await?;
        let now = self.now().as_datetime();
        Ok(all_containers(&mut conn, caller.tenant_id)
            .await?
            .iter()
            .filter(|row| {
                let window =
                    chrono::Duration::seconds(2 * i64::from(row.heartbeat_interval_seconds));
                row.worker_status != "offline" && now - row.reported_at <= window
            })
            .map(ContainerRow::to_api)
            .collect())
    }

    /// `GET /fleet/workers`: every worker with its agents and their held
    /// tasks, its running containers and the environments it can run.
    pub async fn fleet_workers(&self, caller: &Caller) -> Result<Vec<FleetWorker>> {
        type WorkerTuple = (Uuid, String, String, Json<Vec<String>>, i32, DateTime<Utc>);
        let tenant = caller.tenant_id;
        let mut conn = self.store().read().await?;
        let workers: Vec<WorkerTuple> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT id, name, status, routing_tags, heartbeat_interval_seconds, last_heartbeat_at \
             FROM workers WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC",
        ).bind(tenant).fetch_all(c).await)?;
        let agents: Vec<(Uuid, String, String, Uuid)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT id, name, status, worker_id FROM agents WHERE tenant_id = $1 AND worker_id IS NOT NULL \
             ORDER BY created_at, id",
        ).bind(tenant).fetch_all(c).await)?;
        let held: Vec<(Uuid, Uuid)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT assigned_agent_id, id FROM tasks WHERE tenant_id = $1 \
             AND state IN ('claimed', 'in_progress') AND assigned_agent_id IS NOT NULL",
        ).bind(tenant).fetch_all(c).await)?;
        let running: Vec<(Uuid, i64)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT worker_id, COUNT(*) FROM worker_containers WHERE tenant_id = $1 AND state = 'running' \
             GROUP BY worker_id",
        ).bind(tenant).fetch_all(c).await)?;
        let environments: Vec<(Uuid, String, String)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT id, name, image FROM execution_environments WHERE tenant_id = $1 \
             AND (support_status IS NULL OR support_status <> 'blocked') ORDER BY name",
        ).bind(tenant).fetch_all(c).await)?;
        let held: HashMap<Uuid, Uuid> = held.into_iter().collect();
        let running: HashMap<Uuid, i64> = running.into_iter().collect();
        Ok(workers
            .into_iter()
            .map(|(id, name, status, tags, interval, last)| {
                let wanted: Vec<&str> = tags
                    .0
                    .iter()
                    .filter_map(|t| t.strip_prefix("env:"))
                    .collect();
                FleetWorker {
                    worker_id: id,
                    name,
                    status,
                    heartbeat_interval_seconds: i64::from(interval),
                    last_heartbeat_at: last.into(),
                    agents: agents
                        .iter()
                        .filter(|a| a.3 == id)
                        .map(|(agent_id, agent_name, agent_status, _)| FleetAgent {
                            id: *agent_id,
                            name: agent_name.clone(),
                            status: agent_status.clone(),
                            current_task_id: held.get(agent_id).copied(),
                        })
                        .collect(),
                    running_containers: running.get(&id).copied().unwrap_or(0),
                    environments: environments
                        .iter()
                        .filter(|(env_id, env_name, _)| {
                            wanted
                                .iter()
                                .any(|w| *w == env_id.to_string() || *w == env_name.to_lowercase())
                        })
                        .map(|(env_id, env_name, image)| FleetEnvironment {
                            id: *env_id,
                            name: env_name.clone(),
                            image: image.clone(),
                        })
                        .collect(),
                    routing_tags: tags.0,
                }
            })
            .collect())
    }
}
