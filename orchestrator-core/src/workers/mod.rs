//! Workers: processes that run agents. Registration creates the worker, its
//! agents (inheriting the worker's routing tags), a worker-scope key bound to
//! the worker and one agent key per agent, all shown once. Status is
//! `online` or `offline` (after 2 x the heartbeat interval without a
//! heartbeat, set by the liveness monitor). Taking over an offline worker
//! and deleting one are in `retire`.

mod claim_batch;
mod retire;

use crate::agents::{self, NewAgent};
use crate::api::{
    AgentProtocol, CONNECTION_MODES, Page, PageRequest, RegisterWorker, RegisteredWorker,
    RegisteredWorkerAgent, Scope, SignalKind, SignalSent, SignalWorker, Task, Worker,
    WorkerHeartbeat, WorkerNext,
};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::fleet;
use crate::idempotency::{Storage, begin_write};
use crate::keys::{self, NewKey};
use crate::lifecycle::claim::{check_claim_environment, claim, claim_filtered, claimer_tags};
use crate::store::StoredJson;
use crate::store::{Access, on_db};
use crate::tags::normalise_tags;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sqlx::types::Json;
use uuid::Uuid;

/// Heartbeat interval of a worker registered without one, in seconds.
pub const DEFAULT_WORKER_HEARTBEAT_SECONDS: i64 = 30;

