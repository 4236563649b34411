//! Reading workflows: the list (with task counts and work item summaries),
//! the detail, the stages and the board.

use crate::api::{
    Board, BoardColumn, Page, PageRequest, Task, TaskState, WorkItemSummary, WorkflowDetail,
    WorkflowFilter, WorkflowListItem, WorkflowStage,
};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::id_filter::IdMatch;
use crate::store::{Access, contains_pattern, on_db};
use crate::tasks::{TaskRow, task_columns};
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;
use uuid::Uuid;

use super::refs;
use super::rows::{WorkflowRow, find, workflow_columns};
use super::{activations, work_items};

/// Extra list conditions of the operations rail.
#[derive(Debug, Clone, Default)]
pub(crate) struct ListExtra {
    /// A static SQL condition starting with `AND` (over `w`).
    pub condition: &'static str,
    pub search: Option<String>,
    pub workflow_id: Option<Uuid>,
    /// Only workflows that ended after this instant (the rail's `recent`),
    /// filtered in SQL so `total` and `pages` count what is shown.
    pub completed_after: Option<DateTime<Utc>>,
}

pub(crate) async fn stages_in(
    access: &mut impl Access,
    workflow_id: Uuid,
) -> Result<Vec<WorkflowStage>> {
    #[allow(clippy::type_complexity)]
    let rows: Vec<(
        String,
        i32,
        Option<String>,
        String,
        Option<DateTime<Utc>>,
        Option<DateTime<Utc>>,
        i64,
        Option<i64>,
    )> = on_db!(access, c => sqlx::query_as(
        "SELECT s.name, s.position, s.goal, s.status, s.started_at, s.completed_at, \
         (SELECT COUNT(*) FROM work_items i WHERE i.workflow_id = s.workflow_id AND i.stage_name = s.name), \
         (SELECT SUM(CASE WHEN i.completed_at IS NULL THEN 1 ELSE 0 END) FROM work_items i WHERE i.workflow_id = s.workflow_id AND i.stage_name = s.name) \
         FROM workflow_stages s WHERE s.workflow_id = $1 ORDER BY s.position",
    )
    .bind(workflow_id)
    .fetch_all(c)
    .await)?;
    Ok(rows
        .into_iter()
        .map(
            |(name, position, goal, status, started, completed, count, open)| WorkflowStage {
                name,
                position: i64::from(position),
                goal,
                status,
                work_item_count: count,
                open_work_item_count: open.unwrap_or(0),
                started_at: started.map(Into::into),
                completed_at: completed.map(Into::into),
            },
        )
        .collect())
}

impl ControlPlane {
    /// `GET /workflows`: newest first, with names, task counts and the work
    /// item summary (grouped queries, one each per page).
    pub async fn list_workflows(
        &self,
        caller: &Caller,
        filter: WorkflowFilter,
        page: PageRequest,
    ) -> Result<Page<WorkflowListItem>> {
        self.list_workflow_items(caller, filter, ListExtra::default(), page)
            .await
    }

