//! The claim engine.
//!
//! A claim is one `UPDATE ... WHERE id = COALESCE((candidate preferring
//! the agent), (candidate preferring its worker), (general candidate))
//! RETURNING ...`: on PostgreSQL each candidate
//! subquery takes `FOR UPDATE OF t SKIP LOCKED`, so concurrent claimers skip
//! each other's rows instead of waiting; on SQLite the statement runs on the
//! one writer connection, inside the transaction. No row is read in Rust and
//! then written: a task is never given to two claimers.
//!
//! Eligible: `pending`, same tenant, optional `workflow_id`, the workflow
//! (if any) not paused or cancelled, no preferred assignee or the claimer is
//! it, and every required tag among the claimer's tags. Order: tasks that
//! prefer this agent first, then tasks that prefer its worker, then the
//! rest; within each, priority rank, then oldest, then id — the order of the
//! partial indexes `tasks_claimable_preferred_agent`,
//! `tasks_claimable_preferred_worker` and `tasks_claimable`.
//!
//! Each candidate is its own subquery with a plain equality on the indexed
//! column, so it is one index probe whatever the parameters: an
//! `preferred_agent_id = $2 OR preferred_worker_id = $3` candidate cannot use
//! either preferred index (PostgreSQL's generic plan and SQLite both walk
//! every pending row of the tenant to find no preferred task), which made
//! each claim cost O(pending tasks).
//!
//! One active task per agent holds by construction: the unique partial index
//! `tasks_held_by_agent` on `assigned_agent_id WHERE state IN ('claimed',
//! 'in_progress')` (migration 0009) admits one such row per agent. In the
//! common case the claim is still one statement: its `NOT EXISTS` guard claims
//! nothing for an agent that already holds a task, which is then returned
//! again. The guard cannot see a concurrent claim for the same agent that has
//! not committed yet (PostgreSQL, READ COMMITTED); then the second `UPDATE`
//! waits on the index entry of the first, fails with a unique violation when
//! the first commits, and [`claim`] rolls back and runs the transaction again,
//! whose guard now sees the committed claim and answers the held task. On
//! SQLite claims are serialised on the one writer connection, so the guard
//! always sees the other claim and the index never fires.
//!
//! The claimer's tags are the agent's registered tags plus the request's
//! `routing_tags` (normalised); `orchestrator` counts only for orchestrator
//! and hybrid agents.
//!
//! Execution environments (issue 11): a worker or agent declares the
//! environments it can run with routing tags `env:<environment id>` or
//! `env:<environment name>` (names compare case-insensitively; a worker's
//! tags are inherited by the agents registered with it, and the fleet view
//! reads the same tags). A task that names an `execution_environment_id` is
//! eligible only for a claimer that declares that environment, or for a claim
//! that asks for it explicitly (`execution_environment_id` on
//! `POST /tasks/claim` or `/workers/:id/next`), which then gets tasks of that
//! environment only. Tasks without an environment stay open to every claimer.
//! The declared tags are resolved to environment ids in Rust (one read of the
//! tenant's environments, and only when the claimer has `env:` tags or the
//! claim names an environment) and handed to the one claim statement as a
//! parameter, so the common claim is still one statement.

use super::claim_each::{ClaimFor, ClaimRow, Claims, Outcome, claims_combine};
use super::claim_sql::{
    CLAIM_POSTGRES, CLAIM_POSTGRES_FAIR, CLAIM_POSTGRES_FAIR_STARTED, CLAIM_POSTGRES_STARTED,
    CLAIM_SQLITE, KEYED_PENDING_POSTGRES,
};
use crate::agents::{self, AgentRow};
use crate::api::{ClaimTask, Task, TaskState};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::limits::is_limit_race;
use crate::store::{Access, Combined, Post, Store, Tx, is_unique_violation, on_db};
use crate::tags::normalise_tags;
use crate::tasks::acting::Acting;
use crate::tasks::counters::counters;
use crate::tasks::rows::{TaskRow, record_change, task_columns};
use crate::tasks::state::TaskOp;
use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use sqlx::types::Json;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use uuid::Uuid;