#[derive(Debug, Clone, sqlx::FromRow)]
struct WorkerRow {
    id: Uuid,
    name: String,
    runtime_type: String,
    connection_mode: String,
    routing_tags: Json<Vec<String>>,
    host_info: StoredJson,
    heartbeat_interval_seconds: i32,
    metadata: StoredJson,
    status: String,
    current_task_id: Option<Uuid>,
    metrics: Option<StoredJson>,
    last_heartbeat_at: DateTime<Utc>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

const WORKER_COLUMNS: &str = "id, name, runtime_type, connection_mode, routing_tags, host_info, \
    heartbeat_interval_seconds, metadata, status, current_task_id, metrics, last_heartbeat_at, created_at, updated_at";

impl WorkerRow {
    fn to_api(&self, agents: Vec<Uuid>) -> Worker {
        Worker {
            worker_id: self.id,
            name: self.name.clone(),
            runtime_type: self.runtime_type.clone(),
            connection_mode: self.connection_mode.clone(),
            routing_tags: self.routing_tags.0.clone(),
            host_info: self.host_info.0.clone(),
            heartbeat_interval_seconds: i64::from(self.heartbeat_interval_seconds),
            metadata: self.metadata.0.clone(),
            status: self.status.clone(),
            current_task_id: self.current_task_id,
            metrics: self.metrics.as_ref().map(|j| j.0.clone()),
            agents,
            last_heartbeat_at: self.last_heartbeat_at.into(),
            created_at: self.created_at.into(),
            updated_at: self.updated_at.into(),
        }
    }
}

async fn find(access: &mut impl Access, tenant_id: Uuid, id: Uuid) -> Result<Option<WorkerRow>> {
    let sql = format!("SELECT {WORKER_COLUMNS} FROM workers WHERE id = $1 AND tenant_id = $2");
    Ok(
        on_db!(access, c => sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
        .bind(id)
        .bind(tenant_id)
        .fetch_optional(c)
        .await)?,
    )
}

/// `(worker_id, agent_id)` of the agents of one worker, or (with `page`)
/// of the workers on one list page, in one query.
async fn agent_ids(
    access: &mut impl Access,
    tenant_id: Uuid,
    worker: Option<Uuid>,
    page: Option<PageRequest>,
) -> Result<Vec<(Uuid, Uuid)>> {
    let page = page.unwrap_or(PageRequest::new(1, 1));
    Ok(on_db!(access, c => sqlx::query_as(
        "SELECT worker_id, id FROM agents WHERE tenant_id = $1 AND worker_id IN \
         (SELECT id FROM workers WHERE tenant_id = $1 AND ($2 IS NULL OR id = $2) \
          ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4) ORDER BY created_at, id",
    )
    .bind(tenant_id)
    .bind(worker)
    .bind(if worker.is_some() { 1 } else { i64::from(page.per_page) })
    .bind(if worker.is_some() { 0 } else { page.offset() as i64 })
    .fetch_all(c)
    .await)?)
}

fn check_worker_access(caller: &Caller, id: Uuid) -> Result<()> {
    match (caller.owner_type.as_str(), caller.owner_id) {
        ("worker", Some(owner)) if owner != id => Err(Error::forbidden(
            "this credential belongs to another worker",
        )),
        _ => Ok(()),
    }
}

impl ControlPlane {
    /// `POST /workers/register`. `websocket_base` is `ws://host` when the
    /// server knows the request's host; the answer's `websocket_url` is then
    /// absolute, else the path `/api/v1/events`.
    pub async fn register_worker(
        &self,
        caller: &Caller,
        request: RegisterWorker,
        websocket_base: Option<&str>,
    ) -> Result<RegisteredWorker> {
        agents::validate_name(&request.name)?;
        let heartbeat = agents::validate_heartbeat(
            request.heartbeat_interval_seconds,
            DEFAULT_WORKER_HEARTBEAT_SECONDS,
        )?;
        for spec in request.agents.iter().flatten() {
            agents::validate_name(&spec.name)?;
        }
        if let Some(mode) = request.connection_mode.as_deref()
            && !CONNECTION_MODES.contains(&mode)
        {
            return Err(Error::schema_field(
                "connection_mode",
                format!("must be one of: {}", CONNECTION_MODES.join(", ")),
            ));
        }
        if request.agents.as_ref().is_some_and(|a| a.len() > 50) {
            return Err(Error::invalid_field(
                "agents",
                "at most 50 agents per worker",
            ));
        }
        let mut write = begin_write!(
            self,
            caller,
            "workers.register",
            request,
            Storage::Encrypted
        );
        let tx = &mut write.tx;
        let now = self.now().as_datetime();
        let tags = normalise_tags(request.routing_tags.iter().flatten());
        let taken = match request.take_over_offline {
            Some(true) => retire::take_over(tx, caller.tenant_id, request.name.trim(), now).await?,
            _ => None,
        };
        let id = taken.as_ref().map_or_else(Uuid::new_v4, |t| t.id);
        let sql = if taken.is_some() {
            "UPDATE workers SET name = $3, runtime_type = $4, connection_mode = $5, routing_tags = $6, \
             host_info = $7, heartbeat_interval_seconds = $8, metadata = $9, updated_at = $10 \
             WHERE id = $1 AND tenant_id = $2"
        } else {
            "INSERT INTO workers (id, tenant_id, name, runtime_type, connection_mode, routing_tags, host_info, \
             heartbeat_interval_seconds, metadata, status, last_heartbeat_at, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'online', $10, $10, $10)"
        };
        on_db!(tx, c => sqlx::query(sql)
        .bind(id)
        .bind(caller.tenant_id)
        .bind(request.name.trim())
        .bind(request.runtime_type.as_deref().unwrap_or("external"))
        .bind(request.connection_mode.as_deref().unwrap_or("websocket"))
        .bind(Json(&tags))
        .bind(Json(request.host_info.clone().unwrap_or_else(|| json!({}))))
        .bind(heartbeat as i32)
        .bind(Json(request.metadata.clone().unwrap_or_else(|| json!({}))))
        .bind(now)
        .execute(c).await.map(|r| r.rows_affected()))?;
        let event = if taken.is_some() {
            "worker.taken_over"
        } else {
            "worker.registered"
        };
        events::record(
            tx,
            caller,
            caller.tenant_id,
            NewEvent::new(
                event,
                "worker",
                id,
                json!({ "worker_id": id, "name": request.name }),
            ),
        )
        .await?;
        let generated = keys::generate(Scope::Worker);
        let key_name = format!("worker {}", request.name.trim());
        keys::insert(
            tx,
            &NewKey {
                tenant_id: caller.tenant_id,
                name: &key_name,
                scope: Scope::Worker,
                owner_type: "worker",
                owner_id: Some(id),
                expires_at: None,
            },
            &generated,
        )
        .await?;
        let mut registered = Vec::new();
        let specs = request.agents.as_deref().unwrap_or_default();
        let mut reused = taken.as_ref().map(|t| t.agents.clone()).unwrap_or_default();
        let surplus = reused.split_off(specs.len().min(reused.len()));
        retire::retire_agents(tx, caller.tenant_id, &surplus, now).await?;
        for (index, spec) in specs.iter().enumerate() {
            let mode = spec.execution_mode.unwrap_or_default();
            let mut all_tags = tags.clone();
            all_tags.extend(spec.routing_tags.iter().flatten().cloned());
            if let Some(&agent_id) = reused.get(index) {
                let agent_tags = agents::agent_tags(Some(&all_tags), mode);
                retire::reuse_agent(
                    tx,
                    caller.tenant_id,
                    agent_id,
                    &spec.name,
                    &agent_tags,
                    mode,
                    heartbeat,
                    now,
                )
                .await?;
                let api_key = agents::issue_key(tx, caller.tenant_id, agent_id, &spec.name).await?;
                registered.push(RegisteredWorkerAgent {
                    id: agent_id,
                    name: spec.name.clone(),
                    routing_tags: agent_tags,
                    execution_mode: mode,
                    api_key,
                });
                continue;
            }
            let row = agents::insert(
                tx,
                caller,
                NewAgent {
                    name: &spec.name,
                    protocol: AgentProtocol::Rest,
                    tags: agents::agent_tags(Some(&all_tags), mode),
                    mode,
                    worker_id: Some(id),
                    heartbeat,
                    tools: Default::default(),
                    metadata: json!({}),
                    acp: None,
                    profile: None,
                },
            )
            .await?;
            let api_key = agents::issue_key(tx, caller.tenant_id, row.id, &row.name).await?;
            registered.push(RegisteredWorkerAgent {
                id: row.id,
                name: row.name.clone(),
                routing_tags: row.routing_tags.0.clone(),
                execution_mode: mode,
                api_key,
            });
        }
        let websocket_url = match websocket_base {
            Some(base) => format!("{base}/api/v1/events"),
            None => "/api/v1/events".to_owned(),
        };
        let answer = write
            .finish(RegisteredWorker {
                worker_id: id,
                worker_api_key: generated.raw,
                agents: registered,
                websocket_url,
                heartbeat_interval_seconds: heartbeat,
                taken_over: taken.is_some(),
            })
            .await?;
        if let Some(taken) = taken {
            for key_id in &taken.revoked {
                self.forget_credential(*key_id);
            }
            // The previous run is gone: what its agents still held is
            // released as for a lost agent (retried or failed).
            for agent_id in &reused {
                for task_id in self.held_by(caller.tenant_id, *agent_id).await? {
                    self.release(caller.tenant_id, task_id, Some(*agent_id), false)
                        .await?;
                }
            }
        }
        Ok(answer)
    }

