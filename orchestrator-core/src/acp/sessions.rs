//! The session rows and `/acp/sessions`: create (or reuse), heartbeat,
//! close, list, read.

use crate::agents::AgentRow;
use crate::api::{
    AcpHeartbeat, AcpLiveStatus, AcpMode, AcpSession, AcpSessionFilter, AcpSessionStatus,
    AcpTransport, CreateAcpSession, Page, PageRequest,
};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::store::StoredJson;
use crate::store::{Access, Tx, on_db};
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use sqlx::types::Json;
use std::sync::Arc;
use uuid::Uuid;

/// Longest `workspace_path`.
const MAX_WORKSPACE_PATH: usize = 4096;

#[derive(sqlx::FromRow, Clone)]
pub(crate) struct SessionRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub agent_id: Uuid,
    pub worker_id: Option<Uuid>,
    pub workflow_id: Option<Uuid>,
    pub task_id: Option<Uuid>,
    pub transport: String,
    pub mode: String,
    pub status: String,
    pub workspace_path: Option<String>,
    pub metadata: StoredJson,
    pub last_heartbeat_at: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

macro_rules! session_columns {
    () => {
        "id, tenant_id, agent_id, worker_id, workflow_id, task_id, transport, mode, status, \
         workspace_path, metadata, last_heartbeat_at, created_at, updated_at"
    };
}

impl SessionRow {
    pub fn status(&self) -> AcpSessionStatus {
        AcpSessionStatus::parse(&self.status).unwrap_or(AcpSessionStatus::Closed)
    }

    pub fn to_api(&self, reused: bool) -> AcpSession {
        AcpSession {
            id: self.id,
            agent_id: self.agent_id,
            worker_id: self.worker_id,
            workflow_id: self.workflow_id,
            task_id: self.task_id,
            transport: AcpTransport::parse(&self.transport).unwrap_or_default(),
            mode: AcpMode::parse(&self.mode).unwrap_or_default(),
            status: self.status(),
            workspace_path: self.workspace_path.clone(),
            metadata: self.metadata.0.clone(),
            last_heartbeat_at: self.last_heartbeat_at.into(),
            created_at: self.created_at.into(),
            updated_at: self.updated_at.into(),
            reused,
        }
    }
}

/// What a new session is opened with.
pub(crate) struct NewSession {
    pub worker_id: Option<Uuid>,
    pub workflow_id: Option<Uuid>,
    pub task_id: Option<Uuid>,
    pub transport: AcpTransport,
    pub mode: AcpMode,
    pub workspace_path: Option<String>,
    pub metadata: Option<Value>,
}

fn validate(workspace_path: Option<&String>, metadata: Option<&Value>) -> Result<()> {
    if workspace_path.is_some_and(|p| p.trim().is_empty() || p.len() > MAX_WORKSPACE_PATH) {
        return Err(Error::invalid_field(
            "workspace_path",
            format!("must be 1 to {MAX_WORKSPACE_PATH} characters"),
        ));
    }
    if metadata.is_some_and(|m| !m.is_object()) {
        return Err(Error::invalid_field("metadata", "must be a JSON object"));
    }
    Ok(())
}

/// The key that makes one open `session`-mode session per agent and
/// workflow (unique in the table; cleared when the session closes).
fn reuse_key(agent_id: Uuid, workflow_id: Option<Uuid>) -> String {
    match workflow_id {
        Some(w) => format!("{agent_id}:{w}"),
        None => format!("{agent_id}:-"),
    }
}

async fn find_by_reuse_key(tx: &mut Tx, key: &str) -> Result<Option<SessionRow>> {
    Ok(on_db!(tx, c => sqlx::query_as(concat!(
        "SELECT ", session_columns!(), " FROM acp_sessions WHERE reuse_key = $1"
    ))
    .bind(key)
    .fetch_optional(c)
    .await)?)
}

async fn find(access: &mut impl Access, tenant_id: Uuid, id: Uuid) -> Result<SessionRow> {
    let row: Option<SessionRow> = on_db!(access, c => sqlx::query_as(concat!(
        "SELECT ", session_columns!(), " FROM acp_sessions WHERE id = $1 AND tenant_id = $2"
    ))
    .bind(id)
    .bind(tenant_id)
    .fetch_optional(c)
    .await)?;
    row.ok_or(Error::not_found("ACP session"))
}