/// The task `agent_id` holds (claimed or in progress), if any.
pub(crate) async fn held_by(
    tx: &mut Tx,
    tenant_id: Uuid,
    agent_id: Uuid,
) -> Result<Option<TaskRow>> {
    // SQLite without statistics prefers the (tenant_id, ...) index, which
    // walks every task the tenant ever had; name the partial index.
    let rows: Vec<TaskRow> = on_db!(tx, c =>
        sqlite: sqlx::query_as(concat!(
            "SELECT ", task_columns!(), " FROM tasks INDEXED BY tasks_held_by_agent \
             WHERE assigned_agent_id = $1 AND tenant_id = $2 \
             AND state IN ('claimed', 'in_progress') ORDER BY claimed_at LIMIT 1"
        ))
        .bind(agent_id)
        .bind(tenant_id)
        .fetch_all(c)
        .await,
        postgres: sqlx::query_as(concat!(
            "SELECT ", task_columns!(), " FROM tasks WHERE assigned_agent_id = $1 AND tenant_id = $2 \
             AND state IN ('claimed', 'in_progress') ORDER BY claimed_at LIMIT 1"
        ))
        .bind(agent_id)
        .bind(tenant_id)
        .fetch_all(c)
        .await,
    )?;
    Ok(rows.into_iter().next())
}

/// The effective tags of a claim.
pub(crate) fn claimer_tags(agent: &AgentRow, extra: Option<&Vec<String>>) -> Vec<String> {
    let mut tags: Vec<String> = agent.routing_tags.0.clone();
    if let Some(extra) = extra {
        tags.extend(extra.iter().cloned());
    }
    let mut tags = normalise_tags(tags.iter());
    let orchestrator = agent.mode().takes_orchestrator_tasks();
    tags.retain(|t| t != "orchestrator");
    if orchestrator {
        tags.push("orchestrator".into());
        tags.sort();
    }
    tags
}

/// The environment ids named by the claimer's `env:<id or name>` tags, plus
/// the one the claim asks for. Reads the tenant's environments only when
/// there is something to resolve (module docs).
pub(super) async fn runnable_environments(
    access: &mut impl Access,
    tenant_id: Uuid,
    tags: &[String],
    environment: Option<Uuid>,
) -> Result<Vec<Uuid>> {
    let declared: Vec<&str> = tags.iter().filter_map(|t| t.strip_prefix("env:")).collect();
    let mut runnable: Vec<Uuid> = environment.into_iter().collect();
    if declared.is_empty() {
        return Ok(runnable);
    }
    let known: Vec<(Uuid, String)> = on_db!(access, c => sqlx::query_as(
        "SELECT id, name FROM execution_environments WHERE tenant_id = $1",
    ).bind(tenant_id).fetch_all(c).await)?;
    for (id, name) in known {
        let name = name.trim().to_lowercase();
        if declared
            .iter()
            .any(|d| *d == name || d.parse::<Uuid>().is_ok_and(|u| u == id))
            && !runnable.contains(&id)
        {
            runnable.push(id);
        }
    }
    Ok(runnable)
}

/// Checks that a claim's `execution_environment_id` names an environment of
/// the tenant: `400` on `execution_environment_id` otherwise.
pub(crate) async fn check_claim_environment(
    store: &Store,
    tenant_id: Uuid,
    environment: Option<Uuid>,
) -> Result<()> {
    let Some(id) = environment else {
        return Ok(());
    };
    let mut conn = store.read().await?;
    let found: Vec<(Uuid,)> = on_db!(&mut conn, c => sqlx::query_as(
        "SELECT id FROM execution_environments WHERE id = $1 AND tenant_id = $2",
    ).bind(id).bind(tenant_id).fetch_all(c).await)?;
    if found.is_empty() {
        return Err(Error::invalid_field(
            "execution_environment_id",
            "names no execution environment",
        ));
    }
    Ok(())
}

/// How often a claim that lost a race is run again. For a race for its
/// agent one retry is enough (the retry's guard sees the winner); a race for
/// a flow limit's last slot ([`crate::limits`]) is lost only to a claim that
/// won, so each retry follows progress. The bound only keeps a pathological
/// loop from spinning.
pub(super) const CLAIM_ATTEMPTS: usize = 16;

/// What one claim transaction came to.
enum Attempt {
    /// The claimed task (or the one the agent already holds); `None` when
    /// there is nothing to claim.
    Done(Option<Box<TaskRow>>),
    /// A concurrent claim for the same agent committed first (unique
    /// violation on `tasks_held_by_agent`), or took the last slot of the
    /// task's flow limit ([`crate::limits::is_limit_race`]); the
    /// transaction is void.
    Raced,
}

/// Claims the next eligible task for `agent` in its own transaction and
/// commits; `None` when there is nothing to claim. A claim that raced another
/// claim for the same agent is run again (module docs).
pub(crate) async fn claim(
    store: &Store,
    caller: &Caller,
    agent: &AgentRow,
    tags: &[String],
    workflow_id: Option<Uuid>,
    now: DateTime<Utc>,
) -> Result<Option<TaskRow>> {
    claim_filtered(store, caller, agent, tags, workflow_id, None, now).await
}

