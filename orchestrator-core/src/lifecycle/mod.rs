//! A task's moves through its state machine and what each sets off.
//!
//! [`crate::tasks`] owns the task record; this layer moves it: the claim
//! engine (`claim`), the holder's start, complete and fail (`holder`) and
//! the operator's actions (`operator`). Every move runs in one transaction
//! that reads the task (locked on PostgreSQL, on the one writer connection on
//! SQLite), asks [`crate::tasks::state::transition`] where it goes, writes the
//! row, the `task.state_changed` event(s) and the workflow consequences through
//! one function, `crate::workflows::after_task_change`.
//!
//! Who may act: see `crate::tasks::acting`. Start and
//! complete need the assignee (or its worker), else 403; fail also accepts
//! admin scope; the operator operations need admin scope, enforced by the
//! route table.
//!
//! Dependencies run one way: `lifecycle` → `workflows` → `tasks`.

pub(crate) mod claim;
pub(crate) mod claim_batch;
mod claim_each;
pub(crate) mod claim_sql;
mod complete_batch;
pub(crate) mod failure;
mod fast_path;
pub(crate) mod holder;
mod limit_waiting;
pub mod long_poll;
mod operator;
pub mod run_control;
pub(crate) use operator::apply_task_op;
pub mod task_token;
