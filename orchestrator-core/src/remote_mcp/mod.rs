//! Remote MCP servers (admin): create and replace verify the
//! server with the official MCP SDK before storing anything; reverify
//! records the outcome on the stored server. Secret parameter values are
//! sealed at rest and read back masked; the only way out in clear is claim
//! credentials, to the assignee of a claimed task ([`crate::tasks`] asks
//! `ControlPlane::mcp_claim_values`).
//!
//! Every write records a `remote_mcp_server.*` event (`created`, `updated`,
//! `verified`, `deleted`) naming the server, never a parameter value.

mod fields;
mod oauth;
mod oauth_flow;
mod rows;
pub(crate) use rows::enabled_servers;
mod sse_compat;
mod verify;

use crate::api::{
    McpAuthMode, McpParameter, Page, PageRequest, RemoteMcpServer, RemoteMcpServerRequest,
    TransportPreference, VerificationStatus,
};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::store::{Tx, on_db};
use chrono::{DateTime, Utc};
use fields::{Checked, open_parameters, scrub, target};
use rows::{
    ServerRow, delete_row, name_conflict, name_taken, require_server, save_row, server_columns,
};
use serde_json::{Value, json};
use sqlx::types::Json;
use uuid::Uuid;
use verify::{Failure, Verified};

async fn record_event(
    tx: &mut Tx,
    caller: &Caller,
    event_type: &'static str,
    row: &ServerRow,
    extra: Value,
) -> Result<()> {
    let mut data = json!({
        "name": row.name,
        "endpoint_url": row.endpoint_url,
        "verification_status": row.verification_status,
        "resolved_transport": row.resolved_transport,
    });
    if let (Some(data), Value::Object(extra)) = (data.as_object_mut(), extra) {
        data.extend(extra);
    }
    events::record(
        tx,
        caller,
        caller.tenant_id,
        NewEvent::new(event_type, "remote_mcp_server", row.id, data),
    )
    .await?;
    Ok(())
}

fn verification_failed(failure: &Failure, preference: TransportPreference) -> Error {
    Error::VerificationFailed {
        message: format!(
            "the remote MCP server could not be verified at step {}: {}",
            failure.step, failure.reason
        ),
        details: json!({
            "failed_step": failure.step,
            "reason": failure.reason,
            "transport_preference": preference.as_str(),
        }),
    }
}

/// `enabled_since` after a write: kept while the flag stays on, now when it
/// is turned on, none when off.
fn enabled_since(
    enabled: bool,
    stored: Option<&ServerRow>,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    match (enabled, stored) {
        (false, _) => None,
        (true, Some(row)) if row.enabled_by_default => row.enabled_since.or(Some(now)),
        (true, _) => Some(now),
    }
}

/// Whether a write keeps the server's OAuth tokens: it stays `oauth` on
/// the same endpoint.
fn keeps_oauth(stored: Option<&ServerRow>, checked: &Checked) -> bool {
    checked.auth_mode == McpAuthMode::Oauth
        && stored.is_some_and(|row| {
            row.auth_mode == McpAuthMode::Oauth.as_str()
                && row.endpoint_url == checked.endpoint.as_str()
        })
}

/// `row` with the outcome of a successful verification.
fn with_verified(mut row: ServerRow, verified: Option<Verified>, now: DateTime<Utc>) -> ServerRow {
    if let Some(verified) = verified {
        row.verification_status = VerificationStatus::Verified.as_str().into();
        row.verification_error = None;
        row.verification_failed_step = None;
        row.resolved_transport = Some(verified.transport.as_str().into());
        row.capabilities = Json(verified.capabilities);
        row.verified_at = Some(now);
    }
    row
}

