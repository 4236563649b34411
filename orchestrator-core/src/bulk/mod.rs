//! Bulk actions (admin, issue 32): one operator action over many tasks or
//! workflows.
//!
//! The matched set is fixed when the action is created (its ids are stored
//! in order, `bulk_action_items`), so later changes to the data never widen
//! or shrink it. The background job of `run` applies it in chunks, each
//! one transaction that changes the entities, marks their items and adds to
//! the counts together, so the counts only grow and a restart resumes at
//! the first unmarked item. Each entity goes through the same core
//! operation as its single-entity route (`crate::lifecycle::apply_task_op`,
//! `crate::lifecycle::run_control::reschedule_in`,
//! `crate::workflows::apply_workflow_op`) and gets its usual event with
//! reason `bulk action <id>`; an entity the action does not apply to (a
//! cancelled task to cancel) is `skipped`, one deleted meanwhile `failed`.

mod rows;
mod run;
mod select;

use crate::api::{
    BulkAction, BulkActionKind, BulkStatus, BulkTarget, CreateBulkAction, Page, PageRequest,
};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::store::{Tx, on_db};
use rows::{BulkRow, bulk_columns, require};
use serde_json::json;
use uuid::Uuid;

/// Whether `action` applies to `target`, and `run_at` is given exactly when
/// it is `reschedule` (both rules of a well-formed body: 400).
fn check_action(request: &CreateBulkAction) -> Result<()> {
    use BulkActionKind::*;
    match (request.target, request.action) {
        (BulkTarget::Tasks, Cancel | Retry | Reschedule)
        | (BulkTarget::Workflows, Cancel | Pause | Resume) => {}
        (target, action) => {
            return Err(Error::invalid_field(
                "action",
                format!(
                    "`{action}` does not apply to {target}: tasks take cancel, retry, reschedule; \
                     workflows cancel, pause, resume"
                ),
            ));
        }
    }
    match (request.action, request.run_at.is_some()) {
        (Reschedule, false) => Err(Error::invalid_field(
            "run_at",
            "reschedule needs run_at: when the tasks become claimable",
        )),
        (Reschedule, true) | (_, false) => Ok(()),
        (action, true) => Err(Error::invalid_field(
            "run_at",
            format!("run_at belongs to reschedule only, not to {action}"),
        )),
    }
}

/// Records `bulk_action.<what>`.
async fn record(tx: &mut Tx, caller: &Caller, what: &'static str, row: &BulkRow) -> Result<()> {
    let event = NewEvent::new(
        what,
        "bulk_action",
        row.id,
        json!({
            "target": row.target,
            "action": row.action,
            "dry_run": row.dry_run,
            "counts": row.to_api().counts,
        }),
    );
    events::record(tx, caller, row.tenant_id, event).await
}

/// Running bulk actions and how far they got, for `/metrics`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BulkProgress {
    /// Bulk actions with status `running` now.
    pub running: i64,
    /// Entities in their fixed sets.
    pub matched: i64,
    /// Of those, applied (succeeded, skipped or failed).
    pub done: i64,
}

