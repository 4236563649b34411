//! Point-in-time counts for the metrics endpoint: tasks by tenant and state
//! (the queue depth is the `pending` count) and how busy the database pools
//! are. Read at scrape time rather than kept as counters, so they are right
//! after a restart and across replicas sharing one database.

use crate::control_plane::ControlPlane;
use crate::error::Result;
use crate::store::on_db;
pub use crate::store::{PoolUse, WriteBatches};
use uuid::Uuid;

/// How many tasks of one tenant are in one state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskCount {
    /// The tenant the tasks belong to.
    pub tenant_id: Uuid,
    /// The task state, as its wire word (`pending`, `claimed`, ...).
    pub state: String,
    /// Tasks of that tenant now in that state.
    pub count: i64,
}

impl ControlPlane {
    /// Tasks by tenant and state; only `tenant`'s when given (a tenant admin
    /// scraping over the API sees its own queue, not its neighbours').
    pub async fn task_counts(&self, tenant: Option<Uuid>) -> Result<Vec<TaskCount>> {
        let mut conn = self.store().read().await?;
        let rows: Vec<(Uuid, String, i64)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT tenant_id, state, COUNT(*) FROM tasks \
             WHERE ($1 IS NULL OR tenant_id = $1) GROUP BY tenant_id, state ORDER BY tenant_id, state",
        )
        .bind(tenant)
        .fetch_all(c)
        .await)?;
        Ok(rows
            .into_iter()
            .map(|(tenant_id, state, count)| TaskCount {
                tenant_id,
                state,
                count,
            })
            .collect())
    }

    /// The database pools' current use.
    pub fn pool_use(&self) -> Vec<PoolUse> {
        self.store().pool_use()
    }

    /// Write batches this process has committed (group commit).
    pub fn write_batches(&self) -> WriteBatches {
        self.store().write_batches()
    }
}
