//! The holder's two hot moves as statements over a list: starting claimed
//! tasks and completing tasks in progress, for one request or for every
//! request waiting for the writer ([`crate::store::Combine`]).
//!
//! On PostgreSQL each is one `UPDATE ... FROM unnest(...)` over parallel
//! arrays of (task, tenant, holder, ...): one statement for the whole list.
//! SQLite does not combine requests ([`crate::store::Store::combines`]):
//! its list holds one request's row, one single-row statement, except for
//! the items of one `complete-batch` request, which it completes together
//! in one statement over a JSON list (a batched claim's `start: true`
//! starts its tasks in the claim itself: [`super::claim_batch`]). A row changes
//! only when it is in the move's source state and held by the acting agent
//! or worker; every other case (a repeat, the wrong state, someone else's
//! task, no such task) changes nothing and is left to the request's
//! ordinary path.

use crate::api::TaskState;
use crate::error::{Error, Result};
use crate::store::{Combine, Tx, on_db};
use crate::tasks::acting::Acting;
use crate::tasks::rows::{TaskRow, task_columns};
use futures_util::future::BoxFuture;
use serde_json::Value;
use sqlx::types::Json;
use uuid::Uuid;

/// The start of one claimed task by its holder.
pub(crate) struct Start {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub acting: Acting,
}

/// The completion of one task in progress by its holder.
pub(crate) struct Completion {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub acting: Acting,
    /// `completed`, or `output_pending_assessment` when verification failed.
    pub to: TaskState,
    pub output: Value,
    pub metrics: Option<Value>,
    pub git_info: Option<Value>,
    pub verification: Option<Value>,
}

/// Starts: claimed → in_progress.
pub(crate) struct Starts;

/// Completions: in_progress → `to`.
pub(crate) struct Completions;

/// Who may move a row, and what the statements return: for the list (`v`)
/// and for SQLite's one row (`$4` to `$7`). A task whose cancellation was
/// requested (run control §4) is left to the ordinary path, which cancels
/// it instead.
///
/// The source state is `CAST($3 AS TEXT)`, not `$3`: SQLite's planner
/// compares a bare parameter's value with the `state` of each partial
/// index on `tasks`, and a statement whose plan read a parameter is
/// compiled again at its next binding, which was every execution
/// (bench/HISTORY.md item 37). The row is found by its id either way.
macro_rules! held_returning {
    (list) => {
        concat!(
            " WHERE id = v.v_id AND tenant_id = v.v_tenant AND state = CAST($3 AS TEXT) \
             AND (assigned_agent_id = v.v_agent OR assigned_worker_id = v.v_worker) \
             AND NOT cancel_requested RETURNING ",
            task_columns!()
        )
    };
    (row) => {
        concat!(
            " WHERE id = $4 AND tenant_id = $5 AND state = CAST($3 AS TEXT) \
             AND (assigned_agent_id = $6 OR assigned_worker_id = $7) \
             AND NOT cancel_requested RETURNING ",
            task_columns!()
        )
    };
}