    /// `POST /workers/:id/heartbeat`: marks the worker (and its agents) alive.
    pub async fn worker_heartbeat(
        &self,
        caller: &Caller,
        id: Uuid,
        request: WorkerHeartbeat,
    ) -> Result<Value> {
        check_worker_access(caller, id)?;
        let status = request.status.as_deref().unwrap_or("online");
        if !matches!(status, "online" | "busy" | "idle" | "draining") {
            return Err(Error::invalid_field(
                "status",
                "must be online, busy, idle or draining",
            ));
        }
        if let Some(containers) = &request.containers {
            fleet::validate_reports(containers)?;
        }
        let mut tx = self.store().begin().await?;
        let now = self.now().as_datetime();
        let before = find(&mut tx, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("worker"))?;
        if let Some(containers) = &request.containers {
            fleet::replace_containers(&mut tx, caller.tenant_id, id, containers).await?;
        }
        on_db!(&mut tx, c => sqlx::query(
            "UPDATE workers SET status = 'online', current_task_id = $1, metrics = COALESCE($2, metrics), \
             last_heartbeat_at = $3, updated_at = $3 WHERE id = $4",
        )
        .bind(request.current_task_id)
        .bind(request.metrics.clone().map(Json))
        .bind(now)
        .bind(id)
        .execute(c).await.map(|r| r.rows_affected()))?;
        on_db!(&mut tx, c => sqlx::query("UPDATE agents SET last_heartbeat_at = $1, status = 'active' WHERE worker_id = $2")
            .bind(now).bind(id)
            .execute(c).await.map(|r| r.rows_affected()))?;
        if before.status != "online" {
            events::record(
                &mut tx,
                caller,
                caller.tenant_id,
                NewEvent::new(
                    "worker.status_changed",
                    "worker",
                    id,
                    json!({ "worker_id": id, "status": "online" }),
                ),
            )
            .await?;
        }
        tx.commit().await?;
        Ok(json!({ "ack": true, "status": "online", "worker_id": id }))
    }

