//! The `execution_environments` table: the row, its columns, reads and the
//! write of its mutable columns.

use crate::api::environments::{
    CompatibilityStatus, ExecutionEnvironment, PullPolicy, SourceKind, SupportStatus,
};
use crate::error::{Error, Result};
use crate::store::StoredJson;
use crate::store::{Access, Tx, is_unique_violation, on_db};
use chrono::{DateTime, Utc};
use sqlx::types::Json;
use uuid::Uuid;

#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct EnvironmentRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub name: String,
    pub description: String,
    pub source_kind: String,
    pub catalog_key: Option<String>,
    pub catalog_version: Option<i32>,
    pub image: String,
    pub cpu: String,
    pub memory: String,
    pub pull_policy: String,
    pub compatibility_status: String,
    pub compatibility_errors: Json<Vec<String>>,
    pub support_status: Option<String>,
    pub verification_contract_version: Option<String>,
    pub verified_metadata: StoredJson,
    pub tool_capabilities: StoredJson,
    pub bootstrap_commands: Json<Vec<String>>,
    pub bootstrap_required_domains: Json<Vec<String>>,
    pub operator_notes: String,
    pub agent_hint: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

macro_rules! environment_columns {
    () => {
        "id, tenant_id, name, description, source_kind, catalog_key, catalog_version, image, cpu, \
         memory, pull_policy, compatibility_status, compatibility_errors, support_status, \
         verification_contract_version, verified_metadata, tool_capabilities, bootstrap_commands, \
         bootstrap_required_domains, operator_notes, agent_hint, created_at, updated_at"
    };
}
pub(crate) use environment_columns;

impl EnvironmentRow {
    pub(crate) fn pull_policy(&self) -> PullPolicy {
        PullPolicy::parse(&self.pull_policy).unwrap_or_default()
    }

    pub(crate) fn support_status(&self) -> Option<SupportStatus> {
        self.support_status
            .as_deref()
            .and_then(SupportStatus::parse)
    }

    pub(crate) fn to_api(&self) -> ExecutionEnvironment {
        ExecutionEnvironment {
            id: self.id,
            name: self.name.clone(),
            description: self.description.clone(),
            source_kind: SourceKind::parse(&self.source_kind).unwrap_or(SourceKind::Custom),
            catalog_key: self.catalog_key.clone(),
            catalog_version: self.catalog_version.map(i64::from),
            image: self.image.clone(),
            cpu: self.cpu.clone(),
            memory: self.memory.clone(),
            pull_policy: self.pull_policy(),
            compatibility_status: CompatibilityStatus::parse(&self.compatibility_status)
                .unwrap_or_default(),
            compatibility_errors: self.compatibility_errors.0.clone(),
            support_status: self.support_status(),
            verification_contract_version: self.verification_contract_version.clone(),
            verified_metadata: self.verified_metadata.0.clone(),
            tool_capabilities: self.tool_capabilities.0.clone(),
            bootstrap_commands: self.bootstrap_commands.0.clone(),
            bootstrap_required_domains: self.bootstrap_required_domains.0.clone(),
            operator_notes: self.operator_notes.clone(),
            agent_hint: self.agent_hint.clone(),
            created_at: self.created_at.into(),
            updated_at: self.updated_at.into(),
        }
    }
}

