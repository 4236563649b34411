//! A2A task ingress: an external agent submits a task, reads
//! its A2A status and follows its status changes. A submitted task is an
//! ordinary platform task; the A2A view is derived from it, never stored.

use crate::api::{
    A2aStatus, A2aTask, A2aTaskEvent, CreateTask, EventFilter, Priority, SubmitA2aTask, TASK_TYPES,
    Task, TaskState,
};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::EventKey;
use crate::store::on_db;
use serde_json::{Map, Value, json};
use uuid::Uuid;

/// The task `type` of a submission that names none.
/// The platform task type of an A2A submission that names none, or names
/// one outside the closed set (`TASK_TYPES`): like an unsupported priority, it
/// is normalised rather than refused, so an external agent is never turned
/// away for a word it cannot know.
const DEFAULT_TASK_TYPE: &str = "custom";

/// The event types that change what the A2A status says.
const STATUS_EVENTS: [&str; 2] = ["task.created", "task.state_changed"];

/// The platform task request for an A2A submission: the external id and the
/// caller's metadata go under `metadata.protocol_ingress`, a priority the
/// platform does not know becomes `normal`.
fn to_create_task(submission: SubmitA2aTask) -> Result<CreateTask> {
    let task = submission.task;
    let mut ingress = match task.metadata {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map,
        Some(_) => {
            return Err(Error::invalid_field(
                "task.metadata",
                "must be a JSON object",
            ));
        }
    };
    ingress.insert("protocol".into(), json!("a2a"));
    ingress.insert("external_task_id".into(), json!(task.id));
    let priority = task
        .priority
        .as_deref()
        .and_then(|p| Priority::parse(&p.trim().to_ascii_lowercase()))
        .unwrap_or(Priority::Normal);
    Ok(CreateTask {
        title: task.title,
        task_type: task
            .task_type
            .map(|t| t.trim().to_ascii_lowercase())
            .filter(|t| TASK_TYPES.contains(&t.as_str()))
            .unwrap_or_else(|| DEFAULT_TASK_TYPE.into()),
        description: task.description,
        priority: Some(priority),
        workflow_id: task.workflow_id,
        workspace_id: task.workspace_id,
        role: task.role,
        input: task.input,
        context: task.context,
        metadata: Some(json!({ "protocol_ingress": ingress })),
        request_id: submission.request_id,
        concurrency_key: task.concurrency_key,
        rate_limit_key: task.rate_limit_key,
        ..CreateTask::default()
    })
}

/// The A2A view of a platform task.
pub fn a2a_task(task: &Task) -> A2aTask {
    let result = match task.state {
        TaskState::Completed => task.output.clone(),
        TaskState::Failed => task.error.clone(),
        _ => None,
    };
    A2aTask {
        id: task.id,
        status: A2aStatus::of(task.state),
        title: task.title.clone(),
        created_at: task.created_at,
        updated_at: task.updated_at,
        result,
        metadata: json!({
            "protocol_ingress": task.metadata.get("protocol_ingress").cloned().unwrap_or(Value::Null),
            "task_id": task.id,
            "workflow_id": task.workflow_id,
            "workspace_id": task.workspace_id,
        }),
    }
}

/// The A2A status an event of a task announces, when it announces one.
fn event_status(event: &crate::api::Event) -> Option<A2aStatus> {
    if !STATUS_EVENTS.contains(&event.event_type.as_str()) {
        return None;
    }
    let state = event.data.get("to_state").and_then(Value::as_str)?;
    TaskState::parse(state).map(A2aStatus::of)
}

impl ControlPlane {
    /// `POST /a2a/tasks`: a pending platform task, answered in its A2A view
    /// (`submitted`). A `request_id` replays the first answer.
    pub async fn submit_a2a_task(
        &self,
        caller: &Caller,
        submission: SubmitA2aTask,
    ) -> Result<A2aTask> {
        let request = to_create_task(submission)?;
        let task = self.create_task(caller, request).await?;
        Ok(a2a_task(&task))
    }

    /// `GET /a2a/tasks/:id`: any task of the caller's tenant, in its A2A view.
    pub async fn get_a2a_task(&self, caller: &Caller, id: Uuid) -> Result<A2aTask> {
        Ok(a2a_task(&self.get_task(caller, id).await?))
    }

    /// Up to `limit` status events of task `id` after `from`, in the
    /// streams' read order. Every event of the task moves the position (so
    /// a follower does not read it again); only the status-changing ones
    /// carry an A2A event.
    pub async fn read_a2a_events(
        &self,
        caller: &Caller,
        id: Uuid,
        from: EventKey,
        limit: u32,
    ) -> Result<Vec<(EventKey, i64, Option<A2aTaskEvent>)>> {
        let filter = EventFilter {
            entity_type: Some("task".into()),
            entity_id: Some(id),
            ..EventFilter::default()
        };
        let events = self
            .read_events_forward(caller, &filter, from, limit)
            .await?;
        Ok(events
            .into_iter()
            .map(|(key, event)| {
                let frame = event_status(&event).map(|status| A2aTaskEvent {
                    task_id: id,
                    status,
                    created_at: event.created_at,
                });
                (key, event.id, frame)
            })
            .collect())
    }

    /// Whether a status stream of task `id` that has sent everything up to
    /// event `seen` has nothing more to send: the task is in a terminal A2A
    /// status and none of its status events is newer than `seen`.
    pub async fn a2a_stream_finished(&self, caller: &Caller, id: Uuid, seen: i64) -> Result<bool> {
        let task = self.get_a2a_task(caller, id).await?;
        if !task.status.is_terminal() {
            return Ok(false);
        }
        let mut conn = self.store().read().await?;
        let (newest,): (Option<i64>,) = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT MAX(id) FROM events WHERE tenant_id = $1 AND entity_type = 'task' \
             AND entity_id = $2 AND type IN ($3, $4)",
        )
        .bind(caller.tenant_id)
        .bind(id)
        .bind(STATUS_EVENTS[0])
        .bind(STATUS_EVENTS[1])
        .fetch_one(c)
        .await)?;
        Ok(newest.is_none_or(|n| n <= seen))
    }
}