/// [`claim`] restricted to tasks of one execution environment when
/// `environment` is given (which the claimer may then run whatever its tags
/// declare; module docs). The caller has checked that the environment exists.
/// `now` is the control plane's clock: a delayed task is claimable from its
/// `run_at` on, and the claim starts the holder's lease.
pub(crate) async fn claim_filtered(
    store: &Store,
    caller: &Caller,
    agent: &AgentRow,
    tags: &[String],
    workflow_id: Option<Uuid>,
    environment: Option<Uuid>,
    now: DateTime<Utc>,
) -> Result<Option<TaskRow>> {
    if claims_combine(store) {
        return claim_combined(store, caller, agent, tags, workflow_id, environment, now).await;
    }
    // Nothing but the claim statement writes: no savepoint
    // (store::begin_unguarded).
    let (tx, row) = claim_open_filtered(
        store,
        caller,
        agent,
        tags,
        workflow_id,
        environment,
        false,
        now,
    )
    .await?;
    tx.commit().await?;
    Ok(row)
}

/// [`claim_filtered`] as part of a combined statement with the other claims
/// waiting for the writer ([`super::claim_each`]). A claim the statement
/// did not serve (a second claim for the same agent in one statement, or a
/// statement that raced another replica) runs on its own, as ever.
async fn claim_combined(
    store: &Store,
    caller: &Caller,
    agent: &AgentRow,
    tags: &[String],
    workflow_id: Option<Uuid>,
    environment: Option<Uuid>,
    now: DateTime<Utc>,
) -> Result<Option<TaskRow>> {
    // Resolved on a read connection, not in the writer's turn.
    let runnable = if tags.iter().any(|t| t.starts_with("env:")) {
        let mut conn = store.read().await?;
        runnable_environments(&mut conn, agent.tenant_id, tags, environment).await?
    } else {
        environment.into_iter().collect()
    };
    let item = ClaimFor {
        tenant_id: agent.tenant_id,
        agent_id: agent.id,
        worker_id: agent.worker_id,
        workflow_id,
        tags: tags.to_vec(),
        runnable,
        environment,
        now,
    };
    let post: Post<ClaimRow, Option<TaskRow>> = {
        let caller = caller.clone();
        Box::new(
            move |tx: &mut Tx, claimed: ClaimRow| -> BoxFuture<'_, Result<Option<TaskRow>>> {
                Box::pin(async move {
                    match claimed.outcome {
                        Outcome::Claimed(row) => {
                            record_claim(tx, &caller, &row).await?;
                            Ok(Some(row))
                        }
                        Outcome::Held(row) => Ok(Some(row)),
                        Outcome::Nothing => Ok(None),
                    }
                })
            },
        )
    };
    let mut tx = match store.combined::<Claims>(item, post).await? {
        Combined::Done(row) => return Ok(row),
        Combined::Missed(tx) => tx,
    };
    match claim_in(&mut tx, caller, agent, tags, workflow_id, environment, now).await? {
        Attempt::Done(row) => {
            tx.commit().await?;
            Ok(row.map(|row| *row))
        }
        Attempt::Raced => {
            drop(tx);
            let (tx, row) = claim_open_filtered(
                store,
                caller,
                agent,
                tags,
                workflow_id,
                environment,
                true,
                now,
            )
            .await?;
            tx.commit().await?;
            Ok(row)
        }
    }
}

/// [`claim`] without the commit: the claimed task (or the one the agent
/// already holds, or `None`) and the transaction it was claimed in, still
/// open, so a caller can do more in the same transaction (the ACP claim starts
/// the task and opens a session) and then commit. Races for the same agent
/// are retried here, before the transaction is handed out.
pub(crate) async fn claim_open(
    store: &Store,
    caller: &Caller,
    agent: &AgentRow,
    tags: &[String],
    workflow_id: Option<Uuid>,
    now: DateTime<Utc>,
) -> Result<(Tx, Option<TaskRow>)> {
    claim_open_filtered(store, caller, agent, tags, workflow_id, None, true, now).await
}

