//! Agents: registration, heartbeats, reads.
//!
//! Routing tags are normalised on registration (trimmed, lower-cased,
//! deduplicated, sorted); orchestrator and hybrid agents get the
//! `orchestrator` tag. The stored status is `active` or `inactive` (set by
//! the liveness monitor after 2 x the heartbeat interval);
//! reads report `busy` for an active agent holding a claimed or in-progress
//! task. Registration issues an agent-scope key bound to the new agent
//! (shown once in `api_key`) unless the request says `issue_api_key: false`,
//! as the contract's other implementation and its SDK expect.

use crate::api::{
    Agent, AgentFilter, AgentProtocol, AgentTools, ExecutionMode, HeartbeatAck, Page, PageRequest,
    RegisterAgent, Scope,
};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::id_filter::IdMatch;
use crate::idempotency::{Storage, begin_write};
use crate::keys::{self, NewKey};
use crate::store::StoredJson;
use crate::store::{Access, Tx, on_db};
use crate::tags::normalise_tags;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sqlx::types::Json;
use uuid::Uuid;

/// Shortest heartbeat interval an agent or worker may register with, in
/// seconds: shorter ones would turn heartbeats into load.
pub const MIN_HEARTBEAT_SECONDS: i64 = 5;
/// Longest heartbeat interval, in seconds (one hour): past it a dead
/// registrant would go unnoticed too long.
pub const MAX_HEARTBEAT_SECONDS: i64 = 3600;
/// Heartbeat interval of an agent registered without one, in seconds.
pub const DEFAULT_AGENT_HEARTBEAT_SECONDS: i64 = 60;

#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct AgentRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub name: String,
    pub protocol: String,
    pub routing_tags: Json<Vec<String>>,
    pub execution_mode: String,
    pub status: String,
    pub worker_id: Option<Uuid>,
    pub heartbeat_interval_seconds: i32,
    pub tools: Json<AgentTools>,
    pub metadata: StoredJson,
    pub acp: Option<StoredJson>,
    pub profile: Option<StoredJson>,
    pub last_heartbeat_at: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub current_task_id: Option<Uuid>,
}

macro_rules! agent_columns {
    () => {
        "a.id, a.tenant_id, a.name, a.protocol, a.routing_tags, a.execution_mode, a.status, a.worker_id, \
         a.heartbeat_interval_seconds, a.tools, a.metadata, a.acp, a.profile, a.last_heartbeat_at, \
         a.created_at, a.updated_at, (SELECT t.id FROM tasks t WHERE t.assigned_agent_id = a.id \
         AND t.state IN ('claimed', 'in_progress') LIMIT 1) AS current_task_id"
    };
}

impl AgentRow {
    pub fn mode(&self) -> ExecutionMode {
        ExecutionMode::parse(&self.execution_mode).unwrap_or_default()
    }

    /// The status reads report.
    pub fn reported_status(&self) -> String {
        if self.status == "active" && self.current_task_id.is_some() {
            "busy".into()
        } else {
            self.status.clone()
        }
    }

    pub fn to_api(&self) -> Agent {
        Agent {
            id: self.id,
            name: self.name.clone(),
            protocol: if self.protocol == "acp" {
                AgentProtocol::Acp
            } else {
                AgentProtocol::Rest
            },
            routing_tags: self.routing_tags.0.clone(),
            execution_mode: self.mode(),
            status: self.reported_status(),
            worker_id: self.worker_id,
            heartbeat_interval_seconds: i64::from(self.heartbeat_interval_seconds),
            tools: self.tools.0.clone(),
            metadata: self.metadata.0.clone(),
            acp: self.acp.as_ref().map(|j| j.0.clone()),
            profile: self.profile.as_ref().map(|j| j.0.clone()),
            current_task_id: self.current_task_id,
            last_heartbeat_at: self.last_heartbeat_at.into(),
            created_at: self.created_at.into(),
            updated_at: self.updated_at.into(),
            api_key: None,
        }
    }
}