impl ControlPlane {
    /// The running bulk actions' progress (of `tenant` only when given).
    pub async fn bulk_progress(&self, tenant: Option<Uuid>) -> Result<BulkProgress> {
        let mut conn = self.store().read().await?;
        let (running, matched, done): (i64, Option<i64>, Option<i64>) = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT COUNT(*), CAST(SUM(matched) AS BIGINT), CAST(SUM(succeeded + skipped + failed) AS BIGINT) FROM bulk_actions \
             WHERE status = 'running' AND ($1 IS NULL OR tenant_id = $1)"
        )
        .bind(tenant)
        .fetch_one(c)
        .await)?;
        Ok(BulkProgress {
            running,
            matched: matched.unwrap_or(0),
            done: done.unwrap_or(0),
        })
    }

    /// `POST /bulk-actions` → `202` with the action (a dry run is already
    /// `completed`, with only `matched` counted).
    pub async fn create_bulk_action(
        &self,
        caller: &Caller,
        request: CreateBulkAction,
    ) -> Result<BulkAction> {
        check_action(&request)?;
        let reason = request
            .reason
            .as_deref()
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .map(str::to_owned);
        let now = self.now().as_datetime();
        let dry_run = request.dry_run.unwrap_or(false);
        let mut tx = self.store().begin().await?;
        let ids = match (&request.ids, &request.filter) {
            (Some(_), Some(_)) => {
                return Err(Error::validation(
                    "give either ids or filter, not both".to_string(),
                ));
            }
            (None, None) => {
                return Err(Error::validation("give ids or a filter".to_string()));
            }
            (Some(ids), None) => {
                select::by_ids(&mut tx, caller.tenant_id, request.target, ids).await?
            }
            (None, Some(filter)) => {
                select::by_filter(&mut tx, caller.tenant_id, request.target, filter).await?
            }
        };
        let row = BulkRow {
            id: Uuid::new_v4(),
            tenant_id: caller.tenant_id,
            target: request.target.as_str().into(),
            action: request.action.as_str().into(),
            status: match dry_run || ids.is_empty() {
                true => BulkStatus::Completed,
                false => BulkStatus::Running,
            }
            .as_str()
            .into(),
            dry_run,
            run_at: request.run_at.map(|t| t.as_datetime()),
            reason,
            matched: ids.len() as i64,
            succeeded: 0,
            skipped: 0,
            failed: 0,
            actor_key_id: caller.key_id,
            actor_type: caller.owner_type.clone(),
            actor_id: caller.owner_id,
            locked_until: None,
            created_at: now,
            finished_at: (dry_run || ids.is_empty()).then_some(now),
        };
        rows::insert(&mut tx, &row).await?;
        if !dry_run {
            rows::insert_items(&mut tx, row.id, &ids).await?;
        }
        record(&mut tx, caller, "bulk_action.created", &row).await?;
        tx.commit().await?;
        if row.status == BulkStatus::Running.as_str() {
            self.wake_background(now);
        }
        Ok(row.to_api())
    }

    /// `GET /bulk-actions`: newest first.
    pub async fn list_bulk_actions(
        &self,
        caller: &Caller,
        page: PageRequest,
    ) -> Result<Page<BulkAction>> {
        let mut conn = self.store().read().await?;
        let (total,): (i64,) = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT COUNT(*) FROM bulk_actions WHERE tenant_id = $1"
        )
        .bind(caller.tenant_id)
        .fetch_one(c)
        .await)?;
        let rows: Vec<BulkRow> = on_db!(&mut conn, c => sqlx::query_as(concat!(
            "SELECT ", bulk_columns!(), " FROM bulk_actions WHERE tenant_id = $1 \
             ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3"
        ))
        .bind(caller.tenant_id)
        .bind(i64::from(page.per_page))
        .bind(page.offset() as i64)
        .fetch_all(c)
        .await)?;
        Ok(Page::new(
            rows.iter().map(BulkRow::to_api).collect(),
            total as u64,
            page,
        ))
    }

    /// `GET /bulk-actions/:id`.
    pub async fn get_bulk_action(&self, caller: &Caller, id: Uuid) -> Result<BulkAction> {
        let mut conn = self.store().read().await?;
        Ok(require(&mut conn, caller.tenant_id, id).await?.to_api())
    }

    /// `POST /bulk-actions/:id/cancel`: the rest is not applied (a chunk
    /// being applied finishes first: the status is checked under the
    /// action's row lock in each chunk's transaction). `409` once it ended.
    pub async fn cancel_bulk_action(&self, caller: &Caller, id: Uuid) -> Result<BulkAction> {
        let now = self.now().as_datetime();
        let mut tx = self.store().begin().await?;
        let changed = on_db!(&mut tx, c => sqlx::query(
            "UPDATE bulk_actions SET status = 'cancelled', finished_at = $1, locked_until = NULL \
             WHERE tenant_id = $2 AND id = $3 AND status = 'running'"
        )
        .bind(now)
        .bind(caller.tenant_id)
        .bind(id)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
        let row = require(&mut tx, caller.tenant_id, id).await?;
        if changed == 0 {
            return Err(Error::Conflict {
                message: format!("the bulk action is already {}", row.status),
                hint: None,
            });
        }
        record(&mut tx, caller, "bulk_action.cancelled", &row).await?;
        tx.commit().await?;
        Ok(row.to_api())
    }
}
