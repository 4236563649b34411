//! Claim credentials: a claimed task lists opaque handles
//! for the secrets its runtime needs (the tenant's LLM key and extra
//! headers, and one per remote MCP server enabled for the agent); its
//! current assignee trades them for the values with
//! `POST /tasks/:id/claim-credentials`.
//!
//! A handle is `claim:v1:` and an AES-256-GCM box (the deployment's key,
//! [`crate::secrets`]) whose associated data names the task and the kind,
//! so a handle only opens for the task and the request field it was issued
//! for. Inside: the claim it belongs to (`claimed_at`), so a handle from an
//! earlier claim of the same task is stale. The box holds no secret: the
//! values are read from their sealed rows at resolution.

use crate::api::{ClaimCredentials, LogCategory, LogStatus, Task};
use crate::caller::Caller;
use crate::claim_cache::{CredentialInputs, LlmHandles};
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::logs::{self, PlatformLog};
use crate::remote_mcp::enabled_servers;
use crate::settings::stored_llm;
use crate::tasks::acting::Acting;
use crate::tasks::rows::{TaskRow, find};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use uuid::Uuid;

/// What every handle starts with.
const HANDLE_PREFIX: &str = "claim:v1:";

/// The secret a handle stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    LlmApiKey,
    LlmExtraHeaders,
    McpServer,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Self::LlmApiKey => "llm_api_key",
            Self::LlmExtraHeaders => "llm_extra_headers",
            Self::McpServer => "mcp_server",
        }
    }
}

/// The sealed content of a handle.
#[derive(Serialize, Deserialize)]
struct Sealed {
    /// The claim the handle was issued for (`claimed_at` of the task).
    claim: String,
    /// The remote MCP server an `mcp_server` handle stands for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    server: Option<Uuid>,
}

fn associated_data(task_id: Uuid, kind: Kind) -> String {
    format!("{HANDLE_PREFIX}{task_id}:{}", kind.as_str())
}

/// The claim a task is in: its `claimed_at`, as text.
fn claim_of(claimed_at: Option<String>) -> String {
    claimed_at.unwrap_or_default()
}

impl ControlPlane {
    fn handle(
        &self,
        task_id: Uuid,
        kind: Kind,
        claim: &str,
        server: Option<Uuid>,
    ) -> Result<String> {
        let sealed = serde_json::to_vec(&Sealed {
            claim: claim.to_owned(),
            server,
        })?;
        let boxed = self
            .secrets()
            .encrypt(&sealed, associated_data(task_id, kind).as_bytes());
        Ok(format!("{HANDLE_PREFIX}{boxed}"))
    }

    /// Opens `handle` for `task` as `kind`: `false` when it is foreign (not
    /// issued for this task and kind) or stale (an earlier claim).
    fn opens(&self, handle: &str, row: &TaskRow, kind: Kind) -> bool {
        self.open_handle(handle, row, kind).is_some()
    }

    /// The content of `handle` when it opens for `task` as `kind` and
    /// belongs to the task's current claim.
    fn open_handle(&self, handle: &str, row: &TaskRow, kind: Kind) -> Option<Sealed> {
        let boxed = handle.strip_prefix(HANDLE_PREFIX)?;
        let bytes = self
            .secrets()
            .decrypt(boxed, associated_data(row.id, kind).as_bytes())
            .ok()?;
        serde_json::from_slice::<Sealed>(&bytes).ok().filter(|s| {
            s.claim
                == claim_of(
                    row.claimed_at
                        .map(|t| crate::api::Timestamp::from(t).to_string()),
                )
        })
    }

    /// The `credentials` of a claimed task: one handle per secret the
    /// tenant has configured (`[]` when none), and one per remote MCP server
    /// enabled by default since before the assignee registered. Made from
    /// [`crate::claim_cache`], so a claim usually reads nothing here.
    pub(crate) async fn task_credentials(
        &self,
        caller: &Caller,
        task: &Task,
    ) -> Result<Vec<Value>> {
        let inputs = self.credential_inputs(caller.tenant_id).await?;
        let claim = claim_of(task.claimed_at.map(|t| t.to_string()));
        let mut out = Vec::new();
        let llm = inputs.llm.as_ref();
        if let Some(llm) = llm.filter(|l| l.api_key) {
            out.push(json!({
                "kind": Kind::LlmApiKey.as_str(),
                "handle": self.handle(task.id, Kind::LlmApiKey, &claim, None)?,
                "provider": llm.provider,
            }));
        }
        if llm.is_some_and(|l| l.extra_headers) {
            out.push(json!({
                "kind": Kind::LlmExtraHeaders.as_str(),
                "handle": self.handle(task.id, Kind::LlmExtraHeaders, &claim, None)?,
            }));
        }
        let registered_at = match task.assigned_agent_id {
            Some(agent_id) if !inputs.servers.is_empty() => {
                match self.registered_agent(caller.tenant_id, agent_id).await {
                    Ok(agent) => Some(agent.created_at),
                    Err(Error::NotFound { .. }) => None,
                    Err(e) => return Err(e),
                }
            }
            _ => None,
        };
        let enabled = inputs
            .servers
            .iter()
            .filter(|s| registered_at.is_some_and(|at| s.enabled_since.is_some_and(|e| e <= at)));
        for server in enabled {
            out.push(json!({
                "kind": Kind::McpServer.as_str(),
                "handle": self.handle(task.id, Kind::McpServer, &claim, Some(server.id))?,
                "server_id": server.id,
                "name": server.name,
            }));
        }
        Ok(out)
    }

