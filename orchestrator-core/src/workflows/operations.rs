//! Operations packets for the dashboard.
//!
//! `GET /operations/workflows/rail` is a paginated list of rail items: each
//! is a workflow list item (record, `workspace_name`, `playbook_name`,
//! `task_counts` per state, `work_item_summary`) plus `needs_action` (any
//! task escalated, failed or awaiting assessment) and `mode`. Query: `mode` =
//! `live` (pending, in progress, paused; the default), `recent` (ended in the
//! last 24 h) or `history` (ended); `needs_action_only`; `lifecycle` = `all`,
//! `planned`, `ongoing`; `search` (name contains, case-insensitive);
//! `workflow_id`. Every filter applies before paging, so `meta.total` and
//! `meta.pages` count exactly the rail that is shown.
//!
//! `GET /operations/workflows/:id/workspace` is one packet:
//!
//! - `workflow`: the workflow detail (record, tasks, work items,
//!   activations, stages);
//! - `board`: the board (columns with work items, stages);
//! - `selected`: `{work_item, task}` chosen by `work_item_id` / `task_id`
//!   (404 when they are not in the workflow), else null;
//! - `live_console`: `{events, next_after, has_more}`, the workflow's events
//!   after the event id `live_console_after` (at most `live_console_limit`,
//!   default 50, max 500), narrowed to `work_item_id` when given;
//! - `briefs`: `{handoffs, next_after, total}`, the handoffs of its tasks
//!   (oldest first) after position `briefs_after`;
//! - `history`: `{activations, next_after, total}`, its activations (oldest
//!   first) after position `history_after`;
//! - `deliverables`: `{tasks, next_after, total}`, its completed tasks with
//!   their outputs (by completion time) after position `deliverables_after`.
//!
//! The three position cursors count items already seen: pass a section's
//! `next_after` back to receive only what arrived since. `tab_scope` narrows
//! the packet to one of `live_console`, `briefs`, `history`, `deliverables`
//! (the others are then null).

use super::read::ListExtra;
use super::rows::find;
use crate::api::{Page, PageRequest, WorkflowEventQuery, WorkflowFilter, WorkflowListItem};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::store::on_db;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

/// `GET /operations/workflows/rail` query.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RailQuery {
    #[serde(default)]
    pub mode: Option<String>,
    #[serde(default)]
    pub needs_action_only: Option<bool>,
    #[serde(default)]
    pub lifecycle: Option<String>,
    #[serde(default)]
    pub search: Option<String>,
    #[serde(default)]
    pub workflow_id: Option<Uuid>,
    #[serde(default)]
    pub page: Option<u32>,
    #[serde(default)]
    pub per_page: Option<u32>,
}

/// One rail entry.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RailItem {
    #[serde(flatten)]
    pub item: WorkflowListItem,
    pub needs_action: bool,
    pub mode: String,
}

/// `GET /operations/workflows/:id/workspace` query.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkspacePacketQuery {
    #[serde(default)]
    pub work_item_id: Option<Uuid>,
    #[serde(default)]
    pub task_id: Option<Uuid>,
    #[serde(default)]
    pub tab_scope: Option<String>,
    #[serde(default)]
    pub live_console_after: Option<i64>,
    #[serde(default)]
    pub live_console_limit: Option<i64>,
    #[serde(default)]
    pub briefs_after: Option<i64>,
    #[serde(default)]
    pub history_after: Option<i64>,
    #[serde(default)]
    pub deliverables_after: Option<i64>,
}

impl ControlPlane {
    pub async fn operations_rail(
        &self,
        caller: &Caller,
        query: RailQuery,
        page: PageRequest,
    ) -> Result<Page<RailItem>> {
        let mode = query.mode.clone().unwrap_or_else(|| "live".into());
        let needs_action = query.needs_action_only == Some(true);
        // Static conditions only (no caller text reaches the SQL).
        let condition = match (mode.as_str(), needs_action) {
            ("live", false) => "AND w.state IN ('pending', 'in_progress', 'paused')",
            ("live", true) => concat!(
                "AND w.state IN ('pending', 'in_progress', 'paused') ",
                "AND EXISTS (SELECT 1 FROM tasks t WHERE t.workflow_id = w.id AND t.state IN ('escalated', 'failed', 'output_pending_assessment'))"
            ),
            ("recent" | "history", false) => "AND w.state IN ('completed', 'failed', 'cancelled')",
            ("recent" | "history", true) => concat!(
                "AND w.state IN ('completed', 'failed', 'cancelled') ",
                "AND EXISTS (SELECT 1 FROM tasks t WHERE t.workflow_id = w.id AND t.state IN ('escalated', 'failed', 'output_pending_assessment'))"
            ),
            _ => {
                return Err(Error::invalid_field(
                    "mode",
                    "must be live, recent or history",
                ));
            }
        };
        // `recent` is the last day of ended workflows, filtered before paging.
        let completed_after =
            (mode == "recent").then(|| chrono::Utc::now() - chrono::Duration::hours(24));

        let lifecycle = match query.lifecycle.as_deref() {
            None | Some("all") => None,
            Some(l @ ("planned" | "ongoing")) => Some(l.to_owned()),
            Some(_) => {
                return Err(Error::invalid_field(
                    "lifecycle",
                    "must be all, planned or ongoing",
                ));
            }
        };
        let listed = self
            .list_workflow_items(
                caller,
                WorkflowFilter {
                    lifecycle,
                    ..Default::default()
                },
                ListExtra {
                    condition,
                    search: query.search.clone(),
                    workflow_id: query.workflow_id,
                    completed_after,
                },
                page,
            )
            .await?;
        Ok(listed.map(|item| {
            let needs_action = ["escalated", "failed", "output_pending_assessment"]
                .iter()
                .any(|s| item.task_counts.get(*s).copied().unwrap_or(0) > 0);
            RailItem {
                item,
                needs_action,
                mode: mode.clone(),
            }
        }))
    }

