//! Who is acting on a task: credentials bound to an agent (or
//! a worker) act as that agent (or that worker's agents); unbound credentials
//! name the agent in the body.

use crate::caller::Caller;
use crate::error::{Error, Result};
use crate::tasks::rows::TaskRow;
use uuid::Uuid;

/// Who is acting on a task.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Acting {
    pub agent_id: Option<Uuid>,
    pub worker_id: Option<Uuid>,
}

impl Acting {
    /// Bound credentials act as their owner; a body naming someone else is 403.
    pub fn resolve(
        caller: &Caller,
        agent_id: Option<Uuid>,
        worker_id: Option<Uuid>,
    ) -> Result<Self> {
        match (caller.owner_type.as_str(), caller.owner_id) {
            ("agent", Some(owner)) => {
                if agent_id.is_some_and(|a| a != owner) {
                    return Err(Error::forbidden("this credential belongs to another agent"));
                }
                Ok(Self {
                    agent_id: Some(owner),
                    worker_id: None,
                })
            }
            ("worker", Some(owner)) => {
                if worker_id.is_some_and(|w| w != owner) {
                    return Err(Error::forbidden(
                        "this credential belongs to another worker",
                    ));
                }
                Ok(Self {
                    agent_id,
                    worker_id: Some(owner),
                })
            }
            _ => Ok(Self {
                agent_id,
                worker_id,
            }),
        }
    }

    /// Whether this actor holds `task`.
    pub fn holds(&self, task: &TaskRow) -> bool {
        (self.agent_id.is_some() && self.agent_id == task.assigned_agent_id)
            || (self.worker_id.is_some() && self.worker_id == task.assigned_worker_id)
    }
}