    /// `POST /workers/:id/next`: claims for one of the worker's agents (the
    /// given one, else each in turn until one gets a task); `None` is 204.
    /// With `wait_seconds`, a long poll ([`crate::lifecycle::long_poll`]).
    pub async fn worker_next(
        &self,
        caller: &Caller,
        id: Uuid,
        request: WorkerNext,
    ) -> Result<Option<Task>> {
        let wait = crate::lifecycle::long_poll::requested_wait(request.wait_seconds)?;
        crate::lifecycle::long_poll::long_poll(self.store(), wait, || {
            let (this, caller, request) = (self.clone(), caller.clone(), request.clone());
            self.store()
                .on_writer(async move { this.worker_next_here(&caller, id, request).await })
        })
        .await
    }

    async fn worker_next_here(
        &self,
        caller: &Caller,
        id: Uuid,
        request: WorkerNext,
    ) -> Result<Option<Task>> {
        check_worker_access(caller, id)?;
        let mut conn = self.store().read().await?;
        find(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("worker"))?;
        let candidates: Vec<Uuid> = match request.agent_id {
            Some(agent_id) => vec![agent_id],
            None => agent_ids(&mut conn, caller.tenant_id, Some(id), None)
                .await?
                .into_iter()
                .map(|(_, a)| a)
                .collect(),
        };
        drop(conn);
        check_claim_environment(
            self.store(),
            caller.tenant_id,
            request.execution_environment_id,
        )
        .await?;
        for agent_id in candidates {
            let agent = self.acting_agent(caller, agent_id, Some(id)).await?;
            let tags = claimer_tags(&agent, None);
            let row = claim_filtered(
                self.store(),
                caller,
                &agent,
                &tags,
                request.workflow_id,
                request.execution_environment_id,
                self.now().as_datetime(),
            )
            .await?;
            if let Some(row) = row {
                return Ok(Some(
                    self.claimed_task(caller, row, request.include_context)
                        .await?,
                ));
            }
        }
        Ok(None)
    }

    /// `GET /workers/:id`.
    pub async fn get_worker(&self, caller: &Caller, id: Uuid) -> Result<Worker> {
        let mut conn = self.store().read().await?;
        let row = find(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("worker"))?;
        let agents = agent_ids(&mut conn, caller.tenant_id, Some(id), None)
            .await?
            .into_iter()
            .map(|(_, a)| a)
            .collect();
        Ok(row.to_api(agents))
    }

