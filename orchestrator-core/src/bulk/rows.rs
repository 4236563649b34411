//! The `bulk_actions` and `bulk_action_items` tables.

use crate::api::{
    BulkAction, BulkActionKind, BulkCounts, BulkStatus, BulkTarget, Scope, Timestamp,
};
use crate::caller::Caller;
use crate::error::{Error, Result};
use crate::store::{Access, on_db};
use chrono::{DateTime, Utc};
use uuid::Uuid;

#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct BulkRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub target: String,
    pub action: String,
    pub status: String,
    pub dry_run: bool,
    pub run_at: Option<DateTime<Utc>>,
    pub reason: Option<String>,
    pub matched: i64,
    pub succeeded: i64,
    pub skipped: i64,
    pub failed: i64,
    pub actor_key_id: Uuid,
    pub actor_type: String,
    pub actor_id: Option<Uuid>,
    pub locked_until: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}

macro_rules! bulk_columns {
    () => {
        "id, tenant_id, target, action, status, dry_run, run_at, reason, matched, succeeded, \
         skipped, failed, actor_key_id, actor_type, actor_id, locked_until, created_at, finished_at"
    };
}
pub(crate) use bulk_columns;

impl BulkRow {
    pub(crate) fn to_api(&self) -> BulkAction {
        let count = |n: i64| u64::try_from(n).unwrap_or(0);
        BulkAction {
            id: self.id,
            target: BulkTarget::parse(&self.target).unwrap_or(BulkTarget::Tasks),
            action: BulkActionKind::parse(&self.action).unwrap_or(BulkActionKind::Cancel),
            status: BulkStatus::parse(&self.status).unwrap_or(BulkStatus::Running),
            dry_run: self.dry_run,
            counts: BulkCounts {
                matched: count(self.matched),
                succeeded: count(self.succeeded),
                skipped: count(self.skipped),
                failed: count(self.failed),
            },
            run_at: self.run_at.map(Timestamp::from),
            reason: self.reason.clone(),
            created_at: self.created_at.into(),
            finished_at: self.finished_at.map(Timestamp::from),
        }
    }

    /// Who the action acts as: its creator, so the entities' events name
    /// them.
    pub(crate) fn actor(&self) -> Caller {
        Caller {
            tenant_id: self.tenant_id,
            scope: Scope::Admin,
            key_id: self.actor_key_id,
            owner_type: self.actor_type.clone(),
            owner_id: self.actor_id,
        }
    }

    /// The reason every changed entity's event carries.
    pub(crate) fn event_reason(&self) -> String {
        format!("bulk action {}", self.id)
    }
}

/// A bulk action of `tenant_id`, or 404.
pub(crate) async fn require(
    access: &mut (impl Access + ?Sized),
    tenant_id: Uuid,
    id: Uuid,
) -> Result<BulkRow> {
    let row: Option<BulkRow> = on_db!(access, c => sqlx::query_as(concat!(
        "SELECT ", bulk_columns!(), " FROM bulk_actions WHERE tenant_id = $1 AND id = $2"
    ))
    .bind(tenant_id)
    .bind(id)
    .fetch_optional(c)
    .await)?;
    row.ok_or(Error::not_found("bulk action"))
}

/// Writes a new action.
pub(crate) async fn insert(access: &mut (impl Access + ?Sized), row: &BulkRow) -> Result<()> {
    on_db!(access, c => sqlx::query(
        "INSERT INTO bulk_actions (id, tenant_id, target, action, status, dry_run, run_at, reason, \
         matched, succeeded, skipped, failed, actor_key_id, actor_type, actor_id, locked_until, \
         created_at, finished_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)"
    )
    .bind(row.id)
    .bind(row.tenant_id)
    .bind(&row.target)
    .bind(&row.action)
    .bind(&row.status)
    .bind(row.dry_run)
    .bind(row.run_at)
    .bind(&row.reason)
    .bind(row.matched)
    .bind(row.succeeded)
    .bind(row.skipped)
    .bind(row.failed)
    .bind(row.actor_key_id)
    .bind(&row.actor_type)
    .bind(row.actor_id)
    .bind(row.locked_until)
    .bind(row.created_at)
    .bind(row.finished_at)
    .execute(c)
    .await
    .map(|_| ()))?;
    Ok(())
}

/// Most item rows one statement writes.
const ITEMS_PER_STATEMENT: usize = 500;

/// Writes the fixed set, in order.
pub(crate) async fn insert_items(
    access: &mut (impl Access + ?Sized),
    action: Uuid,
    ids: &[Uuid],
) -> Result<()> {
    for (chunk_index, chunk) in ids.chunks(ITEMS_PER_STATEMENT).enumerate() {
        let mut sql = String::from(
            "INSERT INTO bulk_action_items (bulk_action_id, position, entity_id) VALUES ",
        );
        for i in 0..chunk.len() {
            if i > 0 {
                sql.push(',');
            }
            sql.push_str(&format!("($1, ${}, ${})", 2 * i + 2, 2 * i + 3));
        }
        let first = chunk_index * ITEMS_PER_STATEMENT;
        on_db!(access, c => {
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql.clone())).bind(action);
            for (i, id) in chunk.iter().enumerate() {
                query = query.bind(i32::try_from(first + i).unwrap_or(i32::MAX)).bind(*id);
            }
            query.execute(c).await.map(|_| ())
        })?;
    }
    Ok(())
}
