//! Reading tasks: one, a filtered page, its git evidence, whether it streams.

use crate::api::{Page, PageRequest, Task, TaskFilter, TaskGit};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::id_filter::IdMatch;
use crate::store::on_db;
use crate::tasks::handoffs::latest_handoff;
use crate::tasks::rows::{TaskRow, find, task_columns};
use serde_json::{Value, json};
use uuid::Uuid;

impl ControlPlane {
    /// `GET /tasks/:id`, with the latest handoff.
    pub async fn get_task(&self, caller: &Caller, id: Uuid) -> Result<Task> {
        let mut conn = self.store().read().await?;
        let row = find(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("task"))?;
        let mut task = row.to_api()?;
        task.latest_handoff = Some(latest_handoff(&mut conn, id).await?);
        Ok(task)
    }

    /// `GET /tasks`: newest first.
    pub async fn list_tasks(
        &self,
        caller: &Caller,
        filter: TaskFilter,
        page: PageRequest,
    ) -> Result<Page<Task>> {
        let ids = IdMatch::parse(filter.id_prefix.as_deref(), filter.id_suffix.as_deref())?;
        let mut conn = self.store().read().await?;
        let where_clause = format!(
            "WHERE tenant_id = $1 AND ($2 IS NULL OR state = $2) \
             AND ($3 IS NULL OR workspace_id = $3) AND ($4 IS NULL OR workflow_id = $4) \
             AND ($5 IS NULL OR work_item_id = $5) AND ($6 IS NULL OR assigned_agent_id = $6) \
             AND ($7 IS NULL OR activation_id = $7) AND ($8 IS NULL OR execution_backend = $8) \
             AND ($9 IS NULL OR task_kind = $9) AND ($10 IS NULL OR task_kind <> $10) \
             AND ($11 IS NULL OR (state = 'pending' AND run_at IS NOT NULL AND run_at > $11)) \
             AND ($12 IS NULL OR NOT (state = 'pending' AND run_at IS NOT NULL AND run_at > $12)) \
             AND {}",
            ids.condition(self.store().dialect(), "id", "$13", "$14", "$15")
        );
        #[allow(non_snake_case)]
        let WHERE = where_clause.as_str();
        let orch = filter.is_orchestrator_task;
        let kind_eq = orch.filter(|b| *b).map(|_| "orchestrator");
        let kind_ne = orch.filter(|b| !*b).map(|_| "orchestrator");
        let state = filter.state.map(|s| s.as_str());
        let backend = filter.execution_backend.map(|b| b.as_str());
        // Delayed = pending with `run_at` after the clock's now (run control §3).
        let now = self.now().as_datetime();
        let delayed = filter.delayed.filter(|d| *d).map(|_| now);
        let not_delayed = filter.delayed.filter(|d| !*d).map(|_| now);
        macro_rules! binds {
            ($q:expr) => {
                $q.bind(caller.tenant_id)
                    .bind(state)
                    .bind(filter.workspace_id)
                    .bind(filter.workflow_id)
                    .bind(filter.work_item_id)
                    .bind(filter.assigned_agent_id)
                    .bind(filter.activation_id)
                    .bind(backend)
                    .bind(kind_eq)
                    .bind(kind_ne)
                    .bind(delayed)
                    .bind(not_delayed)
                    .bind(ids.low())
                    .bind(ids.high())
                    .bind(ids.suffix.as_deref())
            };
        }
        let count = format!("SELECT COUNT(*) FROM tasks {WHERE}");
        let (total,): (i64,) = on_db!(&mut conn, c => binds!(sqlx::query_as(sqlx::AssertSqlSafe(count.as_str()))).fetch_one(c).await)?;
        let select = format!(
            concat!(
                "SELECT ",
                task_columns!(),
                " FROM tasks {} ORDER BY created_at DESC, id DESC LIMIT $16 OFFSET $17"
            ),
            WHERE
        );
        let rows: Vec<TaskRow> = on_db!(&mut conn, c => binds!(sqlx::query_as(sqlx::AssertSqlSafe(select.as_str())))
            .bind(i64::from(page.per_page))
            .bind(page.offset() as i64)
            .fetch_all(c)
            .await)?;
        let items = rows
            .iter()
            .map(TaskRow::to_api)
            .collect::<Result<Vec<_>>>()?;
        Ok(Page::new(items, total as u64, page))
    }

    /// `GET /tasks/:id/git`: derived from the `git_info` given at completion.
    pub async fn task_git(&self, caller: &Caller, id: Uuid) -> Result<TaskGit> {
        let mut conn = self.store().read().await?;
        let row = find(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("task"))?;
        let raw = row.git_info.map(|j| j.0).unwrap_or_else(|| json!({}));
        let pick = |k: &str, default: Value| {
            raw.get(k)
                .cloned()
                .filter(|v| !v.is_null())
                .unwrap_or(default)
        };
        Ok(TaskGit {
            linked_prs: pick("linked_prs", json!([])),
            branches: pick("branches", json!([])),
            ci_status: pick("ci_status", Value::Null),
            merge_history: pick("merge_history", json!([])),
            raw,
        })
    }

    /// Whether a task streams (`GET /tasks/:id/stream`): it does while it is
    /// claimed or in progress. The stream itself is the entity-event stream
    /// filtered to the task.
    pub async fn task_is_streaming(&self, caller: &Caller, id: Uuid) -> Result<bool> {
        let mut conn = self.store().read().await?;
        let row = find(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("task"))?;
        Ok(row.state()?.is_held())
    }
}