    /// `GET /workers`: newest first.
    pub async fn list_workers(&self, caller: &Caller, page: PageRequest) -> Result<Page<Worker>> {
        let mut conn = self.store().read().await?;
        let (total,): (i64,) = on_db!(&mut conn, c => sqlx::query_as("SELECT COUNT(*) FROM workers WHERE tenant_id = $1")
            .bind(caller.tenant_id).fetch_one(c).await)?;
        let sql = format!(
            "SELECT {WORKER_COLUMNS} FROM workers WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3"
        );
        let rows: Vec<WorkerRow> = on_db!(&mut conn, c => sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
            .bind(caller.tenant_id)
            .bind(i64::from(page.per_page))
            .bind(page.offset() as i64)
            .fetch_all(c)
            .await)?;
        let pairs = agent_ids(&mut conn, caller.tenant_id, None, Some(page)).await?;
        let items = rows
            .iter()
            .map(|r| {
                r.to_api(
                    pairs
                        .iter()
                        .filter(|(w, _)| *w == r.id)
                        .map(|(_, a)| *a)
                        .collect(),
                )
            })
            .collect();
        Ok(Page::new(items, total as u64, page))
    }
}

/// The worker channel (`GET /api/v1/events` upgraded to a
/// websocket; the protocol is in [`crate::api::worker_channel`]). The server
/// drives a connection through these calls; each is one short transaction.
impl ControlPlane {
    /// Opens the channel for the caller's worker: the credential must be a
    /// worker key bound to a registered worker (403 otherwise). Marks the
    /// worker `online` (as a heartbeat does) and answers it, with its agents.
    pub async fn open_worker_channel(&self, caller: &Caller) -> Result<Worker> {
        let worker_id = match (caller.owner_type.as_str(), caller.owner_id) {
            ("worker", Some(id)) => id,
            _ => {
                return Err(Error::forbidden(
                    "the worker channel needs the worker key of a registered worker",
                ));
            }
        };
        self.touch_worker_channel(caller, worker_id).await?;
        self.get_worker(caller, worker_id).await
    }

