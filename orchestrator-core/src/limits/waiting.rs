//! What flow limits add around the claim: the keys of a new task
//! ([`prepare_keys`]) and the claim that raced a limit ([`is_limit_race`]).
//! The background job that records `task.limit_waiting` and wakes claimers
//! when a rate window moves is `lifecycle::limit_waiting` (it records events
//! the way the lifecycle does, so it sits above both).

use super::check_key;
use crate::api::CreateTask;
use crate::error::{Error, Result};
use crate::store::{Tx, on_db};
use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

/// The event recorded once when a claimable task is first held back by a
/// limit: `{task_id, key, limit: "concurrency" | "rate"}`.
pub const LIMIT_WAITING_EVENT: &str = "task.limit_waiting";

/// Whether a claim statement failed because a concurrent claim took the
/// last slot (or window room) first: the migration's trigger aborts it, and
/// the claim runs again, now seeing the key full.
pub(crate) fn is_limit_race(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.message().contains("orch: flow limit reached"))
}

/// Checks the keys of a new task and makes the rows its claims update:
/// a key over 200 characters is 422, a rate key with no limit set is 400
/// unless it needs no lookup (`rate_key_checked`: checked before the
/// transaction, or a playbook's default, whose task
/// carries it and is not held back until a limit is set; see
/// `tasks::create`). Runs in the create's transaction, on every create path.
pub(crate) async fn prepare_keys(
    tx: &mut Tx,
    tenant_id: Uuid,
    request: &CreateTask,
    rate_key_checked: bool,
    now: DateTime<Utc>,
) -> Result<()> {
    if let Some(key) = &request.rate_limit_key {
        check_key("rate_limit_key", key)?;
    }
    if let Some(key) = request
        .rate_limit_key
        .as_ref()
        .filter(|_| !rate_key_checked)
    {
        check_rate_key(tx, tenant_id, key).await?;
    }
    if let Some(key) = &request.concurrency_key {
        check_key("concurrency_key", key)?;
        // The key's row and the row of the group without a key, which
        // fair claiming orders by (module docs of crate::limits). On
        // SQLite a trigger of the task insert makes them (migration 0022):
        // each statement there costs the writer two thread hand-offs.
        on_db!(tx, c =>
            sqlite: { let _ = c; Ok(()) },
            postgres: sqlx::query(
            "INSERT INTO concurrency_keys (tenant_id, key, created_at, updated_at) \
             VALUES ($1, $2, $3, $3), ($1, '', $3, $3) ON CONFLICT (tenant_id, key) DO NOTHING",
        )
        .bind(tenant_id)
        .bind(key)
        .bind(now)
        .execute(c)
        .await
        .map(|_| ()),
        )?;
    }
    Ok(())
}

/// Checks that rate key `key` has a limit set in the tenant: 400 on
/// `rate_limit_key` otherwise. Run in the create's transaction, or before a
/// combined create on a read connection (`tasks::create`); a limit deleted
/// between that read and the insert leaves a task whose rate key has no
/// limit, which is never held back, as a playbook's default key is.
pub(crate) async fn check_rate_key(
    conn: &mut impl crate::store::Access,
    tenant_id: Uuid,
    key: &str,
) -> Result<()> {
    let found: Option<(i32,)> = on_db!(conn, c => sqlx::query_as(
        "SELECT limit_value FROM rate_limits WHERE tenant_id = $1 AND key = $2",
    )
    .bind(tenant_id)
    .bind(key)
    .fetch_optional(c)
    .await)?;
    if found.is_none() {
        return Err(Error::invalid_field(
            "rate_limit_key",
            "names no rate limit: set one first with PUT /api/v1/rate-limits/:key",
        ));
    }
    Ok(())
}

/// When the limits job should look again after a claim or create of a
/// keyed task: soon, but not on every claim of a busy key.
pub(crate) fn recheck_after(now: DateTime<Utc>) -> DateTime<Utc> {
    now + Duration::milliseconds(500)
}
