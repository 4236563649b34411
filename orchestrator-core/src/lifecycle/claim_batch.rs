//! The batched claim (`POST /workers/:id/claim-batch`, beyond the contract):
//! tasks for several agents of one worker in one write transaction, each
//! agent's the task the one-request claim would give it.
//!
//! Why: a worker that runs many agents paid one request, one writer turn
//! and one statement per claim (and as many again for the starts). Here a
//! batch is one transaction; on PostgreSQL its claims are one statement, the
//! function of the combined claims ([`super::claim_sql::CLAIM_EACH_FUNCTION`]).
//! With `start: true` each claim moves its task straight to `in_progress`
//! (the claim's own `UPDATE`, [`super::claim_sql`]'s `claim_moves!`): one
//! row version and one set of index entries a task instead of a claim's
//! and then a start's, with both state events written as a claim and a
//! start request would write them. On SQLite, whose one writer connection
//! serialises every claim anyway, the batch runs inside the one
//! transaction and the one commit: one bulk `UPDATE` where the agents'
//! claims would each take the next task of the claim-order walk
//! ([`bulk_sqlite`]; the function does the same on PostgreSQL), else the
//! one-request claim statement per agent; on PostgreSQL without that
//! function (several writers) the batch runs the per-agent statements.
//!
//! The rules are the one claim's, since the statements are the same text
//! ([`super::claim_sql`]): run_at, workflow pauses, preferences, tags,
//! environments, priorities, fairness and flow limits. One active task per
//! agent holds by the same index (`tasks_held_by_agent`) and guard; a batch
//! that loses a race for an agent or for a flow limit's last slot (the
//! statement aborts: [`crate::limits::is_limit_race`]) is rolled back and
//! run again whole, as the one claim is ([`super::claim`]).
//!
//! A batch takes whichever PostgreSQL writer is free, so the batches of
//! several workers run side by side (bench/HISTORY.md item 49). On a
//! writer other than the first, a statement that waits for a row lock past
//! [`crate::store::PG_GIVE_WAY_AFTER`] (a workflow's row, say, that a claim
//! in the first writer's open batch has updated) fails; the batch then
//! rolls back and runs again on the first writer, which waits as long as
//! it takes ([`crate::store::DEFAULT_PG_WRITERS`]: no deadlock between the
//! writers can form).

use super::claim::{CLAIM_ATTEMPTS, postgres_claim, record_claim, runnable_environments};
use super::claim_each::{Outcome, claims_combine};
use super::claim_sql::{
    BULK_CANDIDATES_SQLITE, BULK_UPDATE_SQLITE, BULK_UPDATE_SQLITE_STARTED, CLAIM_EACH_POSTGRES,
    CLAIM_SQLITE, CLAIM_SQLITE_STARTED, HOLDERS_SQLITE, KEYED_PENDING_SQLITE,
    PREFERRED_PENDING_SQLITE,
};
use crate::agents::AgentRow;
use crate::api::TaskState;
use crate::caller::Caller;
use crate::error::{Error, Result};
use crate::limits::is_limit_race;
use crate::store::{Access, Db, Store, Tx, is_unique_violation, on_db};
use crate::tasks::counters::counters;
use crate::tasks::rows::{TaskRow, record_change};
use crate::tasks::state::TaskOp;
use chrono::{DateTime, Utc};
use sqlx::types::Json;
use std::sync::atomic::Ordering;
use uuid::Uuid;

/// One agent of a batched claim and what it claims with.
pub(crate) struct BatchClaimer {
    /// The agent, as the claim cache has it.
    pub agent: std::sync::Arc<AgentRow>,
    /// Its effective tags ([`super::claim::claimer_tags`]).
    pub tags: Vec<String>,
}

/// What the whole batch claims with besides its agents.
pub(crate) struct BatchFilter {
    /// Only tasks of this workflow.
    pub workflow_id: Option<Uuid>,
    /// Only tasks of this execution environment (checked to exist).
    pub environment: Option<Uuid>,
    /// Start the claimed tasks in the same transaction.
    pub start: bool,
    /// The most tasks to claim; the claimers may be more (some of them may
    /// have taken a task since they were read as idle).
    pub limit: usize,
    /// The control plane's clock at the request.
    pub now: DateTime<Utc>,
}

/// One agent's claim parameters, environments resolved.
struct Prepared<'a> {
    claimer: &'a BatchClaimer,
    runnable: Vec<Uuid>,
}

/// What one batch transaction came to.
enum Attempt {
    /// The tasks claimed (and started, when asked), in agent order.
    Done(Vec<TaskRow>),
    /// A concurrent claim took an agent or a limit's last slot first: the
    /// transaction is void.
    Raced,
}