impl ControlPlane {
    /// Checks a body, refuses private endpoints (unless allowed), and
    /// verifies the server; nothing is written.
    async fn check_and_verify(
        &self,
        caller: &Caller,
        id: Uuid,
        request: &RemoteMcpServerRequest,
        stored: Option<&ServerRow>,
    ) -> Result<(Checked, Option<Verified>)> {
        let checked = fields::check(self.secrets(), caller.tenant_id, id, request, stored)?;
        if !self.config().allow_private_network {
            let host = checked.endpoint.host_str().unwrap_or_default().to_owned();
            crate::git::check_public_host("endpointUrl", &host).await?;
        }
        {
            let mut conn = self.store().read().await?;
            if name_taken(&mut conn, caller.tenant_id, &checked.name, Some(id)).await? {
                return Err(name_conflict(&checked.name));
            }
        }
        let clear = open_parameters(self.secrets(), caller.tenant_id, id, &checked.sealed)?;
        let preference = request.transport_preference.unwrap_or_default();
        let mut reached = target(
            checked.endpoint.clone(),
            &clear,
            checked.call_timeout_seconds,
        );
        if checked.auth_mode == McpAuthMode::Oauth {
            // Verified with the bearer token once connected; before that
            // (or after the endpoint changed) the server is stored
            // unverified.
            if !keeps_oauth(stored, &checked) {
                return Ok((checked, None));
            }
            match self.oauth_bearer(caller.tenant_id, id).await? {
                Some(token) => reached.bearer = Some(token),
                None => return Ok((checked, None)),
            }
        }
        match verify::verify(&reached, preference).await {
            Ok(verified) => Ok((checked, Some(verified))),
            Err(failure) => {
                let failure = Failure {
                    reason: scrub(&failure.reason, &clear),
                    ..failure
                };
                Err(verification_failed(&failure, preference))
            }
        }
    }

    /// `POST /remote-mcp-servers`: verified, then stored (`201`); a failed
    /// verification is `400 VERIFICATION_FAILED` and stores nothing.
    pub async fn create_remote_mcp_server(
        &self,
        caller: &Caller,
        request: RemoteMcpServerRequest,
    ) -> Result<RemoteMcpServer> {
        let id = Uuid::new_v4();
        let (checked, verified) = self.check_and_verify(caller, id, &request, None).await?;
        let now = self.now().as_datetime();
        let enabled = request
            .enabled_by_default_for_new_specialists
            .unwrap_or(false);
        let row = ServerRow {
            id,
            tenant_id: caller.tenant_id,
            name: checked.name,
            description: checked.description,
            endpoint_url: checked.endpoint.to_string(),
            transport_preference: request
                .transport_preference
                .unwrap_or_default()
                .as_str()
                .into(),
            call_timeout_seconds: checked.call_timeout_seconds,
            auth_mode: checked.auth_mode.as_str().into(),
            enabled_by_default: enabled,
            enabled_since: enabled_since(enabled, None, now),
            oauth_status: if checked.auth_mode == McpAuthMode::Oauth {
                oauth::DISCONNECTED
            } else {
                oauth::NOT_APPLICABLE
            }
            .into(),
            parameters: Json(checked.sealed),
            verification_status: VerificationStatus::Unverified.as_str().into(),
            verification_error: None,
            verification_failed_step: None,
            resolved_transport: None,
            capabilities: Json(Default::default()),
            verified_at: None,
            created_at: now,
            updated_at: now,
        };
        let row = with_verified(row, verified, now);
        let mut tx = self.store().begin().await?;
        let row = save_row(&mut tx, &row, true).await?;
        record_event(
            &mut tx,
            caller,
            "remote_mcp_server.created",
            &row,
            json!({}),
        )
        .await?;
        tx.commit().await?;
        self.claim_cache().forget_inputs(caller.tenant_id);
        Ok(row.to_api())
    }

