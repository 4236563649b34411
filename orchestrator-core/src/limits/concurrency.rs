//! The `concurrency-limits` resource (admin): `PUT`, `GET` and `DELETE`
//! `/api/v1/concurrency-limits[/:key]` over the `concurrency_keys` rows
//! (module docs of [`crate::limits`]).

use super::{check_key, check_range};
use crate::api::{ConcurrencyLimit, DeletedLimit, Page, PageRequest, SetConcurrencyLimit};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::store::{Access, on_db};
use uuid::Uuid;

/// The largest concurrency limit.
const MAX_LIMIT: i64 = 100_000;

/// A key's row with its pending count.
#[derive(sqlx::FromRow)]
struct KeyRow {
    key: String,
    limit_value: i32,
    limit_set: bool,
    held: i32,
    pending: i64,
}

impl KeyRow {
    fn to_api(&self) -> ConcurrencyLimit {
        ConcurrencyLimit {
            key: self.key.clone(),
            limit: i64::from(self.limit_value),
            held: i64::from(self.held),
            pending: self.pending,
        }
    }
}

/// The tenant's key rows (`key` alone when given), with their pending counts.
async fn key_rows(
    access: &mut impl Access,
    tenant_id: Uuid,
    key: Option<&str>,
) -> Result<Vec<KeyRow>> {
    Ok(on_db!(access, c => sqlx::query_as(
        "SELECT k.key, k.limit_value, k.limit_set, k.held, \
         (SELECT count(*) FROM tasks t WHERE t.tenant_id = k.tenant_id \
          AND t.concurrency_key = k.key AND t.state = 'pending') AS pending \
         FROM concurrency_keys k WHERE k.tenant_id = $1 AND k.key <> '' \
         AND ($2 IS NULL OR k.key = $2) ORDER BY k.key",
    )
    .bind(tenant_id)
    .bind(key)
    .fetch_all(c)
    .await)?)
}

impl ControlPlane {
    /// `PUT /api/v1/concurrency-limits/:key`: sets the key's limit.
    pub async fn set_concurrency_limit(
        &self,
        caller: &Caller,
        key: &str,
        request: SetConcurrencyLimit,
    ) -> Result<ConcurrencyLimit> {
        check_key("key", key)?;
        check_range("limit", request.limit, MAX_LIMIT)?;
        let now = self.now().as_datetime();
        let mut tx = self.store().begin().await?;
        on_db!(&mut tx, c => sqlx::query(
            "INSERT INTO concurrency_keys (tenant_id, key, limit_value, limit_set, held, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, 0, $5, $5) ON CONFLICT (tenant_id, key) \
             DO UPDATE SET limit_value = excluded.limit_value, limit_set = excluded.limit_set, \
             updated_at = excluded.updated_at",
        )
        .bind(caller.tenant_id)
        .bind(key)
        .bind(request.limit as i32)
        .bind(true)
        .bind(now)
        .execute(c)
        .await
        .map(|_| ()))?;
        let row = key_rows(&mut tx, caller.tenant_id, Some(key)).await?;
        tx.commit().await?;
        // A raised limit frees slots: whoever waits claims again.
        self.store().wake_claimers();
        row.first()
            .map(KeyRow::to_api)
            .ok_or_else(|| Error::internal("the concurrency key row vanished"))
    }

    /// `GET /api/v1/concurrency-limits/:key`: the key with a limit or a task.
    pub async fn get_concurrency_limit(
        &self,
        caller: &Caller,
        key: &str,
    ) -> Result<ConcurrencyLimit> {
        check_key("key", key)?;
        let mut conn = self.store().read().await?;
        key_rows(&mut conn, caller.tenant_id, Some(key))
            .await?
            .iter()
            .find(|r| r.limit_set || r.held > 0 || r.pending > 0)
            .map(KeyRow::to_api)
            .ok_or(Error::not_found("concurrency limit"))
    }

    /// `GET /api/v1/concurrency-limits`: every key with a limit set or a
    /// held or pending task, by key.
    pub async fn list_concurrency_limits(
        &self,
        caller: &Caller,
        page: PageRequest,
    ) -> Result<Page<ConcurrencyLimit>> {
        let mut conn = self.store().read().await?;
        let rows: Vec<ConcurrencyLimit> = key_rows(&mut conn, caller.tenant_id, None)
            .await?
            .iter()
            .filter(|r| r.limit_set || r.held > 0 || r.pending > 0)
            .map(KeyRow::to_api)
            .collect();
        Ok(paged(rows, page))
    }

    /// `DELETE /api/v1/concurrency-limits/:key`: the key goes back to the
    /// default limit of 1; `404` when no limit was set.
    pub async fn delete_concurrency_limit(
        &self,
        caller: &Caller,
        key: &str,
    ) -> Result<DeletedLimit> {
        check_key("key", key)?;
        let now = self.now().as_datetime();
        let mut tx = self.store().begin().await?;
        let changed = on_db!(&mut tx, c => sqlx::query(
            "UPDATE concurrency_keys SET limit_value = 1, limit_set = $3, updated_at = $4 \
             WHERE tenant_id = $1 AND key = $2 AND limit_set",
        )
        .bind(caller.tenant_id)
        .bind(key)
        .bind(false)
        .bind(now)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
        if changed == 0 {
            return Err(Error::not_found("concurrency limit"));
        }
        tx.commit().await?;
        Ok(DeletedLimit {
            key: key.to_owned(),
            deleted: true,
        })
    }
}

/// One page of a list held in memory (a tenant has few keys).
pub(super) fn paged<T>(rows: Vec<T>, page: PageRequest) -> Page<T> {
    let total = rows.len() as u64;
    let items = rows
        .into_iter()
        .skip(page.offset() as usize)
        .take(page.per_page as usize)
        .collect();
    Page::new(items, total, page)
}
