//! The task state machine, in one place.
//!
//! Every task operation asks [`transition`] where the task goes from its
//! current state; anything not in the table is
//! [`Error::InvalidTransition`] (409 `INVALID_STATE_TRANSITION` with
//! `current_state` and `requested_state`).

use crate::api::TaskState;
use crate::error::{Error, Result};

/// An operation on a task, with the facts that pick between its outcomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskOp {
    /// An agent or worker takes a `pending` task.
    Claim,
    /// The holder begins work on a `claimed` task; repeating it while
    /// `in_progress` is a no-op.
    Start,
    /// The holder hands in its output: `completed`, or
    /// `output_pending_assessment` when verification did not pass.
    Complete {
        /// `verification.passed` (true when not given).
        passed: bool,
    },
    /// The holder reports a failure: back to `pending` for another attempt,
    /// or `failed`.
    Fail {
        /// `auto_retry` and `retry_count < max_retries`.
        retry_left: bool,
    },
    /// Sends a failed, cancelled or unassessed task back to `pending` for
    /// another attempt.
    Retry,
    /// Sends a completed, unassessed or failed task back to `pending` with
    /// feedback on its output.
    RequestChanges,
    /// Takes the task from its holder (if any) and puts it back to
    /// `pending` for someone else.
    Reassign,
    /// Marks a task that is not held `completed` without (further) work.
    Skip,
    /// The holder hands the task to a human: `escalated`.
    Escalate,
    /// The escalation is answered; the task goes back to `pending`.
    ResolveEscalation,
    /// Accepts output awaiting assessment: `completed`.
    ApproveOutput,
    /// Ends the task for good from any state but `completed` and
    /// `cancelled`.
    Cancel,
    /// The holder went silent (liveness) and the grace is over.
    AgentLost {
        /// Whether the task has retries left: back to `pending` if so,
        /// else `failed`.
        retry_left: bool,
    },
    /// Past `timeout_minutes`; `retry_left` only under a retry policy with
    /// attempts left (run control §2).
    Timeout {
        /// Whether the task goes back to `pending` (else `failed`).
        retry_left: bool,
    },
}

impl TaskOp {
    /// The name used in errors and events (`requested_state` is the nominal
    /// target, the operation name goes in the message).
    pub fn name(self) -> &'static str {
        match self {
            Self::Claim => "claim",
            Self::Start => "start",
            Self::Complete { .. } => "complete",
            Self::Fail { .. } => "fail",
            Self::Retry => "retry",
            Self::RequestChanges => "request-changes",
            Self::Reassign => "reassign",
            Self::Skip => "skip",
            Self::Escalate => "escalate",
            Self::ResolveEscalation => "resolve-escalation",
            Self::ApproveOutput => "approve-output",
            Self::Cancel => "cancel",
            Self::AgentLost { .. } => "release",
            Self::Timeout { .. } => "timeout",
        }
    }

    /// The state the operation asks for when nothing special happens.
    fn nominal(self) -> TaskState {
        use TaskState::*;
        match self {
            Self::Claim => Claimed,
            Self::Start => InProgress,
            Self::Complete { .. } | Self::Skip | Self::ApproveOutput => Completed,
            Self::Fail { .. } | Self::Timeout { .. } => Failed,
            Self::Retry
            | Self::RequestChanges
            | Self::Reassign
            | Self::ResolveEscalation
            | Self::AgentLost { .. } => Pending,
            Self::Escalate => Escalated,
            Self::Cancel => Cancelled,
        }
    }
}

/// Where `op` takes a task in state `from`. Returning `from` itself means a
/// no-op (a repeated `start`).
pub fn transition(op: TaskOp, from: TaskState) -> Result<TaskState> {
    use TaskState::*;
    let to = match (op, from) {
        (TaskOp::Claim, Pending) => Claimed,
        (TaskOp::Start, Claimed) => InProgress,
        (TaskOp::Start, InProgress) => InProgress,
        (TaskOp::Complete { passed: true }, Claimed | InProgress) => Completed,
        (TaskOp::Complete { passed: false }, Claimed | InProgress) => OutputPendingAssessment,
        (TaskOp::Fail { retry_left: true }, Claimed | InProgress) => Pending,
        (TaskOp::Fail { retry_left: false }, Claimed | InProgress) => Failed,
        (TaskOp::Retry, Failed | Cancelled | OutputPendingAssessment) => Pending,
        (TaskOp::RequestChanges, Completed | OutputPendingAssessment | Failed) => Pending,
        (TaskOp::Reassign, Pending | Claimed | InProgress | Failed) => Pending,
        (TaskOp::Skip, Pending | Failed | OutputPendingAssessment | Escalated) => Completed,
        (TaskOp::Escalate, Claimed | InProgress) => Escalated,
        (TaskOp::ResolveEscalation, Escalated) => Pending,
        (TaskOp::ApproveOutput, OutputPendingAssessment) => Completed,
        (TaskOp::Cancel, s) if s != Completed && s != Cancelled => Cancelled,
        (TaskOp::AgentLost { retry_left: true }, Claimed | InProgress) => Pending,
        (TaskOp::AgentLost { retry_left: false }, Claimed | InProgress) => Failed,
        (TaskOp::Timeout { retry_left: true }, Claimed | InProgress) => Pending,
        (TaskOp::Timeout { retry_left: false }, Claimed | InProgress) => Failed,
        _ => {
            return Err(Error::InvalidTransition {
                resource: "task",
                current: from.as_str().to_owned(),
                requested: op.nominal().as_str().to_owned(),
            });
        }
    };
    Ok(to)
}

#[cfg(test)]
mod tests {
    use super::*;
    use TaskState::*;

    #[test]
    fn table_of_decisions_4() {
        assert_eq!(transition(TaskOp::Claim, Pending).unwrap(), Claimed);
        assert!(transition(TaskOp::Claim, Claimed).is_err());
        assert_eq!(transition(TaskOp::Start, InProgress).unwrap(), InProgress);
        assert_eq!(
            transition(TaskOp::Complete { passed: false }, Claimed).unwrap(),
            OutputPendingAssessment
        );
        assert_eq!(
            transition(TaskOp::Fail { retry_left: true }, InProgress).unwrap(),
            Pending
        );
        assert!(transition(TaskOp::Cancel, Completed).is_err());
        assert_eq!(transition(TaskOp::Cancel, Failed).unwrap(), Cancelled);
        let Err(Error::InvalidTransition {
            current, requested, ..
        }) = transition(TaskOp::Complete { passed: true }, Pending)
        else {
            panic!("expected an invalid transition")
        };
        assert_eq!(
            (current.as_str(), requested.as_str()),
            ("pending", "completed")
        );
    }
}