    pub(crate) async fn list_workflow_items(
        &self,
        caller: &Caller,
        filter: WorkflowFilter,
        extra: ListExtra,
        page: PageRequest,
    ) -> Result<Page<WorkflowListItem>> {
        let ids = IdMatch::parse(filter.id_prefix.as_deref(), filter.id_suffix.as_deref())?;
        let mut conn = self.store().read().await?;
        let where_clause = format!(
            "w.tenant_id = $1 AND ($2 IS NULL OR w.workspace_id = $2) \
             AND ($3 IS NULL OR w.playbook_id IN (SELECT p.id FROM playbooks p WHERE p.family_id = \
                 (SELECT q.family_id FROM playbooks q WHERE q.id = $3))) AND ($4 IS NULL OR w.state = $4) AND ($5 IS NULL OR w.lifecycle = $5) \
             AND ($8 IS NULL OR LOWER(w.name) LIKE $8 ESCAPE '\\') AND ($9 IS NULL OR w.id = $9) \
             AND ($10 IS NULL OR w.completed_at > $10) AND {} \
             AND ($14 IS NULL OR LOWER(w.name) = LOWER($14)) {}",
            ids.condition(self.store().dialect(), "w.id", "$11", "$12", "$13"),
            extra.condition
        );
        #[allow(non_snake_case)]
        let WHERE = where_clause.as_str();
        let state = filter.state.map(|s| s.as_str());
        let search = contains_pattern("search", extra.search.as_deref())?.map(|p| p.to_lowercase());
        macro_rules! binds {
            ($q:expr) => {
                $q.bind(caller.tenant_id)
                    .bind(filter.workspace_id)
                    .bind(filter.playbook_id)
                    .bind(state)
                    .bind(filter.lifecycle.as_deref())
                    .bind(i64::from(page.per_page))
                    .bind(page.offset() as i64)
                    .bind(search.as_deref())
                    .bind(extra.workflow_id)
                    .bind(extra.completed_after)
                    .bind(ids.low())
                    .bind(ids.high())
                    .bind(ids.suffix.as_deref())
                    .bind(filter.name.as_deref())
            };
        }
        let count =
            format!("SELECT COUNT(*) FROM workflows w WHERE {WHERE} AND $6 > 0 AND $7 >= 0");
        let (total,): (i64,) = on_db!(&mut conn, c => binds!(sqlx::query_as(sqlx::AssertSqlSafe(count.as_str())))
            .fetch_one(c).await)?;
        let page_ids = format!(
            "SELECT w.id FROM workflows w WHERE {WHERE} ORDER BY w.created_at DESC, w.id DESC LIMIT $6 OFFSET $7"
        );
        let select = format!(
            "SELECT {}, {} FROM workflows w WHERE {WHERE} ORDER BY w.created_at DESC, w.id DESC LIMIT $6 OFFSET $7",
            workflow_columns!(),
            refs::NAME_COLUMNS
        );
        let rows: Vec<NamedWorkflowRow> = on_db!(&mut conn, c => binds!(sqlx::query_as(sqlx::AssertSqlSafe(select.as_str())))
            .fetch_all(c).await)?;
        let counts_sql = format!(
            "SELECT workflow_id, state, COUNT(*) FROM tasks WHERE workflow_id IN ({page_ids}) GROUP BY workflow_id, state"
        );
        let counts: Vec<(Uuid, String, i64)> = on_db!(&mut conn, c => binds!(sqlx::query_as(sqlx::AssertSqlSafe(counts_sql.as_str())))
            .fetch_all(c).await)?;
        let items_sql = format!(
            "SELECT workflow_id, COUNT(*), \
             SUM(CASE WHEN completed_at IS NULL THEN 1 ELSE 0 END), \
             SUM(CASE WHEN column_id = 'blocked' AND completed_at IS NULL THEN 1 ELSE 0 END), \
             SUM(CASE WHEN completed_at IS NOT NULL THEN 1 ELSE 0 END) \
             FROM work_items WHERE workflow_id IN ({page_ids}) GROUP BY workflow_id"
        );
        #[allow(clippy::type_complexity)]
        let items: Vec<(Uuid, i64, Option<i64>, Option<i64>, Option<i64>)> = on_db!(&mut conn, c => binds!(sqlx::query_as(sqlx::AssertSqlSafe(items_sql.as_str())))
            .fetch_all(c).await)?;
        let stages_sql = format!(
            "SELECT workflow_id, name FROM workflow_stages WHERE status = 'active' AND workflow_id IN ({page_ids}) ORDER BY workflow_id, position"
        );
        let stages: Vec<(Uuid, String)> = on_db!(&mut conn, c => binds!(sqlx::query_as(sqlx::AssertSqlSafe(stages_sql.as_str())))
            .fetch_all(c).await)?;
        let list = rows
            .into_iter()
            .map(|named| {
                let id = named.row.id;
                let mut task_counts: BTreeMap<String, i64> = TaskState::ALL
                    .iter()
                    .map(|s| (s.as_str().to_owned(), 0))
                    .collect();
                for (_, state, n) in counts.iter().filter(|(w, _, _)| *w == id) {
                    task_counts.insert(state.clone(), *n);
                }
                let mut summary = WorkItemSummary::default();
                if let Some((_, total, open, blocked, done)) = items.iter().find(|(w, ..)| *w == id)
                {
                    summary.total_work_items = *total;
                    summary.open_work_item_count = open.unwrap_or(0);
                    summary.blocked_work_item_count = blocked.unwrap_or(0);
                    summary.completed_work_item_count = done.unwrap_or(0);
                }
                summary.active_stage_names = stages
                    .iter()
                    .filter(|(w, _)| *w == id)
                    .map(|(_, n)| n.clone())
                    .collect();
                summary.active_stage_count = summary.active_stage_names.len() as i64;
                WorkflowListItem {
                    workflow: named.row.to_api(),
                    workspace_name: named.workspace_name,
                    playbook_name: named.playbook_name,
                    task_counts,
                    work_item_summary: summary,
                }
            })
            .collect();
        Ok(Page::new(list, total as u64, page))
    }

    /// `GET /workflows/:id`: the record plus tasks, work items, activations
    /// and stages.
    pub async fn get_workflow(&self, caller: &Caller, id: Uuid) -> Result<WorkflowDetail> {
        let mut conn = self.store().read().await?;
        let row = find(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("workflow"))?;
        let tasks: Vec<TaskRow> = on_db!(&mut conn, c => sqlx::query_as(concat!(
            "SELECT ", task_columns!(), " FROM tasks WHERE workflow_id = $1 ORDER BY created_at, id"
        ))
        .bind(id)
        .fetch_all(c)
        .await)?;
        let tasks = tasks
            .iter()
            .map(TaskRow::to_api)
            .collect::<Result<Vec<Task>>>()?;
        let work_items = work_items::list_in(&mut conn, id).await?;
        let activations = activations::list_in(&mut conn, id).await?;
        let workflow_stages = stages_in(&mut conn, id).await?;
        Ok(WorkflowDetail {
            workflow: row.to_api(),
            tasks,
            work_items,
            activations,
            workflow_stages,
        })
    }

    /// `GET /workflows/:id/stages`.
    pub async fn workflow_stages(&self, caller: &Caller, id: Uuid) -> Result<Vec<WorkflowStage>> {
        let mut conn = self.store().read().await?;
        find(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("workflow"))?;
        stages_in(&mut conn, id).await
    }

    /// `GET /workflows/:id/board`.
    pub async fn workflow_board(&self, caller: &Caller, id: Uuid) -> Result<Board> {
        let mut conn = self.store().read().await?;
        find(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("workflow"))?;
        let items = work_items::list_in(&mut conn, id).await?;
        let stages = stages_in(&mut conn, id).await?;
        let columns = work_items::COLUMNS
            .iter()
            .map(|(col, title)| BoardColumn {
                id: (*col).to_owned(),
                title: (*title).to_owned(),
                work_items: items
                    .iter()
                    .filter(|i| i.column_id == *col)
                    .cloned()
                    .collect(),
            })
            .collect();
        Ok(Board {
            workflow_id: id,
            columns,
            stages,
        })
    }
}

#[derive(sqlx::FromRow)]
struct NamedWorkflowRow {
    #[sqlx(flatten)]
    row: WorkflowRow,
    workspace_name: Option<String>,
    playbook_name: Option<String>,
}