/// [`claim_open`] with the environment filter of [`claim_filtered`];
/// `guarded: false` for a claim that writes nothing else
/// ([`Store::begin_unguarded`]).
#[allow(clippy::too_many_arguments)]
async fn claim_open_filtered(
    store: &Store,
    caller: &Caller,
    agent: &AgentRow,
    tags: &[String],
    workflow_id: Option<Uuid>,
    environment: Option<Uuid>,
    guarded: bool,
    now: DateTime<Utc>,
) -> Result<(Tx, Option<TaskRow>)> {
    for _ in 0..CLAIM_ATTEMPTS {
        let mut tx = if guarded {
            store.begin().await?
        } else {
            store.begin_unguarded().await?
        };
        match claim_in(&mut tx, caller, agent, tags, workflow_id, environment, now).await? {
            // Dropping `tx` rolls the void transaction back.
            Attempt::Raced => continue,
            Attempt::Done(row) => return Ok((tx, row.map(|row| *row))),
        }
    }
    Err(Error::Conflict {
        message: "concurrent claims for this agent kept racing".into(),
        hint: Some("retry the request".into()),
    })
}

/// The PostgreSQL claim statement for `tenant`: the one without the fair
/// pick unless the tenant has pending keyed tasks, because the fair pick's
/// planning costs tens of milliseconds on every execution (claim_sql,
/// `general_candidate!`). `started`: the form that moves the task straight
/// to `in_progress` (a batched claim's `start: true`). SQLite has one
/// statement and never asks.
pub(super) async fn postgres_claim(
    tx: &mut Tx,
    tenant: Uuid,
    started: bool,
) -> Result<&'static str> {
    let fair = on_db!(tx, c =>
        sqlite: { let _ = c; Ok(false) },
        postgres: sqlx::query_scalar::<_, bool>(KEYED_PENDING_POSTGRES)
            .bind(tenant).fetch_one(c).await,
    )?;
    Ok(match (fair, started) {
        (true, false) => CLAIM_POSTGRES_FAIR,
        (true, true) => CLAIM_POSTGRES_FAIR_STARTED,
        (false, false) => CLAIM_POSTGRES,
        (false, true) => CLAIM_POSTGRES_STARTED,
    })
}

/// Claims the next eligible task for `agent` in `tx`.
async fn claim_in(
    tx: &mut Tx,
    caller: &Caller,
    agent: &AgentRow,
    tags: &[String],
    workflow_id: Option<Uuid>,
    environment: Option<Uuid>,
    now: DateTime<Utc>,
) -> Result<Attempt> {
    let runnable = runnable_environments(tx, agent.tenant_id, tags, environment).await?;
    let runnable_hex: Vec<String> = runnable.iter().map(|id| id.simple().to_string()).collect();
    let postgres_claim = postgres_claim(tx, agent.tenant_id, false).await?;
    let rows: Vec<TaskRow> = match on_db!(tx, c =>
        sqlite: sqlx::query_as(CLAIM_SQLITE)
            .bind(agent.tenant_id).bind(agent.id).bind(agent.worker_id).bind(now)
            .bind(workflow_id).bind(Json(tags)).bind(Json(&runnable_hex)).bind(environment)
            .fetch_all(c).await,
        postgres: sqlx::query_as(postgres_claim)
            .bind(agent.tenant_id).bind(agent.id).bind(agent.worker_id).bind(now)
            .bind(workflow_id).bind(Json(tags)).bind(&runnable[..]).bind(environment)
            .fetch_all(c).await,
    ) {
        Err(e) if is_unique_violation(&e) => return Ok(Attempt::Raced),
        Err(e) if is_limit_race(&e) => {
            counters().limit_races.fetch_add(1, Ordering::Relaxed);
            return Ok(Attempt::Raced);
        }
        other => other?,
    };
    let Some(row) = rows.into_iter().next() else {
        // Nothing claimed: either nothing is eligible, or the agent already
        // holds a task (the statement's guard), which it gets again.
        return Ok(Attempt::Done(
            held_by(tx, agent.tenant_id, agent.id).await?.map(Box::new),
        ));
    };
    record_claim(tx, caller, &row).await?;
    Ok(Attempt::Done(Some(Box::new(row))))
}

/// What a claim writes beside the task row: its event and log row, and the
/// consequences for its workflow.
pub(super) async fn record_claim(tx: &mut Tx, caller: &Caller, row: &TaskRow) -> Result<()> {
    let moved = (TaskState::Pending, TaskState::Claimed);
    record_change(tx, caller, row, TaskOp::Claim, moved, "claimed").await?;
    crate::workflows::after_task_change(tx, caller, row, moved.0, moved.1).await
}

