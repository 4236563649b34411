//! The bulk-action job: takes a running action with a lease (one replica
//! at a time), applies it a chunk per transaction, and lets go of it after
//! about a second so the runner's other jobs (and a shutdown) get their
//! turn; it is picked up again at once.

use super::rows::{BulkRow, bulk_columns};
use crate::api::{BulkActionKind, BulkStatus, BulkTarget, TaskAction};
use crate::background::Due;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::lifecycle::apply_task_op;
use crate::lifecycle::run_control::reschedule_in;
use crate::store::{Access, Tx, on_db};
use crate::tasks::state::TaskOp;
use crate::workflows::{WorkflowOp, apply_workflow_op};
use chrono::{DateTime, Utc};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// Entities one transaction changes.
const CHUNK: i64 = 100;
/// How long an action is one replica's without a word from it.
const LEASE: chrono::Duration = chrono::Duration::seconds(15);
/// How long one run works on an action before letting go.
const SLICE: Duration = Duration::from_secs(1);

/// What applying the action to one entity came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Succeeded,
    Skipped,
    Failed,
}

impl Outcome {
    fn as_str(self) -> &'static str {
        match self {
            Self::Succeeded => "succeeded",
            Self::Skipped => "skipped",
            Self::Failed => "failed",
        }
    }
}

/// What one chunk came to.
enum Chunk {
    /// Items remain; the lease now runs to this time.
    More(DateTime<Utc>),
    /// Every item is applied (the action is `completed`), or it was
    /// cancelled or taken over meanwhile.
    Ended,
}

/// Takes the oldest running action no replica holds, for `lease`.
async fn claim(
    access: &mut (impl Access + ?Sized),
    now: DateTime<Utc>,
    lease: DateTime<Utc>,
) -> Result<Option<BulkRow>> {
    Ok(on_db!(access, c =>
        sqlite: sqlx::query_as(concat!(
            "UPDATE bulk_actions SET locked_until = $1 WHERE id = (SELECT id FROM bulk_actions \
             WHERE status = 'running' AND (locked_until IS NULL OR locked_until <= $2) \
             ORDER BY created_at, id LIMIT 1) RETURNING ", bulk_columns!()
        ))
        .bind(lease).bind(now).fetch_optional(c).await,
        postgres: sqlx::query_as(concat!(
            "UPDATE bulk_actions SET locked_until = $1 WHERE id = (SELECT id FROM bulk_actions \
             WHERE status = 'running' AND (locked_until IS NULL OR locked_until <= $2) \
             ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING ", bulk_columns!()
        ))
        .bind(lease).bind(now).fetch_optional(c).await,
    )?)
}

impl ControlPlane {
    /// The background job (one line in the runner's table).
    pub(crate) async fn bulk_action_job(&self) -> Result<Due> {
        let started = Instant::now();
        loop {
            let now = self.now().as_datetime();
            let claimed = {
                let mut tx = self.store().begin().await?;
                let row = claim(&mut tx, now, now + LEASE).await?;
                tx.commit().await?;
                row
            };
            let Some(action) = claimed else {
                // The earliest lease some replica holds: if it dies, its
                // action is due then.
                let mut conn = self.store().read().await?;
                let (due,): (Option<DateTime<Utc>>,) = on_db!(&mut conn, c => sqlx::query_as(
                    "SELECT MIN(locked_until) FROM bulk_actions WHERE status = 'running'"
                )
                .fetch_one(c)
                .await)?;
                return Ok(due);
            };
            let mut lease = action.locked_until.unwrap_or(now + LEASE);
            loop {
                match self.apply_chunk(&action, lease).await? {
                    Chunk::Ended => break,
                    Chunk::More(next) => lease = next,
                }
                if started.elapsed() >= SLICE {
                    self.release_bulk_action(action.id, lease).await?;
                    return Ok(Some(self.now().as_datetime()));
                }
            }
        }
    }

    /// Lets go of an action this replica holds.
    async fn release_bulk_action(&self, id: Uuid, lease: DateTime<Utc>) -> Result<()> {
        let mut tx = self.store().begin().await?;
        on_db!(&mut tx, c => sqlx::query(
            "UPDATE bulk_actions SET locked_until = NULL WHERE id = $1 AND locked_until = $2"
        )
        .bind(id)
        .bind(lease)
        .execute(c)
        .await
        .map(|_| ()))?;
        tx.commit().await
    }

