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
use crate::api::{
    Brief, Briefs, Deliverable, Deliverables, History, LiveConsole, Page, PageRequest, Selected,
    WorkflowEventQuery, WorkflowFilter, WorkspacePacket,
};
pub use crate::api::{RailItem, RailQuery, WorkspacePacketQuery};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::store::on_db;
use serde_json::Value;
use uuid::Uuid;

impl ControlPlane {
    /// `GET /operations/workflows/rail`: one page of the dashboard's rail,
    /// every filter applied before paging (module docs).
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
            (mode == "recent").then(|| self.clock().now() - chrono::Duration::hours(24));

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

    /// `GET /operations/workflows/:id/workspace`: the workflow's whole
    /// dashboard packet in one answer (module docs); 404 when the workflow,
    /// or a selected work item or task, is not there.
    pub async fn operations_workspace(
        &self,
        caller: &Caller,
        id: Uuid,
        query: WorkspacePacketQuery,
    ) -> Result<WorkspacePacket> {
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
            Some(LiveConsole {
                events: feed.events,
                next_after: feed.next_after,
                has_more: feed.has_more,
            })
        } else {
            None
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
                .map(|(task_id, sequence, body)| Brief {
                    task_id,
                    sequence,
                    handoff: body.0,
                })
                .collect();
            let (handoffs, next_after) = section(handoffs, query.briefs_after, "briefs_after")?;
            Some(Briefs {
                handoffs,
                next_after,
                total: next_after,
            })
        } else {
            None
        };
        let history = if wants("history") {
            let (activations, next_after) = section(
                detail.activations.clone(),
                query.history_after,
                "history_after",
            )?;
            Some(History {
                activations,
                next_after,
                total: next_after,
            })
        } else {
            None
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
                .map(|t| Deliverable {
                    task_id: t.id,
                    title: t.title.clone(),
                    stage_name: t.stage_name.clone(),
                    work_item_id: t.work_item_id,
                    output: t.output.clone(),
                    completed_at: t.completed_at,
                })
                .collect();
            let (tasks, next_after) =
                section(done, query.deliverables_after, "deliverables_after")?;
            Some(Deliverables {
                tasks,
                next_after,
                total: next_after,
            })
        } else {
            None
        };
        Ok(WorkspacePacket {
            workflow: detail,
            board,
            selected: Selected {
                work_item: selected_item,
                task: selected_task,
            },
            live_console,
            briefs,
            history,
            deliverables,
        })
    }
}

/// One incremental section of the workspace packet: `items` in their stable
/// order (oldest first), of which the caller has seen the first `after`.
/// Answers the items after that position and the total (the section's
/// `next_after`); passing `next_after` back returns only what arrived since.
fn section<T>(items: Vec<T>, after: Option<i64>, field: &str) -> Result<(Vec<T>, i64)> {
    let after = match after {
        None => 0,
        Some(n) if n >= 0 => usize::try_from(n).unwrap_or(usize::MAX),
        Some(_) => return Err(Error::invalid_field(field, "must be 0 or more")),
    };
    let total = i64::try_from(items.len()).unwrap_or(i64::MAX);
    let fresh: Vec<T> = items.into_iter().skip(after).collect();
    Ok((fresh, total))
}