pub(crate) async fn find(
    access: &mut impl Access,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<Option<AgentRow>> {
    Ok(on_db!(access, c => sqlx::query_as(concat!(
        "SELECT ", agent_columns!(), " FROM agents a WHERE a.id = $1 AND a.tenant_id = $2"
    ))
    .bind(id)
    .bind(tenant_id)
    .fetch_optional(c)
    .await)?)
}

/// The agent without its current task (the claim path needs no more).
pub(crate) async fn find_lean(
    access: &mut impl Access,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<Option<AgentRow>> {
    macro_rules! lean {
        ($null:literal) => {
            concat!(
                "SELECT a.id, a.tenant_id, a.name, a.protocol, a.routing_tags, a.execution_mode, a.status, \
                 a.worker_id, a.heartbeat_interval_seconds, a.tools, a.metadata, a.acp, a.profile, \
                 a.last_heartbeat_at, a.created_at, a.updated_at, ",
                $null,
                " AS current_task_id FROM agents a WHERE a.id = $1 AND a.tenant_id = $2"
            )
        };
    }
    Ok(on_db!(access, c =>
        sqlite: sqlx::query_as(lean!("NULL")).bind(id).bind(tenant_id).fetch_optional(c).await,
        postgres: sqlx::query_as(lean!("NULL::uuid")).bind(id).bind(tenant_id).fetch_optional(c).await,
    )?)
}

pub(crate) fn validate_heartbeat(value: Option<i64>, default: i64) -> Result<i64> {
    let value = value.unwrap_or(default);
    if !(MIN_HEARTBEAT_SECONDS..=MAX_HEARTBEAT_SECONDS).contains(&value) {
        return Err(Error::invalid_field(
            "heartbeat_interval_seconds",
            "must be 5 to 3600",
        ));
    }
    Ok(value)
}

pub(crate) fn validate_name(name: &str) -> Result<()> {
    if name.trim().is_empty() || name.len() > 200 {
        return Err(Error::invalid_field("name", "must be 1 to 200 characters"));
    }
    Ok(())
}

/// The tags an agent registers with.
pub(crate) fn agent_tags(tags: Option<&Vec<String>>, mode: ExecutionMode) -> Vec<String> {
    let mut tags = normalise_tags(tags.into_iter().flatten());
    tags.retain(|t| t != "orchestrator");
    if mode.takes_orchestrator_tasks() {
        tags.push("orchestrator".into());
        tags.sort();
    }
    tags
}

/// What a new agent row holds.
pub(crate) struct NewAgent<'a> {
    pub name: &'a str,
    pub protocol: AgentProtocol,
    pub tags: Vec<String>,
    pub mode: ExecutionMode,
    pub worker_id: Option<Uuid>,
    pub heartbeat: i64,
    pub tools: AgentTools,
    pub metadata: Value,
    pub acp: Option<Value>,
    pub profile: Option<Value>,
}

/// Inserts an agent (with its event) and returns the row.
pub(crate) async fn insert(tx: &mut Tx, caller: &Caller, new: NewAgent<'_>) -> Result<AgentRow> {
    let id = Uuid::new_v4();
    let now = tx.now().as_datetime();
    let mut metadata = match new.metadata {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    metadata.insert("protocol".into(), json!(new.protocol.as_str()));
    metadata.insert("execution_mode".into(), json!(new.mode.as_str()));
    on_db!(tx, c => sqlx::query(
        "INSERT INTO agents (id, tenant_id, name, protocol, routing_tags, execution_mode, status, worker_id, \
         heartbeat_interval_seconds, tools, metadata, acp, profile, last_heartbeat_at, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, 'active', $7, $8, $9, $10, $11, $12, $13, $13, $13)",
    )
    .bind(id)
    .bind(caller.tenant_id)
    .bind(new.name.trim())
    .bind(new.protocol.as_str())
    .bind(Json(&new.tags))
    .bind(new.mode.as_str())
    .bind(new.worker_id)
    .bind(new.heartbeat as i32)
    .bind(Json(&new.tools))
    .bind(Json(Value::Object(metadata)))
    .bind(new.acp.map(Json))
    .bind(new.profile.map(Json))
    .bind(now)
    .execute(c).await.map(|r| r.rows_affected()))?;
    events::record(
        tx,
        caller,
        caller.tenant_id,
        NewEvent::new(
            "agent.registered",
            "agent",
            id,
            json!({ "agent_id": id, "name": new.name, "routing_tags": new.tags, "execution_mode": new.mode.as_str(), "worker_id": new.worker_id }),
        ),
    )
    .await?;
    find(tx, caller.tenant_id, id)
        .await?
        .ok_or(Error::not_found("agent"))
}

/// Issues an agent-scope key bound to `agent_id`.
pub(crate) async fn issue_key(
    tx: &mut Tx,
    tenant_id: Uuid,
    agent_id: Uuid,
    name: &str,
) -> Result<String> {
    let generated = keys::generate(Scope::Agent);
    let key_name = format!("agent {name}");
    keys::insert(
        tx,
        &NewKey {
            tenant_id,
            name: &key_name,
            scope: Scope::Agent,
            owner_type: "agent",
            owner_id: Some(agent_id),
            expires_at: None,
        },
        &generated,
    )
    .await?;
    Ok(generated.raw)
}

impl ControlPlane {
    /// `POST /agents/register`.
    pub async fn register_agent(&self, caller: &Caller, request: RegisterAgent) -> Result<Agent> {
        validate_name(&request.name)?;
        let heartbeat = validate_heartbeat(
            request.heartbeat_interval_seconds,
            DEFAULT_AGENT_HEARTBEAT_SECONDS,
        )?;
        if request.metadata.as_ref().is_some_and(|m| !m.is_object()) {
            return Err(Error::schema_field("metadata", "must be a JSON object"));
        }
        let mut write = begin_write!(self, caller, "agents.register", request, Storage::Encrypted);
        if let Some(worker_id) = request.worker_id {
            let found: Option<(Uuid,)> = on_db!(&mut write.tx, c => sqlx::query_as("SELECT id FROM workers WHERE id = $1 AND tenant_id = $2")
                .bind(worker_id).bind(caller.tenant_id).fetch_optional(c).await)?;
            if found.is_none() {
                return Err(Error::invalid_field("worker_id", "no such worker"));
            }
        }
        let mode = request.execution_mode.unwrap_or_default();
        let row = insert(
            &mut write.tx,
            caller,
            NewAgent {
                name: &request.name,
                protocol: request.protocol.unwrap_or_default(),
                tags: agent_tags(request.routing_tags.as_ref(), mode),
                mode,
                worker_id: request.worker_id,
                heartbeat,
                tools: request.tools.clone().unwrap_or_default(),
                metadata: request.metadata.clone().unwrap_or_else(|| json!({})),
                acp: request.acp.clone(),
                profile: request.profile.clone(),
            },
        )
        .await?;
        let mut agent = row.to_api();
        if request.issue_api_key != Some(false) {
            agent.api_key =
                Some(issue_key(&mut write.tx, caller.tenant_id, row.id, &row.name).await?);
        }
        write.finish(agent).await
    }

    /// `POST /agents/:id/heartbeat`: revives an inactive agent.
    pub async fn agent_heartbeat(&self, caller: &Caller, id: Uuid) -> Result<HeartbeatAck> {
        self.check_agent_access(caller, id).await?;
        let mut tx = self.store().begin().await?;
        let now = self.now().as_datetime();
        let revived = on_db!(&mut tx, c => sqlx::query(
            "UPDATE agents SET last_heartbeat_at = $1, updated_at = $1, status = 'active' WHERE id = $2 AND tenant_id = $3 AND status <> 'active'",
        )
        .bind(now).bind(id).bind(caller.tenant_id)
        .execute(c).await.map(|r| r.rows_affected()))?;
        if revived == 0 {
            on_db!(&mut tx, c => sqlx::query("UPDATE agents SET last_heartbeat_at = $1 WHERE id = $2 AND tenant_id = $3")
                .bind(now).bind(id).bind(caller.tenant_id)
                .execute(c).await.map(|r| r.rows_affected()))?;
        } else {
            events::record(
                &mut tx,
                caller,
                caller.tenant_id,
                NewEvent::new(
                    "agent.status_changed",
                    "agent",
                    id,
                    json!({ "agent_id": id, "status": "active" }),
                ),
            )
            .await?;
        }
        let row = find(&mut tx, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("agent"))?;
        tx.commit().await?;
        Ok(HeartbeatAck {
            ack: true,
            status: row.reported_status(),
        })
    }

    /// `GET /agents/:id`.
    pub async fn get_agent(&self, caller: &Caller, id: Uuid) -> Result<Agent> {
        let mut conn = self.store().read().await?;
        Ok(find(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("agent"))?
            .to_api())
    }

    /// `GET /agents`: newest first.
    pub async fn list_agents(&self, caller: &Caller, page: PageRequest) -> Result<Page<Agent>> {
        self.list_agents_matching(caller, AgentFilter::default(), page)
            .await
    }

    /// `GET /agents` with its filters: newest first.
    pub async fn list_agents_matching(
        &self,
        caller: &Caller,
        filter: AgentFilter,
        page: PageRequest,
    ) -> Result<Page<Agent>> {
        let ids = IdMatch::parse(filter.id_prefix.as_deref(), filter.id_suffix.as_deref())?;
        let mut conn = self.store().read().await?;
        let where_clause = format!(
            "a.tenant_id = $1 AND {} AND ($5 IS NULL OR LOWER(a.name) = LOWER($5))",
            ids.condition(self.store().dialect(), "a.id", "$2", "$3", "$4")
        );
        macro_rules! binds {
            ($q:expr) => {
                $q.bind(caller.tenant_id)
                    .bind(ids.low())
                    .bind(ids.high())
                    .bind(ids.suffix.as_deref())
                    .bind(filter.name.as_deref())
            };
        }
        let count = format!("SELECT COUNT(*) FROM agents a WHERE {where_clause}");
        let (total,): (i64,) = on_db!(&mut conn, c => binds!(sqlx::query_as(sqlx::AssertSqlSafe(count.as_str())))
            .fetch_one(c).await)?;
        let select = format!(
            concat!(
                "SELECT ",
                agent_columns!(),
                " FROM agents a WHERE {} ORDER BY a.created_at DESC, a.id DESC LIMIT $6 OFFSET $7"
            ),
            where_clause
        );
        let rows: Vec<AgentRow> = on_db!(&mut conn, c => binds!(sqlx::query_as(sqlx::AssertSqlSafe(select.as_str())))
        .bind(i64::from(page.per_page))
        .bind(page.offset() as i64)
        .fetch_all(c)
        .await)?;
        Ok(Page::new(
            rows.iter().map(AgentRow::to_api).collect(),
            total as u64,
            page,
        ))
    }

    /// A bound agent key may only touch its own agent; a bound worker key
    /// only its worker's agents.
    async fn check_agent_access(&self, caller: &Caller, id: Uuid) -> Result<()> {
        match (caller.owner_type.as_str(), caller.owner_id) {
            ("agent", Some(owner)) if owner != id => {
                Err(Error::forbidden("this credential belongs to another agent"))
            }
            ("worker", Some(owner)) => {
                let mut conn = self.store().read().await?;
                let agent = find(&mut conn, caller.tenant_id, id)
                    .await?
                    .ok_or(Error::not_found("agent"))?;
                if agent.worker_id != Some(owner) {
                    return Err(Error::forbidden(
                        "this agent does not belong to the calling worker",
                    ));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}