    /// One chunk in one transaction: the action's row (still running and
    /// ours, locked and its lease renewed), the next items, each applied,
    /// their outcomes and the counts; the action completed when none is
    /// left.
    async fn apply_chunk(&self, action: &BulkRow, lease: DateTime<Utc>) -> Result<Chunk> {
        let now = self.now().as_datetime();
        let renewed = now + LEASE;
        let mut tx = self.store().begin().await?;
        let ours = on_db!(&mut tx, c => sqlx::query(
            "UPDATE bulk_actions SET locked_until = $1 \
             WHERE id = $2 AND status = 'running' AND locked_until = $3"
        )
        .bind(renewed)
        .bind(action.id)
        .bind(lease)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
        if ours == 0 {
            return Ok(Chunk::Ended);
        }
        let items: Vec<(i32, Uuid)> = on_db!(&mut tx, c => sqlx::query_as(
            "SELECT position, entity_id FROM bulk_action_items \
             WHERE bulk_action_id = $1 AND outcome IS NULL ORDER BY position LIMIT $2"
        )
        .bind(action.id)
        .bind(CHUNK)
        .fetch_all(c)
        .await)?;
        let mut counts = [0i64; 3];
        for (position, entity) in &items {
            let outcome = self.apply_one(&mut tx, action, *entity).await?;
            counts[outcome as usize] += 1;
            on_db!(&mut tx, c => sqlx::query(
                "UPDATE bulk_action_items SET outcome = $1 WHERE bulk_action_id = $2 AND position = $3"
            )
            .bind(outcome.as_str())
            .bind(action.id)
            .bind(*position)
            .execute(c)
            .await
            .map(|_| ()))?;
        }
        let done = (items.len() as i64) < CHUNK;
        let ended = match done {
            true => Some(now),
            false => None,
        };
        on_db!(&mut tx, c => sqlx::query(
            "UPDATE bulk_actions SET succeeded = succeeded + $1, skipped = skipped + $2, \
             failed = failed + $3, status = $4, finished_at = $5, \
             locked_until = CASE WHEN $6 THEN NULL ELSE locked_until END WHERE id = $7"
        )
        .bind(counts[0])
        .bind(counts[1])
        .bind(counts[2])
        .bind(match done {
            true => BulkStatus::Completed.as_str(),
            false => BulkStatus::Running.as_str(),
        })
        .bind(ended)
        .bind(done)
        .bind(action.id)
        .execute(c)
        .await
        .map(|_| ()))?;
        if done {
            let row = super::rows::require(&mut tx, action.tenant_id, action.id).await?;
            super::record(&mut tx, &action.actor(), "bulk_action.completed", &row).await?;
        }
        tx.commit().await?;
        if let Some(run_at) = action.run_at.filter(|_| counts[0] > 0) {
            // Rescheduled tasks: the runner wakes claimers at their time
            // (or the claimers now, for a time already passed).
            self.after_reschedule(Some(run_at).filter(|at| *at > now));
        }
        Ok(match done {
            true => Chunk::Ended,
            false => Chunk::More(renewed),
        })
    }

    /// The action on one entity, through its single-entity operation. A
    /// transition that does not apply (checked before any write) is
    /// `skipped`; an entity gone meanwhile is `failed`; anything else fails
    /// the chunk, which is tried again.
    async fn apply_one(&self, tx: &mut Tx, action: &BulkRow, id: Uuid) -> Result<Outcome> {
        let caller = action.actor();
        let reason = action.event_reason();
        let target = BulkTarget::parse(&action.target);
        let kind = BulkActionKind::parse(&action.action);
        let applied = match (target, kind) {
            (Some(BulkTarget::Tasks), Some(BulkActionKind::Reschedule)) => {
                let Some(run_at) = action.run_at else {
                    return Ok(Outcome::Failed);
                };
                let now = self.now().as_datetime();
                reschedule_in(tx, &caller, id, run_at, now, &reason)
                    .await
                    .map(|_| ())
            }
            (Some(BulkTarget::Tasks), Some(kind)) => {
                let op = match kind {
                    BulkActionKind::Retry => TaskOp::Retry,
                    _ => TaskOp::Cancel,
                };
                apply_task_op(
                    tx,
                    &caller,
                    id,
                    op,
                    &TaskAction::default(),
                    (Some(reason), None, None),
                    self.now().as_datetime(),
                )
                .await
                .map(|_| ())
            }
            (Some(BulkTarget::Workflows), Some(kind)) => {
                let op = match kind {
                    BulkActionKind::Pause => WorkflowOp::Pause,
                    BulkActionKind::Resume => WorkflowOp::Resume,
                    _ => WorkflowOp::Cancel,
                };
                apply_workflow_op(tx, &caller, id, op, &reason)
                    .await
                    .map(|_| ())
            }
            _ => return Ok(Outcome::Failed),
        };
        match applied {
            Ok(()) => Ok(Outcome::Succeeded),
            Err(Error::InvalidTransition { .. }) => Ok(Outcome::Skipped),
            Err(Error::NotFound { .. }) => Ok(Outcome::Failed),
            Err(e) => Err(e),
        }
    }
}