impl ControlPlane {
    /// `POST /tasks/claim`: the claimed task, or `None` (204).
    /// With `wait_seconds`, a long poll ([`super::long_poll`]).
    pub async fn claim_task(&self, caller: &Caller, request: ClaimTask) -> Result<Option<Task>> {
        let wait = super::long_poll::requested_wait(request.wait_seconds)?;
        super::long_poll::long_poll(self.store(), wait, || {
            let (this, caller, request) = (self.clone(), caller.clone(), request.clone());
            self.store()
                .on_writer(async move { this.claim_task_here(&caller, request).await })
        })
        .await
    }

    async fn claim_task_here(&self, caller: &Caller, request: ClaimTask) -> Result<Option<Task>> {
        let agent = self
            .acting_agent(caller, request.agent_id, request.worker_id)
            .await?;
        check_claim_environment(
            self.store(),
            caller.tenant_id,
            request.execution_environment_id,
        )
        .await?;
        let tags = claimer_tags(&agent, request.routing_tags.as_ref());
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
        match row {
            None => Ok(None),
            Some(row) => Ok(Some(
                self.claimed_task(caller, row, request.include_context)
                    .await?,
            )),
        }
    }

    /// The agent a claim is made for, checked against the credential: an
    /// agent-bound key claims for its own agent, a worker-bound key for its
    /// worker's agents, unbound keys for any agent of the tenant.
    ///
    /// Read once and then served from [`crate::claim_cache`]: what a claim
    /// uses of the row never changes. Its status and heartbeat may be old.
    pub(crate) async fn acting_agent(
        &self,
        caller: &Caller,
        agent_id: Uuid,
        worker_id: Option<Uuid>,
    ) -> Result<Arc<AgentRow>> {
        let acting = Acting::resolve(caller, Some(agent_id), worker_id)?;
        let agent = self.registered_agent(caller.tenant_id, agent_id).await?;
        if caller.owner_type == "worker"
            && caller.owner_id.is_some()
            && agent.worker_id != acting.worker_id
        {
            return Err(Error::forbidden(
                "this agent does not belong to the calling worker",
            ));
        }
        if let Some(worker_id) = worker_id
            && agent.worker_id != Some(worker_id)
        {
            return Err(Error::invalid_field(
                "worker_id",
                "the agent does not belong to this worker",
            ));
        }
        Ok(agent)
    }

    /// Agent `id` of the tenant as registered (the claim cache, else one
    /// read); `404` when there is none.
    pub(crate) async fn registered_agent(
        &self,
        tenant_id: Uuid,
        id: Uuid,
    ) -> Result<Arc<AgentRow>> {
        if let Some(agent) = self.claim_cache().agent::<AgentRow>(tenant_id, id) {
            return Ok(agent);
        }
        let mut conn = self.store().read().await?;
        let agent = agents::find_lean(&mut conn, tenant_id, id)
            .await?
            .ok_or(Error::not_found("agent"))?;
        Ok(self.claim_cache().put_agent(tenant_id, id, agent))
    }

    /// The claim answer: the task with its credential handles
    /// ([`crate::tasks`] claim credentials), and the context packet merged into
    /// `context` when asked (`workflow`, `workspace`, `documents`,
    /// `attachments` beside the task's own context keys).
    ///
    /// The claim has committed by now, so this never fails: an agent told
    /// "error" would hold a task it does not know about. A packet that cannot
    /// be read (the database went away between the two) is logged and the
    /// task is answered without it; `GET /tasks/:id/context` has it later.
    pub(crate) async fn claimed_task(
        &self,
        caller: &Caller,
        row: TaskRow,
        include_context: bool,
    ) -> Result<Task> {
        if row.concurrency_key.is_some() || row.rate_limit_key.is_some() {
            // Its key may be full now: the limits job records who waits.
            self.wake_flow_limits(crate::limits::recheck_after(self.now().as_datetime()));
        }
        let mut task = row.to_api()?;
        task.credentials = self.task_credentials(caller, &task).await?;
        if include_context {
            let packet = match self.context_packet(caller, &task).await {
                Ok(packet) => packet,
                Err(error) => {
                    tracing::warn!(task_id = %task.id, %error, "claimed task answered without its context packet");
                    return Ok(task);
                }
            };
            let mut context = match task.context.take() {
                Value::Object(map) => map,
                _ => serde_json::Map::new(),
            };
            context.insert("workflow".into(), packet.workflow.unwrap_or(Value::Null));
            context.insert("workspace".into(), packet.workspace.unwrap_or(Value::Null));
            context.insert("documents".into(), json!(packet.documents));
            context.insert("attachments".into(), json!(packet.attachments));
            task.context = Value::Object(context);
        }
        Ok(task)
    }
}