    pub async fn operations_workspace(
        &self,
        caller: &Caller,
        id: Uuid,
        query: WorkspacePacketQuery,
    ) -> Result<Value> {
        let detail = self.get_workflow(caller, id).await?;
        let board = self.workflow_board(caller, id).await?;
        let selected_item = match query.work_item_id {
            Some(item) => Some(
                detail
                    .work_items
                    .iter()
                    .find(|w| w.id == item)
                    .cloned()
                    .ok_or(Error::not_found("work item"))?,
            ),
            None => None,
        };
        let selected_task = match query.task_id {
            Some(task) => Some(
                detail
                    .tasks
                    .iter()
                    .find(|t| t.id == task)
                    .cloned()
                    .ok_or(Error::not_found("task"))?,
            ),
            None => None,
        };
        let scope = query.tab_scope.as_deref();
        if let Some(s) = scope
            && !matches!(s, "live_console" | "briefs" | "history" | "deliverables")
        {
            return Err(Error::invalid_field(
                "tab_scope",
                "must be live_console, briefs, history or deliverables",
            ));
        }
        let wants = |tab: &str| scope.is_none_or(|s| s == tab);
        let live_console = if wants("live_console") {
            let feed = self
                .workflow_events(
                    caller,
                    id,
                    WorkflowEventQuery {
                        after: query.live_console_after,
                        limit: query.live_console_limit,
                        work_item_id: query.work_item_id,
                        ..Default::default()
                    },
                )
                .await?;
            json!({ "events": feed.events, "next_after": feed.next_after, "has_more": feed.has_more })
        } else {
            Value::Null
        };
        let briefs = if wants("briefs") {
            let mut conn = self.store().read().await?;
            find(&mut conn, caller.tenant_id, id)
                .await?
                .ok_or(Error::not_found("workflow"))?;
            let rows: Vec<(Uuid, i32, sqlx::types::Json<Value>)> = on_db!(&mut conn, c => sqlx::query_as(
                "SELECT h.task_id, h.sequence, h.body FROM task_handoffs h JOIN tasks t ON t.id = h.task_id \
                 WHERE t.workflow_id = $1 ORDER BY h.created_at, h.id",
            )
            .bind(id)
            .fetch_all(c)
            .await)?;
            let handoffs = rows
                .into_iter()
                .map(|(task_id, sequence, body)| json!({ "task_id": task_id, "sequence": sequence, "handoff": body.0 }))
                .collect();
            section("handoffs", handoffs, query.briefs_after, "briefs_after")?
        } else {
            Value::Null
        };
        let history = if wants("history") {
            let activations = detail
                .activations
                .iter()
                .map(serde_json::to_value)
                .collect::<std::result::Result<Vec<_>, _>>()?;
            section(
                "activations",
                activations,
                query.history_after,
                "history_after",
            )?
        } else {
            Value::Null
        };
        let deliverables = if wants("deliverables") {
            let mut done: Vec<&crate::api::Task> = detail
                .tasks
                .iter()
                .filter(|t| t.state == crate::api::TaskState::Completed)
                .collect();
            done.sort_by_key(|t| (t.completed_at, t.id));
            let done = done
                .into_iter()
                .map(|t| json!({ "task_id": t.id, "title": t.title, "stage_name": t.stage_name, "work_item_id": t.work_item_id, "output": t.output, "completed_at": t.completed_at }))
                .collect();
            section(
                "tasks",
                done,
                query.deliverables_after,
                "deliverables_after",
            )?
        } else {
            Value::Null
        };
        Ok(json!({
            "workflow": detail,
            "board": board,
            "selected": { "work_item": selected_item, "task": selected_task },
            "live_console": live_console,
            "briefs": briefs,
            "history": history,
            "deliverables": deliverables,
        }))
    }
}

/// One incremental section of the workspace packet: `items` in their stable
/// order (oldest first), of which the caller has seen the first `after`.
/// Answers `{<key>: items after that position, next_after, total}`; passing
/// `next_after` back returns only what arrived since.
fn section(key: &str, items: Vec<Value>, after: Option<i64>, field: &str) -> Result<Value> {
    let after = match after {
        None => 0,
        Some(n) if n >= 0 => usize::try_from(n).unwrap_or(usize::MAX),
        Some(_) => return Err(Error::invalid_field(field, "must be 0 or more")),
    };
    let total = items.len();
    let fresh: Vec<Value> = items.into_iter().skip(after).collect();
    Ok(json!({ key: fresh, "next_after": total, "total": total }))
}
