//! Aggregates over the log: grouped stats and the helper lists (distinct
//! operations and roles, actors, workflows).

use crate::api::{LogActor, LogFilter, LogGroup, LogGroupBy, LogStats};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::Result;
use crate::store::on_db;
use serde_json::Value;
use uuid::Uuid;

use super::filter::{ResolvedFilter, Sql, bind_all, push_filter};

/// Groups and helper entries returned at most.
pub(crate) const MAX_GROUPS: i64 = 1000;

impl ControlPlane {
    /// `GET /logs/stats`: counts per value of `group_by` under the filters,
    /// largest first (at most 1,000 groups).
    pub async fn log_stats(
        &self,
        caller: &Caller,
        filter: LogFilter,
        group_by: LogGroupBy,
    ) -> Result<LogStats> {
        let filter = ResolvedFilter::new(filter, self.now())?;
        let dialect = self.store().dialect();
        let column = group_by.as_str();
        let mut sql = Sql {
            text: format!("SELECT {column} AS value, COUNT(*) AS n FROM logs"),
            binds: Vec::new(),
        };
        push_filter(&mut sql, dialect, caller.tenant_id, &filter);
        sql.push(&format!(
            " GROUP BY {column} ORDER BY n DESC, {column} LIMIT {MAX_GROUPS}"
        ));
        let mut conn = self.store().read().await?;
        let groups: Vec<LogGroup> = match group_by {
            LogGroupBy::TaskId | LogGroupBy::WorkItemId | LogGroupBy::ActivationId => {
                let rows: Vec<(Option<Uuid>, i64)> = on_db!(&mut conn, c => bind_all!(
                    sqlx::query_as::<_, (Option<Uuid>, i64)>(sqlx::AssertSqlSafe(sql.text.clone())),
                    &sql.binds
                ).fetch_all(c).await)?;
                rows.into_iter()
                    .map(|(v, n)| LogGroup {
                        value: v.map_or(Value::Null, |v| Value::String(v.to_string())),
                        count: n as u64,
                    })
                    .collect()
            }
            LogGroupBy::IsOrchestratorTask => {
                let rows: Vec<(Option<bool>, i64)> = on_db!(&mut conn, c => bind_all!(
                    sqlx::query_as::<_, (Option<bool>, i64)>(sqlx::AssertSqlSafe(sql.text.clone())),
                    &sql.binds
                ).fetch_all(c).await)?;
                rows.into_iter()
                    .map(|(v, n)| LogGroup {
                        value: v.map_or(Value::Null, Value::Bool),
                        count: n as u64,
                    })
                    .collect()
            }
            _ => {
                let rows: Vec<(Option<String>, i64)> = on_db!(&mut conn, c => bind_all!(
                    sqlx::query_as::<_, (Option<String>, i64)>(sqlx::AssertSqlSafe(sql.text.clone())),
                    &sql.binds
                ).fetch_all(c).await)?;
                rows.into_iter()
                    .map(|(v, n)| LogGroup {
                        value: v.map_or(Value::Null, Value::String),
                        count: n as u64,
                    })
                    .collect()
            }
        };
        Ok(LogStats {
            group_by,
            total: groups.iter().map(|g| g.count).sum(),
            groups,
        })
    }

    /// `GET /logs/operations` or `/logs/roles`: the distinct values seen,
    /// sorted (at most 1,000).
    pub async fn log_distinct(&self, caller: &Caller, field: &'static str) -> Result<Vec<String>> {
        debug_assert!(matches!(field, "operation" | "role"));
        let sql = format!(
            "SELECT DISTINCT {field} FROM logs WHERE tenant_id = $1 AND {field} IS NOT NULL \
             ORDER BY {field} LIMIT {MAX_GROUPS}"
        );
        let mut conn = self.store().read().await?;
        let rows: Vec<(String,)> = on_db!(&mut conn, c => sqlx::query_as(sqlx::AssertSqlSafe(sql.clone()))
            .bind(caller.tenant_id)
            .fetch_all(c)
            .await)?;
        Ok(rows.into_iter().map(|(v,)| v).collect())
    }

    /// `GET /logs/actors`: the distinct actors seen (at most 1,000).
    pub async fn log_actors(&self, caller: &Caller) -> Result<Vec<LogActor>> {
        let mut conn = self.store().read().await?;
        let rows: Vec<(Option<String>, Option<String>, Option<String>)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT DISTINCT actor_type, actor_id, actor_name FROM logs WHERE tenant_id = $1 \
             AND (actor_type IS NOT NULL OR actor_id IS NOT NULL) \
             ORDER BY actor_type, actor_id, actor_name LIMIT 1000"
        )
        .bind(caller.tenant_id)
        .fetch_all(c)
        .await)?;
        Ok(rows
            .into_iter()
            .map(|(actor_type, actor_id, actor_name)| LogActor {
                actor_type,
                actor_id,
                actor_name,
            })
            .collect())
    }

    /// `GET /logs/workflows`: the workflow ids that have log rows, most
    /// recently logged first (at most 1,000).
    pub async fn log_workflows(&self, caller: &Caller) -> Result<Vec<Uuid>> {
        let mut conn = self.store().read().await?;
        let rows: Vec<(Uuid, i64)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT workflow_id, MAX(id) AS last FROM logs WHERE tenant_id = $1 \
             AND workflow_id IS NOT NULL GROUP BY workflow_id ORDER BY last DESC LIMIT 1000"
        )
        .bind(caller.tenant_id)
        .fetch_all(c)
        .await)?;
        Ok(rows.into_iter().map(|(id, _)| id).collect())
    }
}