const START_SQLITE: &str = concat!(
    "UPDATE tasks SET state = $1, started_at = $2, updated_at = $2, last_heartbeat_at = $2",
    held_returning!(row)
);
const START_POSTGRES: &str = concat!(
    "UPDATE tasks SET state = $1, started_at = $2, updated_at = $2, last_heartbeat_at = $2 \
     FROM unnest($4::uuid[], $5::uuid[], $6::uuid[], $7::uuid[]) \
     AS v(v_id, v_tenant, v_agent, v_worker)",
    held_returning!(list)
);
const COMPLETE_SQLITE: &str = concat!(
    "UPDATE tasks SET state = $8, output = $9, metrics = $10, git_info = $11, \
     verification = $12, error = NULL, \
     completed_at = CASE WHEN $8 = $2 THEN $1 ELSE completed_at END, updated_at = $1",
    held_returning!(row)
);
/// SQLite's completion of several tasks at once (a `complete-batch`'s
/// items, [`crate::store::Store::combined_together`]): one statement over
/// `$4`, a JSON array of `[task, tenant, agent, worker, to, output,
/// metrics, git_info, verification]` per task, ids as hex (turned back
/// into blobs by `unhex`) and each JSON value as its text in a string, so
/// the stored text is the text the single-row statement would store.
///
/// Why: on SQLite each statement is a hand-off to the writer connection's
/// thread and back; a batch of 32 completions cost 32 of them
/// (bench/HISTORY.md item 28). Each row changes only as
/// [`COMPLETE_SQLITE`] would change it alone.
const COMPLETE_SQLITE_LIST: &str = concat!(
    "UPDATE tasks SET state = v.v_to, output = v.v_output, metrics = v.v_metrics, \
     git_info = v.v_git_info, verification = v.v_verification, error = NULL, \
     completed_at = CASE WHEN v.v_to = $2 THEN $1 ELSE completed_at END, updated_at = $1 \
     FROM (SELECT unhex(value ->> '$[0]') AS v_id, unhex(value ->> '$[1]') AS v_tenant, \
       unhex(value ->> '$[2]') AS v_agent, unhex(value ->> '$[3]') AS v_worker, \
       value ->> '$[4]' AS v_to, value ->> '$[5]' AS v_output, value ->> '$[6]' AS v_metrics, \
       value ->> '$[7]' AS v_git_info, value ->> '$[8]' AS v_verification \
       FROM json_each($4)) AS v",
    held_returning!(list)
);
const COMPLETE_POSTGRES: &str = concat!(
    "UPDATE tasks SET state = v.v_to, output = v.v_output, metrics = v.v_metrics, \
     git_info = v.v_git_info, verification = v.v_verification, error = NULL, \
     completed_at = CASE WHEN v.v_to = $2 THEN $1 ELSE completed_at END, updated_at = $1 \
     FROM unnest($4::uuid[], $5::uuid[], $6::uuid[], $7::uuid[], $8::text[], $9::jsonb[], \
     $10::jsonb[], $11::jsonb[], $12::jsonb[]) \
     AS v(v_id, v_tenant, v_agent, v_worker, v_to, v_output, v_metrics, v_git_info, \
     v_verification)",
    held_returning!(list)
);

/// [`COMPLETE_SQLITE_LIST`]'s list: one array of strings (or nulls) per
/// completion.
fn completion_list(items: &[Completion]) -> Result<Vec<[Option<String>; 9]>> {
    let hex = |id: Option<Uuid>| id.map(|id| id.simple().to_string());
    let text = |value: Option<&Value>| -> Result<Option<String>> {
        value
            .map(serde_json::to_string)
            .transpose()
            .map_err(Error::internal)
    };
    items
        .iter()
        .map(|m| {
            Ok([
                hex(Some(m.id)),
                hex(Some(m.tenant_id)),
                hex(m.acting.agent_id),
                hex(m.acting.worker_id),
                Some(m.to.as_str().to_owned()),
                text(Some(&m.output))?,
                text(m.metrics.as_ref())?,
                text(m.git_info.as_ref())?,
                text(m.verification.as_ref())?,
            ])
        })
        .collect()
}

/// The columns every list has, for PostgreSQL's arrays.
type Holders = (Vec<Uuid>, Vec<Uuid>, Vec<Option<Uuid>>, Vec<Option<Uuid>>);

fn holders<'a>(rows: impl Iterator<Item = (Uuid, Uuid, Acting)> + 'a) -> Holders {
    let mut columns: Holders = Default::default();
    for (id, tenant_id, acting) in rows {
        columns.0.push(id);
        columns.1.push(tenant_id);
        columns.2.push(acting.agent_id);
        columns.3.push(acting.worker_id);
    }
    columns
}

impl Combine for Starts {
    type Item = Start;
    type Row = TaskRow;
    type Out = crate::api::Task;