    /// The tenant's LLM settings and default-enabled remote MCP servers, from
    /// the claim cache or (then cached) one read connection.
    async fn credential_inputs(&self, tenant_id: Uuid) -> Result<Arc<CredentialInputs>> {
        let generation = match self.claim_cache().inputs(tenant_id) {
            Ok(inputs) => return Ok(inputs),
            Err(generation) => generation,
        };
        let mut conn = self.store().read().await?;
        let llm = stored_llm(&mut conn, tenant_id)
            .await?
            .map(|llm| LlmHandles {
                api_key: llm.has_api_key(),
                extra_headers: llm.has_extra_headers(),
                provider: llm.provider,
            });
        let servers = enabled_servers(&mut conn, tenant_id).await?;
        drop(conn);
        Ok(self
            .claim_cache()
            .put_inputs(tenant_id, generation, CredentialInputs { llm, servers }))
    }

    /// `POST /tasks/:id/claim-credentials`: no handle 400;
    /// not the task's assignee 403; the task no longer held 409; a handle
    /// not issued for this task and field, or for an earlier claim, 404.
    /// Answers `{llm_api_key?, llm_extra_headers?, mcp_claim_values}` and
    /// writes an `auth` log row naming the kinds (never the values).
    pub async fn claim_credentials(
        &self,
        caller: &Caller,
        id: Uuid,
        request: ClaimCredentials,
    ) -> Result<Value> {
        let mut asked: Vec<(&String, Kind)> = Vec::new();
        asked.extend(
            request
                .llm_api_key_claim_handle
                .iter()
                .map(|h| (h, Kind::LlmApiKey)),
        );
        asked.extend(
            request
                .llm_extra_headers_claim_handle
                .iter()
                .map(|h| (h, Kind::LlmExtraHeaders)),
        );
        let mcp = request.mcp_claim_handles.clone().unwrap_or_default();
        if asked.is_empty() && mcp.is_empty() {
            return Err(Error::validation(
                "claim-credentials needs at least one handle",
            ));
        }
        let mut conn = self.store().read().await?;
        let row = find(&mut conn, caller.tenant_id, id)
            .await?
            .ok_or(Error::not_found("task"))?;
        let acting = Acting::resolve(caller, None, None)?;
        if !acting.holds(&row) {
            return Err(Error::forbidden(
                "only the task's current assignee may resolve its credentials",
            ));
        }
        if !row.state()?.is_held() {
            return Err(Error::conflict(format!(
                "the task is {}, no longer held; its credentials are gone",
                row.state()?
            )));
        }
        if let Some(bad) = asked
            .iter()
            .map(|(h, _)| *h)
            .chain(mcp.iter())
            .find(|h| !h.starts_with(HANDLE_PREFIX))
        {
            return Err(Error::invalid_field(
                "handle",
                format!("`{bad}` is not a claim handle"),
            ));
        }
        if asked.iter().any(|(h, kind)| !self.opens(h, &row, *kind)) {
            return Err(Error::not_found("claim handle"));
        }
        let mut servers = Vec::with_capacity(mcp.len());
        for handle in &mcp {
            let server = self
                .open_handle(handle, &row, Kind::McpServer)
                .and_then(|sealed| sealed.server)
                .ok_or(Error::not_found("claim handle"))?;
            servers.push((handle.clone(), server));
        }
        let llm = stored_llm(&mut conn, caller.tenant_id).await?;
        drop(conn);
        let mut out = serde_json::Map::new();
        for (_, kind) in &asked {
            let value = match (kind, &llm) {
                (Kind::LlmApiKey, Some(llm)) => llm.api_key(self.secrets())?.map(Value::String),
                (Kind::LlmExtraHeaders, Some(llm)) if llm.has_extra_headers() => {
                    Some(json!(llm.extra_headers(self.secrets())?))
                }
                _ => None,
            };
            // The setting was removed since the claim: the handle is stale.
            let value = value.ok_or(Error::not_found("claim handle"))?;
            out.insert(kind.as_str().into(), value);
        }
        let mut mcp_values = serde_json::Map::new();
        for (handle, server) in servers {
            // The server was removed (or no longer enabled): stale.
            let value = self
                .mcp_claim_values(caller.tenant_id, server)
                .await?
                .ok_or(Error::not_found("claim handle"))?;
            mcp_values.insert(handle, value);
        }
        out.insert("mcp_claim_values".into(), Value::Object(mcp_values));
        let mut kinds: Vec<&str> = asked.iter().map(|(_, k)| k.as_str()).collect();
        kinds.extend(mcp.iter().map(|_| Kind::McpServer.as_str()));
        self.log_resolution(caller, &row, &kinds).await?;
        Ok(Value::Object(out))
    }

    /// The `auth` log row of a resolution: who, which task, which kinds.
    async fn log_resolution(&self, caller: &Caller, row: &TaskRow, kinds: &[&str]) -> Result<()> {
        let mut tx = self.store().begin().await?;
        let mut log = PlatformLog::new(
            LogCategory::Auth,
            "task.claim_credentials",
            LogStatus::Completed,
        );
        log.payload = json!({ "kinds": kinds, "agent_id": row.assigned_agent_id });
        log.task_id = Some(row.id);
        log.workflow_id = row.workflow_id;
        log.workspace_id = row.workspace_id;
        log.resource_type = Some("task");
        log.resource_id = Some(row.id.to_string());
        logs::write_platform_log(&mut tx, caller, row.tenant_id, log).await?;
        tx.commit().await
    }
}
