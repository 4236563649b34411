//! The `rate-limits` resource (admin): `PUT`, `GET` and `DELETE`
//! `/api/v1/rate-limits[/:key]` over the `rate_limits` rows and the claim
//! log of each key (module docs of [`crate::limits`]).

use super::concurrency::paged;
use super::{check_key, check_range};
use crate::api::{DeletedLimit, Page, PageRequest, RateLimit, SetRateLimit};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::store::{Access, on_db};
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// The largest rate limit.
const MAX_LIMIT: i64 = 1_000_000;
/// The longest window.
const MAX_PERIOD_SECONDS: i64 = 86_400;

/// A rate key's row with its counts.
#[derive(sqlx::FromRow)]
struct RateRow {
    key: String,
    limit_value: i32,
    period_seconds: i32,
    claimed_in_window: i64,
    pending: i64,
}

impl RateRow {
    fn to_api(&self) -> RateLimit {
        RateLimit {
            key: self.key.clone(),
            limit: i64::from(self.limit_value),
            period_seconds: i64::from(self.period_seconds),
            claimed_in_window: self.claimed_in_window,
            pending: self.pending,
        }
    }
}

/// Milliseconds since the epoch, as the claim log stores claims.
pub(crate) fn epoch_ms(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis()
}

/// The tenant's rate limits (`key` alone when given), counted at `now`.
async fn rate_rows(
    access: &mut impl Access,
    tenant_id: Uuid,
    key: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Vec<RateRow>> {
    Ok(on_db!(access, c => sqlx::query_as(
        "SELECT r.key, r.limit_value, r.period_seconds, \
         (SELECT count(*) FROM rate_limit_claims c WHERE c.tenant_id = r.tenant_id \
          AND c.key = r.key AND c.claimed_ms > $3 - 1000 * r.period_seconds) AS claimed_in_window, \
         (SELECT count(*) FROM tasks t WHERE t.tenant_id = r.tenant_id \
          AND t.rate_limit_key = r.key AND t.state = 'pending') AS pending \
         FROM rate_limits r WHERE r.tenant_id = $1 AND ($2 IS NULL OR r.key = $2) ORDER BY r.key",
    )
    .bind(tenant_id)
    .bind(key)
    .bind(epoch_ms(now))
    .fetch_all(c)
    .await)?)
}

impl ControlPlane {
    /// `PUT /api/v1/rate-limits/:key`: sets the key's limit and window.
    pub async fn set_rate_limit(
        &self,
        caller: &Caller,
        key: &str,
        request: SetRateLimit,
    ) -> Result<RateLimit> {
        check_key("key", key)?;
        check_range("limit", request.limit, MAX_LIMIT)?;
        check_range("period_seconds", request.period_seconds, MAX_PERIOD_SECONDS)?;
        let now = self.now().as_datetime();
        let mut tx = self.store().begin().await?;
        on_db!(&mut tx, c => sqlx::query(
            "INSERT INTO rate_limits (tenant_id, key, limit_value, period_seconds, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (tenant_id, key) \
             DO UPDATE SET limit_value = excluded.limit_value, \
             period_seconds = excluded.period_seconds, updated_at = excluded.updated_at",
        )
        .bind(caller.tenant_id)
        .bind(key)
        .bind(request.limit as i32)
        .bind(request.period_seconds as i32)
        .bind(now)
        .execute(c)
        .await
        .map(|_| ()))?;
        let rows = rate_rows(&mut tx, caller.tenant_id, Some(key), now).await?;
        tx.commit().await?;
        // A larger window use may have room now.
        self.store().wake_claimers();
        rows.first()
            .map(RateRow::to_api)
            .ok_or_else(|| Error::internal("the rate limit row vanished"))
    }

    /// `GET /api/v1/rate-limits/:key`.
    pub async fn get_rate_limit(&self, caller: &Caller, key: &str) -> Result<RateLimit> {
        check_key("key", key)?;
        let now = self.now().as_datetime();
        let mut conn = self.store().read().await?;
        rate_rows(&mut conn, caller.tenant_id, Some(key), now)
            .await?
            .first()
            .map(RateRow::to_api)
            .ok_or(Error::not_found("rate limit"))
    }

    /// `GET /api/v1/rate-limits`: every rate limit, by key.
    pub async fn list_rate_limits(
        &self,
        caller: &Caller,
        page: PageRequest,
    ) -> Result<Page<RateLimit>> {
        let now = self.now().as_datetime();
        let mut conn = self.store().read().await?;
        let rows = rate_rows(&mut conn, caller.tenant_id, None, now)
            .await?
            .iter()
            .map(RateRow::to_api)
            .collect();
        Ok(paged(rows, page))
    }

    /// `DELETE /api/v1/rate-limits/:key`: pending tasks that name the key
    /// are no longer limited by it; new tasks may not name it (400).
    pub async fn delete_rate_limit(&self, caller: &Caller, key: &str) -> Result<DeletedLimit> {
        check_key("key", key)?;
        let mut tx = self.store().begin().await?;
        let deleted = on_db!(&mut tx, c => sqlx::query(
            "DELETE FROM rate_limits WHERE tenant_id = $1 AND key = $2",
        )
        .bind(caller.tenant_id)
        .bind(key)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
        if deleted == 0 {
            return Err(Error::not_found("rate limit"));
        }
        on_db!(&mut tx, c => sqlx::query(
            "DELETE FROM rate_limit_claims WHERE tenant_id = $1 AND key = $2",
        )
        .bind(caller.tenant_id)
        .bind(key)
        .execute(c)
        .await
        .map(|_| ()))?;
        tx.commit().await?;
        self.store().wake_claimers();
        Ok(DeletedLimit {
            key: key.to_owned(),
            deleted: true,
        })
    }
}