/// Claims a task for each of `claimers` that can get one (none for an agent
/// that holds one already) and commits; the claimed rows, in agent order.
pub(crate) async fn claim_batch(
    store: &Store,
    caller: &Caller,
    claimers: &[BatchClaimer],
    filter: &BatchFilter,
) -> Result<Vec<TaskRow>> {
    if claimers.is_empty() {
        return Ok(Vec::new());
    }
    // The environments each claimer may run, read once before the writer's
    // turn (and only when some claimer declares one).
    let mut prepared = Vec::with_capacity(claimers.len());
    let mut conn = None;
    for claimer in claimers {
        let runnable = if claimer.tags.iter().any(|t| t.starts_with("env:")) {
            if conn.is_none() {
                conn = Some(store.read().await?);
            }
            let conn = conn.as_mut().expect("opened above");
            runnable_environments(
                conn,
                claimer.agent.tenant_id,
                &claimer.tags,
                filter.environment,
            )
            .await?
        } else {
            filter.environment.into_iter().collect()
        };
        prepared.push(Prepared { claimer, runnable });
    }
    drop(conn);
    // The first attempt takes whichever writer is free; one that gives way
    // there (module docs) runs again on the first writer, which never does.
    let mut spread = true;
    for _ in 0..CLAIM_ATTEMPTS {
        let mut tx = match spread {
            true => store.begin_spread().await?,
            false => store.begin().await?,
        };
        match claim_and_record(store, caller, &mut tx, &prepared, filter).await {
            // Dropping `tx` rolls the void transaction back.
            Ok(Attempt::Raced) => continue,
            Err(e) if e.is_race() && tx.gives_way() => {
                drop(tx);
                store.gave_way();
                spread = false;
            }
            Err(e) => return Err(e),
            Ok(Attempt::Done(rows)) => {
                tx.commit().await?;
                return Ok(rows);
            }
        }
    }
    Err(Error::Conflict {
        message: "concurrent claims for this worker's agents kept racing".into(),
        hint: Some("retry the request".into()),
    })
}

