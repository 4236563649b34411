//! What `/metrics` shows of flow limits: held and pending tasks per
//! concurrency key, pending tasks and window use per rate key (summed over
//! tenants when the scrape covers every tenant).

use crate::control_plane::ControlPlane;
use crate::error::Result;
use crate::store::on_db;
use uuid::Uuid;

/// One key's figures for `/metrics`.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct KeyGauge {
    /// The key.
    pub key: String,
    /// Concurrency keys: tasks held; rate keys: claims in the current window.
    pub used: i64,
    /// Tasks with the key that are pending.
    pub pending: i64,
}

/// Every key's figures, by kind.
#[derive(Debug, Clone, Default)]
pub struct LimitStats {
    /// Per concurrency key (`used` is `held`).
    pub concurrency: Vec<KeyGauge>,
    /// Per rate key (`used` is the window's claims).
    pub rate: Vec<KeyGauge>,
}

/// Keys shown at most per kind (a scrape stays small whatever the keys).
const MAX_KEYS: i64 = 500;

impl ControlPlane {
    /// The figures of [`LimitStats`] for `tenant` (every tenant when `None`).
    pub async fn limit_stats(&self, tenant: Option<Uuid>) -> Result<LimitStats> {
        let now_ms = super::rate::epoch_ms(self.now().as_datetime());
        let mut conn = self.store().read().await?;
        let concurrency: Vec<KeyGauge> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT s.key, CAST(SUM(s.held) AS BIGINT) AS used, CAST(SUM(s.pending) AS BIGINT) AS pending \
             FROM (SELECT k.key, k.held, (SELECT count(*) FROM tasks t \
             WHERE t.tenant_id = k.tenant_id AND t.concurrency_key = k.key \
             AND t.state = 'pending') AS pending \
             FROM concurrency_keys k WHERE k.key <> '' AND ($1 IS NULL OR k.tenant_id = $1)) s \
             GROUP BY s.key ORDER BY s.key LIMIT $2",
        )
        .bind(tenant)
        .bind(MAX_KEYS)
        .fetch_all(c)
        .await)?;
        let rate: Vec<KeyGauge> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT s.key, CAST(SUM(s.used) AS BIGINT) AS used, CAST(SUM(s.pending) AS BIGINT) AS pending \
             FROM (SELECT r.key, (SELECT count(*) FROM rate_limit_claims c \
             WHERE c.tenant_id = r.tenant_id AND c.key = r.key \
             AND c.claimed_ms > $3 - 1000 * r.period_seconds) AS used, \
             (SELECT count(*) FROM tasks t WHERE t.tenant_id = r.tenant_id \
             AND t.rate_limit_key = r.key AND t.state = 'pending') AS pending \
             FROM rate_limits r WHERE ($1 IS NULL OR r.tenant_id = $1)) s \
             GROUP BY s.key ORDER BY s.key LIMIT $2",
        )
        .bind(tenant)
        .bind(MAX_KEYS)
        .bind(now_ms)
        .fetch_all(c)
        .await)?;
        Ok(LimitStats { concurrency, rate })
    }
}
