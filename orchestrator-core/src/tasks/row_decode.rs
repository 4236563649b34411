//! Decoding a [`TaskRow`] from a statement's row: each column by its
//! position when the statement returns it where [`task_columns!`] puts it
//! (every statement that names that list), by its name otherwise (a
//! statement with columns of its own around the task's, such as
//! PostgreSQL's combined claim).
//!
//! Why not sqlx's derive: it finds each of the 56 columns by name, a hash
//! and a probe of the statement's name map per column, which was a quarter
//! of the row's decoding and 3.8% of the SQLite writer thread in the
//! contract lifecycle (bench/HISTORY.md item 36). A name compared at its
//! expected position is a short `memcmp`; the decoded values and the
//! errors (they name the column) are the derive's.
//!
//! [`task_columns!`]: super::task_columns

use super::TaskRow;
use sqlx::postgres::PgRow;
use sqlx::sqlite::SqliteRow;
use sqlx::{Column, ColumnIndex, Row};
use std::fmt;

/// Where to read one column: its position when the row has it there,
/// else its name.
struct At {
    name: &'static str,
    position: Option<usize>,
}

impl<R: Row> ColumnIndex<R> for At
where
    &'static str: ColumnIndex<R>,
{
    fn index(&self, row: &R) -> sqlx::Result<usize> {
        match self.position {
            Some(position) => Ok(position),
            None => self.name.index(row),
        }
    }
}

/// Shown in a decoding error as the name alone, as the derive shows it.
impl fmt::Debug for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.name, f)
    }
}

/// The columns of one row, taken in [`task_columns!`]'s order.
///
/// [`task_columns!`]: super::task_columns
struct InOrder<'r, R> {
    row: &'r R,
    next: usize,
}

impl<'r, R: Row> InOrder<'r, R> {
    fn new(row: &'r R) -> Self {
        Self { row, next: 0 }
    }

    /// The next column, expected to be `name`.
    fn next(&mut self, name: &'static str) -> At {
        let here = self.next;
        self.next += 1;
        let position = self
            .row
            .columns()
            .get(here)
            .filter(|column| column.name() == name)
            .map(|_| here);
        At { name, position }
    }
}

/// `FromRow` for each backend's row (one body: the field types need no
/// bounds spelled out per backend).
macro_rules! decode_task_row {
    ($($row:ty),*) => {$(
        impl<'r> sqlx::FromRow<'r, $row> for TaskRow {
            fn from_row(row: &'r $row) -> sqlx::Result<Self> {
                let mut at = InOrder::new(row);
                Ok(TaskRow {
                    id: row.try_get(at.next("id"))?,
                    tenant_id: row.try_get(at.next("tenant_id"))?,
                    title: row.try_get(at.next("title"))?,
                    task_type: row.try_get(at.next("type"))?,
                    task_kind: row.try_get(at.next("task_kind"))?,
                    description: row.try_get(at.next("description"))?,
                    priority: row.try_get(at.next("priority"))?,
                    state: row.try_get(at.next("state"))?,
                    workflow_id: row.try_get(at.next("workflow_id"))?,
                    work_item_id: row.try_get(at.next("work_item_id"))?,
                    workspace_id: row.try_get(at.next("workspace_id"))?,
                    activation_id: row.try_get(at.next("activation_id"))?,
                    stage_name: row.try_get(at.next("stage_name"))?,
                    role: row.try_get(at.next("role"))?,
                    required_tags: row.try_get(at.next("required_tags"))?,
                    input: row.try_get(at.next("input"))?,
                    context: row.try_get(at.next("context"))?,
                    output: row.try_get(at.next("output"))?,
                    error: row.try_get(at.next("error"))?,
                    metrics: row.try_get(at.next("metrics"))?,
                    git_info: row.try_get(at.next("git_info"))?,
                    verification: row.try_get(at.next("verification"))?,
                    execution_backend: row.try_get(at.next("execution_backend"))?,
                    timeout_minutes: row.try_get(at.next("timeout_minutes"))?,
                    token_budget: row.try_get(at.next("token_budget"))?,
                    cost_cap_usd: row.try_get(at.next("cost_cap_usd"))?,
                    max_iterations: row.try_get(at.next("max_iterations"))?,
                    llm_max_retries: row.try_get(at.next("llm_max_retries"))?,
                    auto_retry: row.try_get(at.next("auto_retry"))?,
                    max_retries: row.try_get(at.next("max_retries"))?,
                    retry_count: row.try_get(at.next("retry_count"))?,
                    metadata: row.try_get(at.next("metadata"))?,
                    assigned_agent_id: row.try_get(at.next("assigned_agent_id"))?,
                    assigned_worker_id: row.try_get(at.next("assigned_worker_id"))?,
                    preferred_agent_id: row.try_get(at.next("preferred_agent_id"))?,
                    preferred_worker_id: row.try_get(at.next("preferred_worker_id"))?,
                    claimed_at: row.try_get(at.next("claimed_at"))?,
                    started_at: row.try_get(at.next("started_at"))?,
                    completed_at: row.try_get(at.next("completed_at"))?,
                    created_at: row.try_get(at.next("created_at"))?,
                    updated_at: row.try_get(at.next("updated_at"))?,
                    execution_environment: row.try_get(at.next("execution_environment"))?,
                    run_at: row.try_get(at.next("run_at"))?,
                    attempt: row.try_get(at.next("attempt"))?,
                    retry_policy: row.try_get(at.next("retry_policy"))?,
                    heartbeat_timeout_seconds: row.try_get(at.next("heartbeat_timeout_seconds"))?,
                    last_heartbeat_at: row.try_get(at.next("last_heartbeat_at"))?,
                    lease_lost_agent_id: row.try_get(at.next("lease_lost_agent_id"))?,
                    progress: row.try_get(at.next("progress"))?,
                    progress_at: row.try_get(at.next("progress_at"))?,
                    cancel_requested: row.try_get(at.next("cancel_requested"))?,
                    expires_at: row.try_get(at.next("expires_at"))?,
                    dedupe_key: row.try_get(at.next("dedupe_key"))?,
                    concurrency_key: row.try_get(at.next("concurrency_key"))?,
                    rate_limit_key: row.try_get(at.next("rate_limit_key"))?,
                    limit_waiting_at: row.try_get(at.next("limit_waiting_at"))?,                })
            }
        }
    )*};
}

decode_task_row!(SqliteRow, PgRow);