/// The claims of one transaction and their events and log rows.
async fn claim_and_record(
    store: &Store,
    caller: &Caller,
    tx: &mut Tx,
    prepared: &[Prepared<'_>],
    filter: &BatchFilter,
) -> Result<Attempt> {
    let attempt = claim_in(store, tx, prepared, filter).await?;
    if let Attempt::Done(rows) = &attempt {
        for row in rows {
            record_claim(tx, caller, row).await?;
        }
        for row in rows
            .iter()
            .filter(|r| r.state == TaskState::InProgress.as_str())
        {
            // Claimed and started by the one statement: the start's event
            // and log row, as a start request writes them.
            let moved = (TaskState::Claimed, TaskState::InProgress);
            record_change(tx, caller, row, TaskOp::Start, moved, "started").await?;
        }
    }
    Ok(attempt)
}

/// The claims of one transaction: one statement on PostgreSQL where the
/// combined-claim function is there, else the one-request statement per
/// agent (module docs).
async fn claim_in(
    store: &Store,
    tx: &mut Tx,
    prepared: &[Prepared<'_>],
    filter: &BatchFilter,
) -> Result<Attempt> {
    let claimed: std::result::Result<Vec<TaskRow>, sqlx::Error> = if claims_combine(store) {
        claim_each(tx, prepared, filter).await
    } else {
        // One worker's agents share a tenant: one pick of the PostgreSQL
        // statement serves the batch.
        let statement = match prepared.first() {
            Some(first) => postgres_claim(tx, first.claimer.agent.tenant_id, filter.start).await?,
            None => return Ok(Attempt::Done(Vec::new())),
        };
        claim_one_by_one(tx, prepared, filter, statement).await
    };
    match claimed {
        Err(e) if is_unique_violation(&e) => Ok(Attempt::Raced),
        Err(e) if is_limit_race(&e) => {
            counters().limit_races.fetch_add(1, Ordering::Relaxed);
            Ok(Attempt::Raced)
        }
        Err(e) => Err(e.into()),
        Ok(rows) => Ok(Attempt::Done(rows)),
    }
}

/// PostgreSQL: the combined-claim function over every agent, one statement;
/// only the tasks claimed now (an agent that already holds one gets none).
async fn claim_each(
    tx: &mut Tx,
    prepared: &[Prepared<'_>],
    filter: &BatchFilter,
) -> std::result::Result<Vec<TaskRow>, sqlx::Error> {
    // The agents read as idle may have taken a task since (a concurrent
    // batch for the same worker): the function skips those itself, with a
    // probe of the held-task index, and stops after `p_limit` agents, in the
    // same statement ([`super::claim_sql::CLAIM_EACH_FUNCTION`]).
    if prepared.is_empty() {
        return Ok(Vec::new());
    }
    let column = |f: &dyn Fn(&AgentRow) -> Option<Uuid>| -> Vec<Option<Uuid>> {
        prepared.iter().map(|p| f(&p.claimer.agent)).collect()
    };
    let tenants = column(&|a| Some(a.tenant_id));
    let agents = column(&|a| Some(a.id));
    let workers = column(&|a| a.worker_id);
    let workflows: Vec<Option<Uuid>> = vec![filter.workflow_id; prepared.len()];
    let envs: Vec<Option<Uuid>> = vec![filter.environment; prepared.len()];
    let tags: Vec<Json<&[String]>> = prepared.iter().map(|p| Json(&p.claimer.tags[..])).collect();
    let runnable: Vec<Json<&[Uuid]>> = prepared.iter().map(|p| Json(&p.runnable[..])).collect();
    let rows: Vec<super::claim_each::ClaimRow> = on_db!(tx, c =>
        sqlite: {
            // Never asked: claims_combine is false on SQLite.
            let _ = c;
            Err(sqlx::Error::Configuration("the combined claim runs only on PostgreSQL".into()))
        },
        postgres: sqlx::query_as(CLAIM_EACH_POSTGRES)
            .bind(tenants).bind(agents).bind(workers).bind(workflows)
            .bind(tags).bind(runnable).bind(envs).bind(filter.now)
            .bind(i32::try_from(filter.limit).unwrap_or(i32::MAX))
            .bind(filter.start)
            .fetch_all(c).await,
    )?;
    let mut claimed: Vec<TaskRow> = rows
        .into_iter()
        .filter_map(|r| match r.outcome {
            Outcome::Claimed(row) => Some(row),
            Outcome::Held(_) | Outcome::Nothing => None,
        })
        .collect();
    // In agent order, as the one-by-one claims come: the function's bulk
    // claim returns its rows in the order its `UPDATE` wrote them.
    claimed.sort_by_key(|row| {
        prepared
            .iter()
            .position(|p| Some(p.claimer.agent.id) == row.assigned_agent_id)
    });
    Ok(claimed)
}

/// The one-request claim statement for each agent in turn, in one
/// transaction: each sees the claims before it, so no two agents get one
/// task. `statement` is the PostgreSQL one [`postgres_claim`] picked.
async fn claim_one_by_one(
    tx: &mut Tx,
    prepared: &[Prepared<'_>],
    filter: &BatchFilter,
    statement: &'static str,
) -> std::result::Result<Vec<TaskRow>, sqlx::Error> {
    let mut claimed = Vec::new();
    let mut served = Vec::new();
    // SQLite: the batch's claims as one statement where they would take
    // the claim-order walk in turn ([`bulk_sqlite`]).
    if matches!(Access::db(tx), Db::Sqlite(_))
        && let Some(bulk) = bulk_sqlite(tx, prepared, filter).await?
    {
        if !bulk.more {
            return Ok(bulk.rows);
        }
        served = bulk
            .rows
            .iter()
            .filter_map(|r| r.assigned_agent_id)
            .collect();
        claimed = bulk.rows;
    }
    for p in prepared {
        if claimed.len() >= filter.limit {
            break;
        }
        if served.contains(&p.claimer.agent.id) {
            continue;
        }
        let agent = &p.claimer.agent;
        let tags = Json(&p.claimer.tags);
        let runnable_hex: Vec<String> = p
            .runnable
            .iter()
            .map(|id| id.simple().to_string())
            .collect();
        let row: Option<TaskRow> = on_db!(tx, c =>
            sqlite: sqlx::query_as(if filter.start { CLAIM_SQLITE_STARTED } else { CLAIM_SQLITE })
                .bind(agent.tenant_id).bind(agent.id).bind(agent.worker_id).bind(filter.now)
                .bind(filter.workflow_id).bind(tags).bind(Json(&runnable_hex))
                .bind(filter.environment)
                .fetch_optional(c).await,
            postgres: sqlx::query_as(statement)
                .bind(agent.tenant_id).bind(agent.id).bind(agent.worker_id).bind(filter.now)
                .bind(filter.workflow_id).bind(tags).bind(&p.runnable[..])
                .bind(filter.environment)
                .fetch_optional(c).await,
        )?;
        claimed.extend(row);
    }
    Ok(claimed)
}

/// What SQLite's bulk claim took.
struct Bulk {
    /// The tasks claimed, in agent order.
    rows: Vec<TaskRow>,
    /// The claim-order walk stopped at a task with a flow-limit key: the
    /// agents left over claim one by one.
    more: bool,
}

/// SQLite: the batch's claims as one `UPDATE` where the one-by-one claims
/// would each take the next task of the claim-order walk; `None` where
/// they would not (then each agent claims on its own). The cases are those
/// of PostgreSQL's bulk claim (`bulk_claim!` in [`super::claim_sql`]): the
/// agents claim with the same tags and environments, the tenant has no
/// pending task with a concurrency key, and no pending task prefers one of
/// the free agents or the worker; the walk is taken up to its first task
/// with a concurrency or rate key.
///
/// Why: one claim statement per agent cost a batch 32 statements, each
/// handed to sqlx's worker thread and back and each evaluating the claim's
/// three candidate subqueries; this is five statements a batch whatever its
/// size (bench/HISTORY.md item 27).
async fn bulk_sqlite(
    tx: &mut Tx,
    prepared: &[Prepared<'_>],
    filter: &BatchFilter,
) -> std::result::Result<Option<Bulk>, sqlx::Error> {
    let Some(first) = prepared.first() else {
        return Ok(None);
    };
    let alike = prepared
        .iter()
        .all(|p| p.claimer.tags == first.claimer.tags && p.runnable == first.runnable);
    if prepared.len() < 2 || !alike {
        return Ok(None);
    }
    let agent = &first.claimer.agent;
    let hex = |ids: &mut dyn Iterator<Item = Uuid>| -> Json<Vec<String>> {
        Json(ids.map(|id| id.simple().to_string()).collect())
    };
    let Db::Sqlite(c) = Access::db(tx) else {
        return Ok(None);
    };
    let keyed: bool = sqlx::query_scalar(KEYED_PENDING_SQLITE)
        .bind(agent.tenant_id)
        .fetch_one(&mut *c)
        .await?;
    if keyed {
        return Ok(None);
    }
    let holders: Vec<Uuid> = sqlx::query_scalar(HOLDERS_SQLITE)
        .bind(hex(&mut prepared.iter().map(|p| p.claimer.agent.id)))
        .fetch_all(&mut *c)
        .await?;
    let free: Vec<&Prepared<'_>> = prepared
        .iter()
        .filter(|p| !holders.contains(&p.claimer.agent.id))
        .take(filter.limit)
        .collect();
    if free.is_empty() {
        return Ok(Some(Bulk {
            rows: Vec::new(),
            more: false,
        }));
    }
    let preferred: bool = sqlx::query_scalar(PREFERRED_PENDING_SQLITE)
        .bind(hex(&mut free.iter().map(|p| p.claimer.agent.id)))
        .bind(agent.worker_id)
        .fetch_one(&mut *c)
        .await?;
    if preferred {
        return Ok(None);
    }
    let runnable_hex: Vec<String> = first
        .runnable
        .iter()
        .map(|id| id.simple().to_string())
        .collect();
    let walk: Vec<(Uuid, bool)> = sqlx::query_as(BULK_CANDIDATES_SQLITE)
        .bind(agent.tenant_id)
        .bind(agent.id)
        .bind(agent.worker_id)
        .bind(filter.now)
        .bind(filter.workflow_id)
        .bind(Json(&first.claimer.tags))
        .bind(Json(&runnable_hex))
        .bind(filter.environment)
        .bind(i64::try_from(free.len()).unwrap_or(i64::MAX))
        .fetch_all(&mut *c)
        .await?;
    let plain: Vec<Uuid> = walk
        .iter()
        .take_while(|(_, plain)| *plain)
        .map(|(id, _)| *id)
        .collect();
    let more = plain.len() < walk.len();
    if plain.is_empty() {
        return Ok(Some(Bulk {
            rows: Vec::new(),
            more,
        }));
    }
    let pairs: Vec<[Option<String>; 3]> = plain
        .iter()
        .zip(&free)
        .map(|(task, p)| {
            let a = &p.claimer.agent;
            [
                Some(task.simple().to_string()),
                Some(a.id.simple().to_string()),
                a.worker_id.map(|w| w.simple().to_string()),
            ]
        })
        .collect();
    let mut rows: Vec<TaskRow> = sqlx::query_as(if filter.start {
        BULK_UPDATE_SQLITE_STARTED
    } else {
        BULK_UPDATE_SQLITE
    })
    .bind(Json(pairs))
    .bind(filter.now)
    .fetch_all(&mut *c)
    .await?;
    rows.sort_by_key(|row| {
        free.iter()
            .position(|p| Some(p.claimer.agent.id) == row.assigned_agent_id)
    });
    Ok(Some(Bulk { rows, more }))
}