    fn key(item: &Start) -> Uuid {
        item.id
    }

    fn row_key(row: &TaskRow) -> Uuid {
        row.id
    }

    fn run<'a>(tx: &'a mut Tx, items: &'a [Start]) -> BoxFuture<'a, Result<Vec<TaskRow>>> {
        Box::pin(async move {
            let now = tx.now().as_datetime();
            let (from, to) = (TaskState::Claimed, TaskState::InProgress);
            let rows = on_db!(tx, c =>
                sqlite: {
                    let mut rows = Vec::new();
                    for s in items {
                        rows.extend(sqlx::query_as(START_SQLITE)
                            .bind(to.as_str()).bind(now).bind(from.as_str())
                            .bind(s.id).bind(s.tenant_id)
                            .bind(s.acting.agent_id).bind(s.acting.worker_id)
                            .fetch_optional(&mut *c).await?);
                    }
                    Ok(rows)
                },
                postgres: {
                    let (ids, tenants, agents, workers) =
                        holders(items.iter().map(|s| (s.id, s.tenant_id, s.acting)));
                    sqlx::query_as(START_POSTGRES)
                        .bind(to.as_str()).bind(now).bind(from.as_str())
                        .bind(ids).bind(tenants).bind(agents).bind(workers)
                        .fetch_all(c).await
                },
            )?;
            Ok(rows)
        })
    }
}

impl Combine for Completions {
    type Item = Completion;
    type Row = TaskRow;
    type Out = crate::api::Task;

    fn key(item: &Completion) -> Uuid {
        item.id
    }

    fn row_key(row: &TaskRow) -> Uuid {
        row.id
    }

    fn run<'a>(tx: &'a mut Tx, items: &'a [Completion]) -> BoxFuture<'a, Result<Vec<TaskRow>>> {
        Box::pin(async move {
            let now = tx.now().as_datetime();
            let (from, completed) = (TaskState::InProgress, TaskState::Completed.as_str());
            let rows = on_db!(tx, c =>
                sqlite: if items.len() > 1 {
                    let list = completion_list(items)?;
                    sqlx::query_as(COMPLETE_SQLITE_LIST)
                        .bind(now).bind(completed).bind(from.as_str())
                        .bind(Json(list))
                        .fetch_all(c).await
                } else {
                    let mut rows = Vec::new();
                    for m in items {
                        rows.extend(sqlx::query_as(COMPLETE_SQLITE)
                            .bind(now).bind(completed).bind(from.as_str())
                            .bind(m.id).bind(m.tenant_id)
                            .bind(m.acting.agent_id).bind(m.acting.worker_id)
                            .bind(m.to.as_str()).bind(Json(&m.output))
                            .bind(m.metrics.as_ref().map(Json))
                            .bind(m.git_info.as_ref().map(Json))
                            .bind(m.verification.as_ref().map(Json))
                            .fetch_optional(&mut *c).await?);
                    }
                    Ok(rows)
                },
                postgres: {
                    let (ids, tenants, agents, workers) =
                        holders(items.iter().map(|m| (m.id, m.tenant_id, m.acting)));
                    let to: Vec<&str> = items.iter().map(|m| m.to.as_str()).collect();
                    let output: Vec<Json<&Value>> = items.iter().map(|m| Json(&m.output)).collect();
                    let json = |f: fn(&Completion) -> &Option<Value>| -> Vec<Option<Json<&Value>>> {
                        items.iter().map(|m| f(m).as_ref().map(Json)).collect()
                    };
                    sqlx::query_as(COMPLETE_POSTGRES)
                        .bind(now).bind(completed).bind(from.as_str())
                        .bind(ids).bind(tenants).bind(agents).bind(workers).bind(to)
                        .bind(output)
                        .bind(json(|m| &m.metrics))
                        .bind(json(|m| &m.git_info))
                        .bind(json(|m| &m.verification))
                        .fetch_all(c).await
                },
            )?;
            Ok(rows)
        })
    }
}
