//! The `remote_mcp_servers` table: the row, its columns, reads and writes.
//! Secret parameter values are stored sealed (see [`super::fields`]).

use crate::api::{
    McpAuthMode, McpCapabilities, McpParameter, McpTransport, ParameterValueKind, RemoteMcpServer,
    SECRET_MASK, Timestamp, TransportPreference, VerificationStatus,
};
use crate::claim_cache::EnabledServer;
use crate::error::{Error, Result};
use crate::store::{Access, Tx, is_unique_violation, on_db};
use chrono::{DateTime, Utc};
use sqlx::types::Json;
use uuid::Uuid;

#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct ServerRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub name: String,
    pub description: String,
    pub endpoint_url: String,
    pub transport_preference: String,
    pub call_timeout_seconds: i32,
    pub auth_mode: String,
    pub enabled_by_default: bool,
    pub enabled_since: Option<DateTime<Utc>>,
    /// Secret values sealed.
    pub parameters: Json<Vec<McpParameter>>,
    pub verification_status: String,
    pub verification_error: Option<String>,
    pub verification_failed_step: Option<String>,
    pub resolved_transport: Option<String>,
    pub capabilities: Json<McpCapabilities>,
    pub verified_at: Option<DateTime<Utc>>,
    pub oauth_status: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

macro_rules! server_columns {
    () => {
        "id, tenant_id, name, description, endpoint_url, transport_preference, \
         call_timeout_seconds, auth_mode, enabled_by_default, enabled_since, parameters, \
         verification_status, verification_error, verification_failed_step, resolved_transport, \
         capabilities, verified_at, oauth_status, created_at, updated_at"
    };
}
pub(crate) use server_columns;

impl ServerRow {
    pub(crate) fn transport_preference(&self) -> TransportPreference {
        TransportPreference::parse(&self.transport_preference).unwrap_or_default()
    }

    pub(crate) fn to_api(&self) -> RemoteMcpServer {
        RemoteMcpServer {
            id: self.id,
            name: self.name.clone(),
            description: self.description.clone(),
            endpoint_url: self.endpoint_url.clone(),
            transport_preference: self.transport_preference(),
            call_timeout_seconds: u32::try_from(self.call_timeout_seconds).unwrap_or(1),
            auth_mode: McpAuthMode::parse(&self.auth_mode).unwrap_or_default(),
            enabled_by_default_for_new_specialists: self.enabled_by_default,
            parameters: self
                .parameters
                .0
                .iter()
                .map(|p| McpParameter {
                    value: match p.value_kind {
                        ParameterValueKind::Secret => SECRET_MASK.to_owned(),
                        ParameterValueKind::Plain => p.value.clone(),
                    },
                    ..p.clone()
                })
                .collect(),
            verification_status: VerificationStatus::parse(&self.verification_status)
                .unwrap_or_default(),
            verification_error: self.verification_error.clone(),
            verification_failed_step: self.verification_failed_step.clone(),
            resolved_transport: self
                .resolved_transport
                .as_deref()
                .and_then(McpTransport::parse),
            capabilities: self.capabilities.0.clone(),
            verified_at: self.verified_at.map(Timestamp::from),
            oauth_status: self.oauth_status.clone(),
            created_at: self.created_at.into(),
            updated_at: self.updated_at.into(),
        }
    }
}