    /// `GET /remote-mcp-servers`: newest first.
    pub async fn list_remote_mcp_servers(
        &self,
        caller: &Caller,
        page: PageRequest,
    ) -> Result<Page<RemoteMcpServer>> {
        let mut conn = self.store().read().await?;
        let (total,): (i64,) = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT COUNT(*) FROM remote_mcp_servers WHERE tenant_id = $1",
        )
        .bind(caller.tenant_id)
        .fetch_one(c)
        .await)?;
        let rows: Vec<ServerRow> = on_db!(&mut conn, c => sqlx::query_as(concat!(
            "SELECT ", server_columns!(), " FROM remote_mcp_servers WHERE tenant_id = $1 \
             ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3"
        ))
        .bind(caller.tenant_id)
        .bind(i64::from(page.per_page))
        .bind(page.offset() as i64)
        .fetch_all(c)
        .await)?;
        let items = rows.iter().map(ServerRow::to_api).collect();
        Ok(Page::new(items, total as u64, page))
    }

    /// `GET /remote-mcp-servers/:id`.
    pub async fn get_remote_mcp_server(
        &self,
        caller: &Caller,
        id: Uuid,
    ) -> Result<RemoteMcpServer> {
        let mut conn = self.store().read().await?;
        Ok(require_server(&mut conn, caller.tenant_id, id)
            .await?
            .to_api())
    }

    /// `PUT /remote-mcp-servers/:id`: a replace, verified before it is
    /// stored (a failure changes nothing). A secret sent as the mask keeps
    /// its stored value.
    pub async fn replace_remote_mcp_server(
        &self,
        caller: &Caller,
        id: Uuid,
        request: RemoteMcpServerRequest,
    ) -> Result<RemoteMcpServer> {
        let stored = {
            let mut conn = self.store().read().await?;
            require_server(&mut conn, caller.tenant_id, id).await?
        };
        let (checked, verified) = self
            .check_and_verify(caller, id, &request, Some(&stored))
            .await?;
        let now = self.now().as_datetime();
        let enabled = request
            .enabled_by_default_for_new_specialists
            .unwrap_or(false);
        let oauth_status = match (checked.auth_mode, &verified) {
            (McpAuthMode::Oauth, Some(_)) => oauth::CONNECTED.to_owned(),
            (McpAuthMode::Oauth, None) if keeps_oauth(Some(&stored), &checked) => {
                self.current_oauth_status(caller.tenant_id, id).await?
            }
            (McpAuthMode::Oauth, None) => oauth::DISCONNECTED.to_owned(),
            _ => oauth::NOT_APPLICABLE.to_owned(),
        };
        let drop_tokens = !keeps_oauth(Some(&stored), &checked);
        let unverified = checked.auth_mode == McpAuthMode::Oauth && verified.is_none();
        let row = ServerRow {
            oauth_status,
            name: checked.name,
            description: checked.description,
            endpoint_url: checked.endpoint.to_string(),
            transport_preference: request
                .transport_preference
                .unwrap_or_default()
                .as_str()
                .into(),
            call_timeout_seconds: checked.call_timeout_seconds,
            auth_mode: checked.auth_mode.as_str().into(),
            enabled_by_default: enabled,
            enabled_since: enabled_since(enabled, Some(&stored), now),
            parameters: Json(checked.sealed),
            updated_at: now,
            ..stored
        };
        let mut row = with_verified(row, verified, now);
        if unverified {
            row.verification_status = VerificationStatus::Unverified.as_str().into();
            row.verification_error = None;
            row.verification_failed_step = None;
        }
        let mut tx = self.store().begin().await?;
        if drop_tokens {
            oauth::delete(&mut tx, caller.tenant_id, id).await?;
        }
        let row = save_row(&mut tx, &row, false).await?;
        record_event(
            &mut tx,
            caller,
            "remote_mcp_server.updated",
            &row,
            json!({}),
        )
        .await?;
        tx.commit().await?;
        self.claim_cache().forget_inputs(caller.tenant_id);
        Ok(row.to_api())
    }

    /// `POST /remote-mcp-servers/:id/reverify`: verifies the stored server
    /// again and records the outcome (`verified` with fresh capabilities,
    /// or `failed` with the step and the reason, keeping the last
    /// capabilities). Answers the record either way.
    pub async fn reverify_remote_mcp_server(
        &self,
        caller: &Caller,
        id: Uuid,
    ) -> Result<RemoteMcpServer> {
        let stored = {
            let mut conn = self.store().read().await?;
            require_server(&mut conn, caller.tenant_id, id).await?
        };
        let clear = open_parameters(self.secrets(), caller.tenant_id, id, &stored.parameters.0)?;
        let endpoint = fields::endpoint(&stored.endpoint_url)?;
        if !self.config().allow_private_network {
            let host = endpoint.host_str().unwrap_or_default().to_owned();
            crate::git::check_public_host("endpointUrl", &host).await?;
        }
        let mut reached = target(endpoint, &clear, stored.call_timeout_seconds);
        let outcome = if stored.auth_mode == McpAuthMode::Oauth.as_str() {
            match self.oauth_bearer(caller.tenant_id, id).await? {
                Some(token) => {
                    reached.bearer = Some(token);
                    verify::verify(&reached, stored.transport_preference()).await
                }
                None => Err(Failure {
                    step: "oauth",
                    reason: "no usable OAuth token; connect the server (oauth/reconnect)".into(),
                }),
            }
        } else {
            verify::verify(&reached, stored.transport_preference()).await
        };
        let now = self.now().as_datetime();
        let oauth_status = self.current_oauth_status(caller.tenant_id, id).await?;
        let mut row = ServerRow {
            updated_at: now,
            oauth_status,
            ..stored
        };
        match outcome {
            Ok(verified) => {
                row.verification_status = VerificationStatus::Verified.as_str().into();
                row.verification_error = None;
                row.verification_failed_step = None;
                row.resolved_transport = Some(verified.transport.as_str().into());
                row.capabilities = Json(verified.capabilities);
                row.verified_at = Some(now);
            }
            Err(failure) => {
                row.verification_status = VerificationStatus::Failed.as_str().into();
                row.verification_error = Some(scrub(&failure.reason, &clear));
                row.verification_failed_step = Some(failure.step.into());
            }
        }
        let mut tx = self.store().begin().await?;
        let row = save_row(&mut tx, &row, false).await?;
        record_event(
            &mut tx,
            caller,
            "remote_mcp_server.verified",
            &row,
            json!({ "failed_step": row.verification_failed_step }),
        )
        .await?;
        tx.commit().await?;
        Ok(row.to_api())
    }

    /// `DELETE /remote-mcp-servers/:id`: answers the deleted record.
    pub async fn delete_remote_mcp_server(
        &self,
        caller: &Caller,
        id: Uuid,
    ) -> Result<RemoteMcpServer> {
        let mut tx = self.store().begin().await?;
        let row = require_server(&mut tx, caller.tenant_id, id).await?;
        if !delete_row(&mut tx, caller.tenant_id, id).await? {
            return Err(Error::not_found("remote MCP server"));
        }
        record_event(
            &mut tx,
            caller,
            "remote_mcp_server.deleted",
            &row,
            json!({}),
        )
        .await?;
        tx.commit().await?;
        self.claim_cache().forget_inputs(caller.tenant_id);
        Ok(row.to_api())
    }

    /// What claim credentials hand the assignee for server `id`: its
    /// endpoint, transport and parameters in clear (`parameters`), plus
    /// `oauth_access_token` (refreshed first when close to expiry; null
    /// when not connected) for an OAuth server. `None` when the server
    /// is gone or no longer enabled by default.
    pub(crate) async fn mcp_claim_values(
        &self,
        tenant_id: Uuid,
        id: Uuid,
    ) -> Result<Option<Value>> {
        let mut conn = self.store().read().await?;
        let Some(row) = rows::find_server(&mut conn, tenant_id, id).await? else {
            return Ok(None);
        };
        if !row.enabled_by_default {
            return Ok(None);
        }
        let clear: Vec<McpParameter> =
            open_parameters(self.secrets(), tenant_id, id, &row.parameters.0)?;
        let mut values = json!({
            "server_id": row.id,
            "name": row.name,
            "endpoint_url": row.endpoint_url,
            "transport": row.resolved_transport,
            "call_timeout_seconds": row.call_timeout_seconds,
            "parameters": clear,
        });
        if row.auth_mode == McpAuthMode::Oauth.as_str() {
            values["oauth_access_token"] = json!(self.oauth_bearer(tenant_id, id).await?);
        }
        Ok(Some(values))
    }
}