    /// An open channel keeps its worker alive: `online`, and the heartbeat
    /// times of the worker and its agents set to now (so the liveness monitor
    /// neither marks it offline nor releases its agents' tasks). Records
    /// `worker.status_changed` when the worker was not online.
    pub async fn touch_worker_channel(&self, caller: &Caller, worker_id: Uuid) -> Result<()> {
        check_worker_access(caller, worker_id)?;
        let mut tx = self.store().begin().await?;
        let now = self.now().as_datetime();
        let before = find(&mut tx, caller.tenant_id, worker_id)
            .await?
            .ok_or(Error::not_found("worker"))?;
        on_db!(&mut tx, c => sqlx::query(
            "UPDATE workers SET status = 'online', last_heartbeat_at = $1, updated_at = $1 \
             WHERE id = $2 AND tenant_id = $3",
        )
        .bind(now)
        .bind(worker_id)
        .bind(caller.tenant_id)
        .execute(c).await.map(|r| r.rows_affected()))?;
        on_db!(&mut tx, c => sqlx::query(
            "UPDATE agents SET last_heartbeat_at = $1, status = 'active' WHERE worker_id = $2 AND tenant_id = $3",
        )
        .bind(now)
        .bind(worker_id)
        .bind(caller.tenant_id)
        .execute(c).await.map(|r| r.rows_affected()))?;
        if before.status != "online" {
            events::record(
                &mut tx,
                caller,
                caller.tenant_id,
                NewEvent::new(
                    "worker.status_changed",
                    "worker",
                    worker_id,
                    json!({ "worker_id": worker_id, "status": "online" }),
                ),
            )
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The channel closed: the worker becomes `offline` (with a
    /// `worker.status_changed` event). Its agents and their held tasks are
    /// left to the liveness rules: nothing is released here.
    pub async fn close_worker_channel(&self, caller: &Caller, worker_id: Uuid) -> Result<()> {
        check_worker_access(caller, worker_id)?;
        let mut tx = self.store().begin().await?;
        let now = self.now().as_datetime();
        let changed = on_db!(&mut tx, c => sqlx::query(
            "UPDATE workers SET status = 'offline', updated_at = $1 \
             WHERE id = $2 AND tenant_id = $3 AND status <> 'offline'",
        )
        .bind(now)
        .bind(worker_id)
        .bind(caller.tenant_id)
        .execute(c).await.map(|r| r.rows_affected()))?;
        if changed > 0 {
            events::record(
                &mut tx,
                caller,
                caller.tenant_id,
                NewEvent::new(
                    "worker.status_changed",
                    "worker",
                    worker_id,
                    json!({ "worker_id": worker_id, "status": "offline" }),
                ),
            )
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Claims for every agent of the worker that holds no task (claimed or
    /// in progress), through the claim engine (as `POST /workers/:id/next`
    /// does); answers the newly claimed tasks with their agents. Does
    /// nothing (one read) when every agent is busy.
    pub async fn assign_worker_channel(
        &self,
        caller: &Caller,
        worker_id: Uuid,
        include_context: bool,
    ) -> Result<Vec<(Uuid, Task)>> {
        check_worker_access(caller, worker_id)?;
        let mut conn = self.store().read().await?;
        let free: Vec<(Uuid,)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT a.id FROM agents a WHERE a.tenant_id = $1 AND a.worker_id = $2 \
             AND NOT EXISTS (SELECT 1 FROM tasks h WHERE h.assigned_agent_id = a.id \
                 AND h.state IN ('claimed', 'in_progress')) \
             ORDER BY a.created_at, a.id",
        )
        .bind(caller.tenant_id)
        .bind(worker_id)
        .fetch_all(c)
        .await)?;
        drop(conn);
        let mut assigned = Vec::new();
        for (agent_id,) in free {
            let agent = self.acting_agent(caller, agent_id, Some(worker_id)).await?;
            let tags = claimer_tags(&agent, None);
            let now = self.now().as_datetime();
            let row = claim(self.store(), caller, &agent, &tags, None, now).await?;
            if let Some(row) = row {
                assigned.push((
                    agent_id,
                    self.claimed_task(caller, row, include_context).await?,
                ));
            }
        }
        Ok(assigned)
    }

    /// `POST /workers/:id/signal` (admin, beyond the contract): records a
    /// `worker.signal` event for the worker; every open channel of the
    /// worker (on any replica) forwards it as a `worker.signal` frame. A
    /// signal sent while the worker has no open channel is not delivered
    /// later.
    pub async fn signal_worker(
        &self,
        caller: &Caller,
        worker_id: Uuid,
        request: SignalWorker,
    ) -> Result<SignalSent> {
        match (request.signal, request.task_id) {
            (SignalKind::CancelTask, None) => {
                return Err(Error::invalid_field(
                    "task_id",
                    "required for the cancel_task signal",
                ));
            }
            (SignalKind::Drain, Some(_)) => {
                return Err(Error::invalid_field(
                    "task_id",
                    "only the cancel_task signal names a task",
                ));
            }
            _ => {}
        }
        let mut tx = self.store().begin().await?;
        find(&mut tx, caller.tenant_id, worker_id)
            .await?
            .ok_or(Error::not_found("worker"))?;
        let event = events::record_now(
            &mut tx,
            caller,
            caller.tenant_id,
            NewEvent::new(
                "worker.signal",
                "worker",
                worker_id,
                json!({
                    "worker_id": worker_id,
                    "signal": request.signal.as_str(),
                    "task_id": request.task_id,
                }),
            ),
        )
        .await?;
        tx.commit().await?;
        Ok(SignalSent {
            worker_id,
            signal: request.signal,
            task_id: request.task_id,
            event_id: event.id,
        })
    }
}