/// Opens a session for `agent` in `tx`, or (mode `session`) returns the
/// open one of the same agent and workflow: `(row, reused)`. Concurrent
/// opens of the same reusable session agree on one row (the unique
/// `reuse_key`).
pub(crate) async fn open(
    tx: &mut Tx,
    caller: &Caller,
    agent: &AgentRow,
    new: NewSession,
) -> Result<(SessionRow, bool)> {
    validate(new.workspace_path.as_ref(), new.metadata.as_ref())?;
    let key = (new.mode == AcpMode::Session).then(|| reuse_key(agent.id, new.workflow_id));
    let now = tx.now().as_datetime();
    if let Some(key) = &key
        && let Some(row) = find_by_reuse_key(tx, key).await?
    {
        return Ok((reuse(tx, row, new.task_id, now).await?, true));
    }
    let mut metadata = match new.metadata {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    metadata.insert("protocol".into(), json!("acp"));
    metadata.insert(
        "capabilities".into(),
        agent.acp.as_ref().map_or(Value::Null, |a| a.0.clone()),
    );
    let inserted: Option<SessionRow> = on_db!(tx, c => sqlx::query_as(concat!(
        "INSERT INTO acp_sessions (id, tenant_id, agent_id, worker_id, workflow_id, task_id, transport, \
         mode, status, workspace_path, metadata, reuse_key, last_heartbeat_at, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'initializing', $9, $10, $11, $12, $12, $12) \
         ON CONFLICT (reuse_key) DO NOTHING RETURNING ", session_columns!()
    ))
    .bind(Uuid::new_v4())
    .bind(agent.tenant_id)
    .bind(agent.id)
    .bind(new.worker_id.or(agent.worker_id))
    .bind(new.workflow_id)
    .bind(new.task_id)
    .bind(new.transport.as_str())
    .bind(new.mode.as_str())
    .bind(new.workspace_path.as_deref().map(str::trim))
    .bind(Json(Value::Object(metadata)))
    .bind(&key)
    .bind(now)
    .fetch_optional(c)
    .await)?;
    let Some(row) = inserted else {
        // Another open of the same reusable session committed first.
        let key = key.as_deref().unwrap_or_default();
        let row = find_by_reuse_key(tx, key)
            .await?
            .ok_or_else(|| Error::conflict("the reusable ACP session closed meanwhile; retry"))?;
        return Ok((reuse(tx, row, new.task_id, now).await?, true));
    };
    let mut event = NewEvent::new(
        "acp_session.created",
        "acp_session",
        row.id,
        json!({
            "session_id": row.id, "agent_id": row.agent_id, "task_id": row.task_id,
            "transport": row.transport, "mode": row.mode,
        }),
    );
    event.workflow_id = row.workflow_id;
    events::record(tx, caller, row.tenant_id, event).await?;
    Ok((row, false))
}

/// A reused session takes the new task (when there is one).
async fn reuse(
    tx: &mut Tx,
    row: SessionRow,
    task_id: Option<Uuid>,
    now: DateTime<Utc>,
) -> Result<SessionRow> {
    if task_id.is_none() {
        return Ok(row);
    }
    Ok(on_db!(tx, c => sqlx::query_as(concat!(
        "UPDATE acp_sessions SET task_id = $1, updated_at = $2 WHERE id = $3 RETURNING ",
        session_columns!()
    ))
    .bind(task_id)
    .bind(now)
    .bind(row.id)
    .fetch_one(c)
    .await)?)
}

impl ControlPlane {
    /// The agent of an ACP operation, checked against the credential and
    /// required to be registered with protocol `acp` (400 otherwise).
    pub(crate) async fn acp_agent(
        &self,
        caller: &Caller,
        agent_id: Uuid,
        worker_id: Option<Uuid>,
    ) -> Result<Arc<AgentRow>> {
        let agent = self.acting_agent(caller, agent_id, worker_id).await?;
        if agent.protocol != "acp" {
            return Err(Error::validation(format!(
                "agent {agent_id} is registered with protocol `{}`, not `acp`; \
                 register an agent with protocol acp to use ACP sessions",
                agent.protocol
            )));
        }
        Ok(agent)
    }

    /// `POST /acp/sessions`: a new `initializing` session, or (mode
    /// `session`) the newest open one of the same agent and workflow with
    /// `reused: true`.
    pub async fn create_acp_session(
        &self,
        caller: &Caller,
        request: CreateAcpSession,
    ) -> Result<AcpSession> {
        validate(request.workspace_path.as_ref(), request.metadata.as_ref())?;
        let agent = self
            .acp_agent(caller, request.agent_id, request.worker_id)
            .await?;
        let mut tx = self.store().begin().await?;
        if let Some(workflow_id) = request.workflow_id {
            let found: Option<(Uuid,)> = on_db!(&mut tx, c => sqlx::query_as(
                "SELECT id FROM workflows WHERE id = $1 AND tenant_id = $2",
            )
            .bind(workflow_id)
            .bind(caller.tenant_id)
            .fetch_optional(c)
            .await)?;
            if found.is_none() {
                return Err(Error::invalid_field("workflow_id", "no such workflow"));
            }
        }
        let (row, reused) = open(
            &mut tx,
            caller,
            &agent,
            NewSession {
                worker_id: request.worker_id,
                workflow_id: request.workflow_id,
                task_id: None,
                transport: request.transport,
                mode: request.mode,
                workspace_path: request.workspace_path,
                metadata: request.metadata,
            },
        )
        .await?;
        tx.commit().await?;
        Ok(row.to_api(reused))
    }

    /// A session the caller may act on (its agent's credential, its
    /// worker's, or an unbound key of the tenant).
    async fn own_session(&self, caller: &Caller, tx: &mut Tx, id: Uuid) -> Result<SessionRow> {
        let row = find(tx, caller.tenant_id, id).await?;
        crate::tasks::acting::Acting::resolve(caller, Some(row.agent_id), None)?;
        if caller.owner_type == "worker"
            && caller.owner_id.is_some()
            && row.worker_id != caller.owner_id
        {
            return Err(Error::forbidden("this session belongs to another worker"));
        }
        Ok(row)
    }

    /// `POST /acp/sessions/:id/heartbeat`: `active` (default) or `idle`,
    /// and the liveness time; a closed session is 409.
    pub async fn heartbeat_acp_session(
        &self,
        caller: &Caller,
        id: Uuid,
        request: AcpHeartbeat,
    ) -> Result<AcpSession> {
        let mut tx = self.store().begin().await?;
        let row = self.own_session(caller, &mut tx, id).await?;
        let status = match request.status.unwrap_or(AcpLiveStatus::Active) {
            AcpLiveStatus::Active => AcpSessionStatus::Active,
            AcpLiveStatus::Idle => AcpSessionStatus::Idle,
        };
        let now = self.now().as_datetime();
        let updated: Option<SessionRow> = on_db!(&mut tx, c => sqlx::query_as(concat!(
            "UPDATE acp_sessions SET status = $1, last_heartbeat_at = $2, updated_at = $2 \
             WHERE id = $3 AND status <> 'closed' RETURNING ", session_columns!()
        ))
        .bind(status.as_str())
        .bind(now)
        .bind(row.id)
        .fetch_optional(c)
        .await)?;
        let Some(updated) = updated else {
            return Err(Error::conflict("the ACP session is closed"));
        };
        tx.commit().await?;
        Ok(updated.to_api(false))
    }

    /// `POST /acp/sessions/:id/close`: closed (a repeat answers the same).
    pub async fn close_acp_session(&self, caller: &Caller, id: Uuid) -> Result<AcpSession> {
        let mut tx = self.store().begin().await?;
        let row = self.own_session(caller, &mut tx, id).await?;
        if row.status() == AcpSessionStatus::Closed {
            return Ok(row.to_api(false));
        }
        let now = self.now().as_datetime();
        let closed: SessionRow = on_db!(&mut tx, c => sqlx::query_as(concat!(
            "UPDATE acp_sessions SET status = 'closed', reuse_key = NULL, updated_at = $1 \
             WHERE id = $2 RETURNING ", session_columns!()
        ))
        .bind(now)
        .bind(row.id)
        .fetch_one(c)
        .await)?;
        let mut event = NewEvent::new(
            "acp_session.closed",
            "acp_session",
            closed.id,
            json!({ "session_id": closed.id, "agent_id": closed.agent_id }),
        );
        event.workflow_id = closed.workflow_id;
        events::record(&mut tx, caller, closed.tenant_id, event).await?;
        tx.commit().await?;
        Ok(closed.to_api(false))
    }

    /// `GET /acp/sessions/:id`.
    pub async fn get_acp_session(&self, caller: &Caller, id: Uuid) -> Result<AcpSession> {
        let mut conn = self.store().read().await?;
        let row = find(&mut conn, caller.tenant_id, id).await?;
        Ok(row.to_api(false))
    }

    /// `GET /acp/sessions`: newest first; an agent's own key sees its own.
    pub async fn list_acp_sessions(
        &self,
        caller: &Caller,
        filter: AcpSessionFilter,
        page: PageRequest,
    ) -> Result<Page<AcpSession>> {
        let agent_id = match (caller.owner_type.as_str(), caller.owner_id) {
            ("agent", Some(owner)) => {
                if filter.agent_id.is_some_and(|a| a != owner) {
                    return Err(Error::forbidden("this credential belongs to another agent"));
                }
                Some(owner)
            }
            _ => filter.agent_id,
        };
        let status = filter.status.map(|s| s.as_str());
        let mut conn = self.store().read().await?;
        macro_rules! binds {
            ($q:expr) => {
                $q.bind(caller.tenant_id)
                    .bind(agent_id)
                    .bind(filter.workflow_id)
                    .bind(status)
            };
        }
        macro_rules! filtered {
            ($head:expr, $tail:expr) => {
                concat!(
                    $head,
                    " FROM acp_sessions WHERE tenant_id = $1 AND ($2 IS NULL OR agent_id = $2) \
                     AND ($3 IS NULL OR workflow_id = $3) AND ($4 IS NULL OR status = $4)",
                    $tail
                )
            };
        }
        let (total,): (i64,) = on_db!(&mut conn, c =>
            binds!(sqlx::query_as(filtered!("SELECT COUNT(*)", ""))).fetch_one(c).await)?;
        let rows: Vec<SessionRow> = on_db!(&mut conn, c => binds!(sqlx::query_as(filtered!(
            concat!("SELECT ", session_columns!()),
            " ORDER BY created_at DESC, id DESC LIMIT $5 OFFSET $6"
        )))
        .bind(i64::from(page.per_page))
        .bind(page.offset() as i64)
        .fetch_all(c)
        .await)?;
        Ok(Page::new(
            rows.iter().map(|r| r.to_api(false)).collect(),
            total as u64,
            page,
        ))
    }
}
