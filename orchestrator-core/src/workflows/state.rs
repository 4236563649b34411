//! The operator's state machine for a workflow (pause, resume, cancel).

use crate::api::WorkflowState;
use crate::error::{Error, Result};

/// Operator operations on a workflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkflowOp {
    /// Stop handing out its tasks; from `pending` or `in_progress`.
    Pause,
    /// Hand out its tasks again; from `paused` only.
    Resume,
    /// End it for good; from any state that is not terminal.
    Cancel,
}

/// Where an operator operation takes a workflow; anything else is 409
/// `INVALID_STATE_TRANSITION`. Resume returns to `in_progress` (or
/// `pending` when nothing was ever claimed, decided by the caller).
pub fn workflow_transition(op: WorkflowOp, from: WorkflowState) -> Result<WorkflowState> {
    use WorkflowState::*;
    match (op, from) {
        (WorkflowOp::Pause, Pending | InProgress) => Ok(Paused),
        (WorkflowOp::Resume, Paused) => Ok(InProgress),
        (WorkflowOp::Cancel, s) if !s.is_terminal() => Ok(Cancelled),
        _ => Err(Error::InvalidTransition {
            resource: "workflow",
            current: from.as_str().into(),
            requested: match op {
                WorkflowOp::Pause => Paused,
                WorkflowOp::Resume => InProgress,
                WorkflowOp::Cancel => Cancelled,
            }
            .as_str()
            .into(),
        }),
    }
}