/// A server of `tenant_id` by id.
pub(crate) async fn find_server(
    access: &mut impl Access,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<Option<ServerRow>> {
    Ok(on_db!(access, c => sqlx::query_as(concat!(
        "SELECT ", server_columns!(), " FROM remote_mcp_servers WHERE tenant_id = $1 AND id = $2"
    ))
    .bind(tenant_id)
    .bind(id)
    .fetch_optional(c)
    .await)?)
}

/// [`find_server`] or 404.
pub(crate) async fn require_server(
    access: &mut impl Access,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<ServerRow> {
    find_server(access, tenant_id, id)
        .await?
        .ok_or(Error::not_found("remote MCP server"))
}

/// Every server of the tenant enabled by default for new specialists, in
/// listing order (claim credentials; [`crate::claim_cache`]).
pub(crate) async fn enabled_servers(
    access: &mut impl Access,
    tenant_id: Uuid,
) -> Result<Vec<EnabledServer>> {
    Ok(on_db!(access, c => sqlx::query_as(
        "SELECT id, name, enabled_since FROM remote_mcp_servers WHERE tenant_id = $1 \
         AND enabled_by_default = $2 ORDER BY created_at, id"
    )
    .bind(tenant_id)
    .bind(true)
    .fetch_all(c)
    .await)?)
}

pub(crate) fn name_conflict(name: &str) -> Error {
    Error::Conflict {
        message: format!("a remote MCP server named `{name}` already exists"),
        hint: Some("choose another name".into()),
    }
}

/// Whether another server of the tenant has `name`.
pub(crate) async fn name_taken(
    access: &mut impl Access,
    tenant_id: Uuid,
    name: &str,
    except: Option<Uuid>,
) -> Result<bool> {
    let (count,): (i64,) = on_db!(access, c => sqlx::query_as(
        "SELECT COUNT(*) FROM remote_mcp_servers WHERE tenant_id = $1 AND name = $2 AND id <> $3",
    )
    .bind(tenant_id)
    .bind(name)
    .bind(except.unwrap_or(Uuid::nil()))
    .fetch_one(c)
    .await)?;
    Ok(count > 0)
}

/// Inserts `row`, or writes every column of the existing row with its id.
pub(crate) async fn save_row(tx: &mut Tx, row: &ServerRow, insert: bool) -> Result<ServerRow> {
    macro_rules! bind_all {
        ($q:expr) => {
            $q.bind(row.id)
                .bind(row.tenant_id)
                .bind(&row.name)
                .bind(&row.description)
                .bind(&row.endpoint_url)
                .bind(&row.transport_preference)
                .bind(row.call_timeout_seconds)
                .bind(&row.auth_mode)
                .bind(row.enabled_by_default)
                .bind(row.enabled_since)
                .bind(Json(&row.parameters.0))
                .bind(&row.verification_status)
                .bind(&row.verification_error)
                .bind(&row.verification_failed_step)
                .bind(&row.resolved_transport)
                .bind(Json(&row.capabilities.0))
                .bind(row.verified_at)
                .bind(&row.oauth_status)
                .bind(row.created_at)
                .bind(row.updated_at)
        };
    }
    let saved = if insert {
        on_db!(tx, c => bind_all!(sqlx::query_as::<_, ServerRow>(concat!(
            "INSERT INTO remote_mcp_servers (", server_columns!(), ") VALUES \
             ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20) \
             RETURNING ", server_columns!()
        )))
        .fetch_optional(c)
        .await)
    } else {
        on_db!(tx, c => bind_all!(sqlx::query_as::<_, ServerRow>(concat!(
            "UPDATE remote_mcp_servers SET name = $3, description = $4, endpoint_url = $5, \
             transport_preference = $6, call_timeout_seconds = $7, auth_mode = $8, \
             enabled_by_default = $9, enabled_since = $10, parameters = $11, \
             verification_status = $12, verification_error = $13, verification_failed_step = $14, \
             resolved_transport = $15, capabilities = $16, verified_at = $17, oauth_status = $18, \
             created_at = $19, updated_at = $20 WHERE id = $1 AND tenant_id = $2 RETURNING ",
            server_columns!()
        )))
        .fetch_optional(c)
        .await)
    };
    match saved {
        Ok(Some(row)) => Ok(row),
        Ok(None) => Err(Error::not_found("remote MCP server")),
        Err(e) if is_unique_violation(&e) => Err(name_conflict(&row.name)),
        Err(e) => Err(e.into()),
    }
}

/// Deletes the row; `false` when it was already gone.
pub(crate) async fn delete_row(tx: &mut Tx, tenant_id: Uuid, id: Uuid) -> Result<bool> {
    let deleted = on_db!(tx, c => sqlx::query(
        "DELETE FROM remote_mcp_servers WHERE tenant_id = $1 AND id = $2",
    )
    .bind(tenant_id)
    .bind(id)
    .execute(c)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(deleted > 0)
}