/// An environment of `tenant_id` by id.
pub(crate) async fn find_environment(
    access: &mut impl Access,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<Option<EnvironmentRow>> {
    Ok(on_db!(access, c => sqlx::query_as(concat!(
        "SELECT ", environment_columns!(), " FROM execution_environments WHERE tenant_id = $1 AND id = $2"
    ))
    .bind(tenant_id)
    .bind(id)
    .fetch_optional(c)
    .await)?)
}

/// [`find_environment`] or 404.
pub(crate) async fn require_environment(
    access: &mut impl Access,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<EnvironmentRow> {
    find_environment(access, tenant_id, id)
        .await?
        .ok_or(Error::not_found("execution environment"))
}

/// Reads an environment for a write, locking its row on PostgreSQL (SQLite's
/// one writer already serializes).
pub(crate) async fn lock_environment(
    tx: &mut Tx,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<EnvironmentRow> {
    let row: Option<EnvironmentRow> = on_db!(tx, c =>
        sqlite: sqlx::query_as(concat!(
            "SELECT ", environment_columns!(), " FROM execution_environments WHERE tenant_id = $1 AND id = $2"
        )).bind(tenant_id).bind(id).fetch_optional(c).await,
        postgres: sqlx::query_as(concat!(
            "SELECT ", environment_columns!(), " FROM execution_environments WHERE tenant_id = $1 AND id = $2 FOR UPDATE"
        )).bind(tenant_id).bind(id).fetch_optional(c).await,
    )?;
    row.ok_or(Error::not_found("execution environment"))
}

pub(crate) fn name_conflict(name: &str) -> Error {
    Error::Conflict {
        message: format!("an execution environment named `{name}` already exists"),
        hint: Some("choose another name".into()),
    }
}

/// Inserts a new row (every column from `row`).
pub(crate) async fn insert_row(tx: &mut Tx, row: &EnvironmentRow) -> Result<EnvironmentRow> {
    let inserted = on_db!(tx, c => sqlx::query_as::<_, EnvironmentRow>(concat!(
        "INSERT INTO execution_environments (", environment_columns!(), ") VALUES \
         ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23) \
         RETURNING ", environment_columns!()
    ))
    .bind(row.id)
    .bind(row.tenant_id)
    .bind(&row.name)
    .bind(&row.description)
    .bind(&row.source_kind)
    .bind(&row.catalog_key)
    .bind(row.catalog_version)
    .bind(&row.image)
    .bind(&row.cpu)
    .bind(&row.memory)
    .bind(&row.pull_policy)
    .bind(&row.compatibility_status)
    .bind(Json(&row.compatibility_errors.0))
    .bind(&row.support_status)
    .bind(&row.verification_contract_version)
    .bind(Json(&row.verified_metadata.0))
    .bind(Json(&row.tool_capabilities.0))
    .bind(Json(&row.bootstrap_commands.0))
    .bind(Json(&row.bootstrap_required_domains.0))
    .bind(&row.operator_notes)
    .bind(&row.agent_hint)
    .bind(row.created_at)
    .bind(row.updated_at)
    .fetch_one(c)
    .await);
    match inserted {
        Ok(row) => Ok(row),
        Err(e) if is_unique_violation(&e) => Err(name_conflict(&row.name)),
        Err(e) => Err(e.into()),
    }
}

/// Writes every mutable column of `row` back and answers the stored row.
pub(crate) async fn update_row(tx: &mut Tx, row: &EnvironmentRow) -> Result<EnvironmentRow> {
    let now = tx.now().as_datetime();
    let updated = on_db!(tx, c => sqlx::query_as::<_, EnvironmentRow>(concat!(
        "UPDATE execution_environments SET name = $1, description = $2, image = $3, cpu = $4, memory = $5, \
         pull_policy = $6, compatibility_status = $7, compatibility_errors = $8, support_status = $9, \
         verification_contract_version = $10, verified_metadata = $11, tool_capabilities = $12, \
         bootstrap_commands = $13, bootstrap_required_domains = $14, operator_notes = $15, agent_hint = $16, \
         updated_at = $17 WHERE tenant_id = $18 AND id = $19 RETURNING ", environment_columns!()
    ))
    .bind(&row.name)
    .bind(&row.description)
    .bind(&row.image)
    .bind(&row.cpu)
    .bind(&row.memory)
    .bind(&row.pull_policy)
    .bind(&row.compatibility_status)
    .bind(Json(&row.compatibility_errors.0))
    .bind(&row.support_status)
    .bind(&row.verification_contract_version)
    .bind(Json(&row.verified_metadata.0))
    .bind(Json(&row.tool_capabilities.0))
    .bind(Json(&row.bootstrap_commands.0))
    .bind(Json(&row.bootstrap_required_domains.0))
    .bind(&row.operator_notes)
    .bind(&row.agent_hint)
    .bind(now)
    .bind(row.tenant_id)
    .bind(row.id)
    .fetch_optional(c)
    .await);
    match updated {
        Ok(Some(row)) => Ok(row),
        Ok(None) => Err(Error::not_found("execution environment")),
        Err(e) if is_unique_violation(&e) => Err(name_conflict(&row.name)),
        Err(e) => Err(e.into()),
    }
}

/// How many tasks name the environment.
pub(crate) async fn task_references(
    access: &mut impl Access,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<i64> {
    let (count,): (i64,) = on_db!(access, c => sqlx::query_as(
        "SELECT COUNT(*) FROM tasks WHERE tenant_id = $1 AND execution_environment_id = $2",
    )
    .bind(tenant_id)
    .bind(id)
    .fetch_one(c)
    .await)?;
    Ok(count)
}
