//! Combined claims: the claims waiting for the writer, run as one statement
//! ([`crate::store::Combine`]).
//!
//! Why: once starts and completions were combined (BENCHMARKS.md item 14),
//! claims were most of what the PostgreSQL writer does, one round trip
//! each. A claim cannot be one `UPDATE ... FROM` a list the way those are:
//! each agent must get a different task, chosen by its own filters and
//! preferences, after the agents before it have taken theirs. So the list
//! goes to a server-side function ([`super::claim_sql::CLAIM_EACH_FUNCTION`])
//! that runs the one-request claim for each agent in turn, and answers, per
//! agent, the task claimed, or the one it already holds, or nothing. Where
//! every free agent would take the claim-order walk's next task (the same
//! filters, no fair pick, no preferred task), the function claims their
//! tasks with one `UPDATE` instead (`bulk_claim!` in [`super::claim_sql`]).
//!
//! Only where the store combines ([`crate::store::Store::combines`]:
//! PostgreSQL with one writer) and its writer connections carry the
//! function ([`claims_combine`]). The one place two claims for one agent can
//! still race there is across replicas: the statement then fails with a
//! unique violation on `tasks_held_by_agent`, its batch is rolled back, and
//! each of its claims is run again on its own ([`Combine::alone_after`]),
//! where the race is retried as ever ([`super::claim`]).

use super::claim_sql::{CLAIM_EACH_FUNCTION, CLAIM_EACH_POSTGRES};
use crate::error::{Error, Result};
use crate::store::{Combine, Store, Tx, is_unique_violation, on_db};
use crate::tasks::rows::TaskRow;
use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use sqlx::postgres::PgRow;
use sqlx::types::Json;
use sqlx::{FromRow, Row};
use uuid::Uuid;

/// Whether claims on `store` are combined.
pub(super) fn claims_combine(store: &Store) -> bool {
    store.combines() && store.writer_session().contains(CLAIM_EACH_FUNCTION)
}

/// One agent's claim.
pub(super) struct ClaimFor {
    pub tenant_id: Uuid,
    pub agent_id: Uuid,
    pub worker_id: Option<Uuid>,
    pub workflow_id: Option<Uuid>,
    /// The claimer's effective tags ([`super::claim::claimer_tags`]).
    pub tags: Vec<String>,
    /// The environments the claimer may run, resolved beforehand.
    pub runnable: Vec<Uuid>,
    /// The environment the claim is restricted to, if any.
    pub environment: Option<Uuid>,
    /// The control plane's clock at the request.
    pub now: DateTime<Utc>,
}

/// What one agent's claim came to.
pub(super) enum Outcome {
    /// This task was claimed for the agent now.
    Claimed(TaskRow),
    /// Nothing was claimed: the agent already holds this task.
    Held(TaskRow),
    /// Nothing to claim.
    Nothing,
}

/// The statement's row for one agent.
pub(super) struct ClaimRow {
    agent: Uuid,
    pub outcome: Outcome,
}

impl<'r> FromRow<'r, PgRow> for ClaimRow {
    fn from_row(row: &'r PgRow) -> std::result::Result<Self, sqlx::Error> {
        let agent = row.try_get("claim_agent")?;
        let outcome = match row.try_get::<&str, _>("claim_outcome")? {
            "claimed" => Outcome::Claimed(TaskRow::from_row(row)?),
            "held" => Outcome::Held(TaskRow::from_row(row)?),
            _ => Outcome::Nothing,
        };
        Ok(Self { agent, outcome })
    }
}

/// Claims, one per agent.
pub(super) struct Claims;

impl Combine for Claims {
    type Item = ClaimFor;
    type Row = ClaimRow;
    type Out = Option<TaskRow>;

    fn key(item: &ClaimFor) -> Uuid {
        item.agent_id
    }

    fn row_key(row: &ClaimRow) -> Uuid {
        row.agent
    }

    fn run<'a>(tx: &'a mut Tx, items: &'a [ClaimFor]) -> BoxFuture<'a, Result<Vec<ClaimRow>>> {
        Box::pin(async move {
            // One instant for the statement: the latest of its requests'.
            let now = items.iter().map(|a| a.now).max().unwrap_or_default();
            let rows = on_db!(tx, c =>
                // Never asked: claims combine only on PostgreSQL
                // (claims_combine); SQLite's claims run alone (super::claim).
                sqlite: {
                    let _ = c;
                    Err(sqlx::Error::Configuration(
                        "claims are combined only on PostgreSQL".into(),
                    ))
                },
                postgres: {
                    let column = |f: fn(&ClaimFor) -> Option<Uuid>| -> Vec<Option<Uuid>> {
                        items.iter().map(f).collect()
                    };
                    let tags: Vec<Json<&[String]>> =
                        items.iter().map(|a| Json(&a.tags[..])).collect();
                    let runnable: Vec<Json<&[Uuid]>> =
                        items.iter().map(|a| Json(&a.runnable[..])).collect();
                    sqlx::query_as(CLAIM_EACH_POSTGRES)
                        .bind(column(|a| Some(a.tenant_id)))
                        .bind(column(|a| Some(a.agent_id)))
                        .bind(column(|a| a.worker_id))
                        .bind(column(|a| a.workflow_id))
                        .bind(tags)
                        .bind(runnable)
                        .bind(column(|a| a.environment))
                        .bind(now)
                        .bind(None::<i32>)
                        .bind(false)
                        .fetch_all(c).await
                },
            );
            match rows {
                Err(e) if is_unique_violation(&e) || crate::limits::is_limit_race(&e) => {
                    Err(Error::Conflict {
                        message: "a claim raced a claim for the same agent".into(),
                        hint: Some("retry the request".into()),
                    })
                }
                other => Ok(other?),
            }
        })
    }

    /// A race for one agent (another replica's claim, or a deadlock), or
    /// for a flow limit's last slot ([`crate::limits`]):
    /// each claim runs again on its own path, which retries it.
    fn alone_after(error: &Error) -> bool {
        matches!(error, Error::Conflict { .. })
    }

    const WRITER: usize = 0;
}
