//! The operations on execution environments: create (by hand or from the
//! catalog), list, get, patch, delete, verify and the support posture. Every
//! write records an `execution_environment.*` event in its transaction.

use crate::api::environments::{
    CompatibilityStatus, CreateExecutionEnvironment, CreateFromCatalog, EnvironmentCatalogEntry,
    EnvironmentFilter, ExecutionEnvironment, PatchExecutionEnvironment, SetSupportStatus,
    SourceKind, SupportStatus, Verification,
};
use crate::api::{Page, PageRequest, Timestamp};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::environments::rows::{
    EnvironmentRow, environment_columns, insert_row, lock_environment, require_environment,
    task_references, update_row,
};
use crate::environments::{catalog, fields, probe};
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Begun, Storage, begin_write};
use crate::store::StoredJson;
use crate::store::{Tx, on_db};
use serde_json::{Value, json};
use sqlx::types::Json;
use uuid::Uuid;

/// A new row with the verdict `unknown`.
struct Draft {
    name: String,
    description: String,
    source_kind: SourceKind,
    catalog_key: Option<String>,
    catalog_version: Option<i32>,
    image: String,
    cpu: String,
    memory: String,
    pull_policy: &'static str,
    bootstrap_commands: Vec<String>,
    bootstrap_required_domains: Vec<String>,
    operator_notes: String,
    declared_tools: Vec<String>,
}

impl Draft {
    fn into_row(self, tenant_id: Uuid, now: Timestamp) -> EnvironmentRow {
        let now = now.as_datetime();
        let mut row = EnvironmentRow {
            id: Uuid::new_v4(),
            tenant_id,
            name: self.name,
            description: self.description,
            source_kind: self.source_kind.as_str().into(),
            catalog_key: self.catalog_key,
            catalog_version: self.catalog_version,
            image: self.image,
            cpu: self.cpu,
            memory: self.memory,
            pull_policy: self.pull_policy.into(),
            compatibility_status: CompatibilityStatus::Unknown.as_str().into(),
            compatibility_errors: Json(Vec::new()),
            support_status: None,
            verification_contract_version: None,
            verified_metadata: StoredJson(json!({})),
            tool_capabilities: StoredJson(json!({ "declared": self.declared_tools })),
            bootstrap_commands: Json(self.bootstrap_commands),
            bootstrap_required_domains: Json(self.bootstrap_required_domains),
            operator_notes: self.operator_notes,
            agent_hint: String::new(),
            created_at: now,
            updated_at: now,
        };
        row.agent_hint = probe::agent_hint(&row);
        row
    }
}

/// Sets the verdict back to `unknown` (the facts it was about changed).
fn forget_verdict(row: &mut EnvironmentRow) {
    row.compatibility_status = CompatibilityStatus::Unknown.as_str().into();
    row.compatibility_errors = Json(Vec::new());
    row.verification_contract_version = None;
    row.verified_metadata = StoredJson(json!({}));
    let declared = probe::declared_tools(&row.tool_capabilities.0);
    row.tool_capabilities = StoredJson(json!({ "declared": declared }));
}

async fn record_event(
    tx: &mut Tx,
    caller: &Caller,
    event_type: &'static str,
    id: Uuid,
    data: Value,
) -> Result<()> {
    events::record(
        tx,
        caller,
        caller.tenant_id,
        NewEvent::new(event_type, "execution_environment", id, data),
    )
    .await?;
    Ok(())
}

impl ControlPlane {
    async fn insert_environment(
        &self,
        caller: &Caller,
        tx: &mut Tx,
        draft: Draft,
    ) -> Result<ExecutionEnvironment> {
        let row = insert_row(tx, &draft.into_row(caller.tenant_id, tx.now())).await?;
        record_event(
            tx,
            caller,
            "execution_environment.created",
            row.id,
            json!({ "name": row.name, "image": row.image, "source_kind": row.source_kind }),
        )
        .await?;
        Ok(row.to_api())
    }

    /// `POST /execution-environments`: verdict `unknown` until verified.
    pub async fn create_environment(
        &self,
        caller: &Caller,
        request: CreateExecutionEnvironment,
    ) -> Result<ExecutionEnvironment> {
        let draft = Draft {
            name: fields::name(&request.name)?,
            description: request.description.clone().unwrap_or_default(),
            source_kind: SourceKind::Custom,
            catalog_key: None,
            catalog_version: None,
            image: fields::image(&request.image)?,
            cpu: fields::cpu(request.cpu.as_deref().unwrap_or(fields::DEFAULT_CPU))?,
            memory: fields::memory(request.memory.as_deref().unwrap_or(fields::DEFAULT_MEMORY))?,
            pull_policy: request.pull_policy.unwrap_or_default().as_str(),
            bootstrap_commands: fields::bootstrap_commands(
                request.bootstrap_commands.as_deref().unwrap_or_default(),
            )?,
            bootstrap_required_domains: fields::domains(
                request
                    .bootstrap_required_domains
                    .as_deref()
                    .unwrap_or_default(),
            )?,
            operator_notes: request.operator_notes.clone().unwrap_or_default(),
            declared_tools: Vec::new(),
        };
        let mut write = begin_write!(self, caller, "environments.create", request, Storage::Plain);
        let record = self
            .insert_environment(caller, &mut write.tx, draft)
            .await?;
        write.finish(record).await
    }

    /// The base environments of the catalog (bundled or
    /// `ORCH_ENV_CATALOG_DIR`).
    pub fn environment_catalog(&self) -> Result<Vec<EnvironmentCatalogEntry>> {
        catalog::load(self.config().env_catalog_dir.as_deref())
    }

    /// `POST /execution-environments/from-catalog`: unknown key or version
    /// is 404.
    pub async fn create_environment_from_catalog(
        &self,
        caller: &Caller,
        request: CreateFromCatalog,
    ) -> Result<ExecutionEnvironment> {
        let entry = catalog::find(
            self.environment_catalog()?,
            &request.catalog_key,
            request.catalog_version,
        )?;
        let draft = Draft {
            name: fields::name(request.name.as_deref().unwrap_or(&entry.name))?,
            description: request.description.clone().unwrap_or(entry.description),
            source_kind: SourceKind::Catalog,
            catalog_version: Some(i32::try_from(entry.version).map_err(Error::internal)?),
            catalog_key: Some(entry.key),
            image: fields::image(&entry.image)?,
            cpu: fields::cpu(&entry.cpu)?,
            memory: fields::memory(&entry.memory)?,
            pull_policy: entry.pull_policy.as_str(),
            bootstrap_commands: entry.bootstrap_commands,
            bootstrap_required_domains: entry.bootstrap_required_domains,
            operator_notes: String::new(),
            declared_tools: entry.tools,
        };
        let mut write = begin_write!(
            self,
            caller,
            "environments.from_catalog",
            request,
            Storage::Plain
        );
        let record = self
            .insert_environment(caller, &mut write.tx, draft)
            .await?;
        write.finish(record).await
    }

    /// `GET /execution-environments`: newest first, filtered by verdict,
    /// support posture (`none` for no posture) and `q` (name, description or
    /// image, case-insensitive).
    pub async fn list_environments(
        &self,
        caller: &Caller,
        filter: EnvironmentFilter,
        page: PageRequest,
    ) -> Result<Page<ExecutionEnvironment>> {
        if let Some(support) = filter.support_status.as_deref()
            && support != "none"
            && SupportStatus::parse(support).is_none()
        {
            return Err(Error::invalid_field(
                "support_status",
                "must be approved, blocked or none",
            ));
        }
        let compatibility = filter.compatibility_status.map(|s| s.as_str());
        let pattern = filter
            .q
            .as_deref()
            .map(str::trim)
            .filter(|q| !q.is_empty())
            .map(|q| format!("%{}%", q.to_lowercase()));
        macro_rules! where_clause {
            () => {
                " WHERE tenant_id = $1 AND ($2 IS NULL OR compatibility_status = $2) \
                 AND ($3 IS NULL OR support_status = $3 OR ($3 = 'none' AND support_status IS NULL)) \
                 AND ($4 IS NULL OR LOWER(name) LIKE $4 OR LOWER(description) LIKE $4 OR LOWER(image) LIKE $4)"
            };
        }
        let mut conn = self.store().read().await?;
        let (total,): (i64,) = on_db!(&mut conn, c => sqlx::query_as(concat!(
            "SELECT COUNT(*) FROM execution_environments", where_clause!()
        ))
        .bind(caller.tenant_id)
        .bind(compatibility)
        .bind(&filter.support_status)
        .bind(&pattern)
        .fetch_one(c)
        .await)?;
        let rows: Vec<EnvironmentRow> = on_db!(&mut conn, c => sqlx::query_as(concat!(
            "SELECT ", environment_columns!(), " FROM execution_environments", where_clause!(),
            " ORDER BY created_at DESC, id DESC LIMIT $5 OFFSET $6"
        ))
        .bind(caller.tenant_id)
        .bind(compatibility)
        .bind(&filter.support_status)
        .bind(&pattern)
        .bind(i64::from(page.per_page))
        .bind(page.offset() as i64)
        .fetch_all(c)
        .await)?;
        let items = rows.iter().map(EnvironmentRow::to_api).collect();
        Ok(Page::new(items, total as u64, page))
    }

    /// `GET /execution-environments/:id`.
    pub async fn get_environment(&self, caller: &Caller, id: Uuid) -> Result<ExecutionEnvironment> {
        let mut conn = self.store().read().await?;
        Ok(require_environment(&mut conn, caller.tenant_id, id)
            .await?
            .to_api())
    }

    /// `PATCH /execution-environments/:id`: at least one field (else 400).
    pub async fn patch_environment(
        &self,
        caller: &Caller,
        id: Uuid,
        request: PatchExecutionEnvironment,
    ) -> Result<ExecutionEnvironment> {
        if request.is_empty() {
            return Err(Error::validation(
                "an environment patch needs at least one of name, description, image, cpu, memory, \
                 pullPolicy, bootstrapCommands, bootstrapRequiredDomains, operatorNotes",
            ));
        }
        let name = request.name.as_deref().map(fields::name).transpose()?;
        let image = request.image.as_deref().map(fields::image).transpose()?;
        let cpu = request.cpu.as_deref().map(fields::cpu).transpose()?;
        let memory = request.memory.as_deref().map(fields::memory).transpose()?;
        let commands = request
            .bootstrap_commands
            .as_deref()
            .map(fields::bootstrap_commands)
            .transpose()?;
        let domains = request
            .bootstrap_required_domains
            .as_deref()
            .map(fields::domains)
            .transpose()?;
        let mut write = match self
            .begin_idempotent(
                caller,
                "environments.patch",
                request.request_id.as_deref(),
                &(id, &request),
                Storage::Plain,
            )
            .await?
        {
            Begun::Replayed(recorded) => return Ok(recorded),
            Begun::Fresh(write) => write,
        };
        let mut row = lock_environment(&mut write.tx, caller.tenant_id, id).await?;
        row.name = name.unwrap_or(row.name);
        row.description = request.description.clone().unwrap_or(row.description);
        row.operator_notes = request.operator_notes.clone().unwrap_or(row.operator_notes);
        row.image = image.unwrap_or(row.image);
        row.cpu = cpu.unwrap_or(row.cpu);
        row.memory = memory.unwrap_or(row.memory);
        if let Some(policy) = request.pull_policy {
            row.pull_policy = policy.as_str().into();
        }
        if let Some(commands) = commands {
            row.bootstrap_commands = Json(commands);
        }
        if let Some(domains) = domains {
            row.bootstrap_required_domains = Json(domains);
        }
        if request.changes_verdict() {
            forget_verdict(&mut row);
        }
        row.agent_hint = probe::agent_hint(&row);
        let row = update_row(&mut write.tx, &row).await?;
        record_event(
            &mut write.tx,
            caller,
            "execution_environment.updated",
            id,
            json!({ "verdict_reset": request.changes_verdict() }),
        )
        .await?;
        write.finish(row.to_api()).await
    }

    /// `POST /execution-environments/:id/support`: `approved`, `blocked` or
    /// `null`. A blocked environment cannot be chosen for new tasks.
    pub async fn set_environment_support(
        &self,
        caller: &Caller,
        id: Uuid,
        request: SetSupportStatus,
    ) -> Result<ExecutionEnvironment> {
        let mut tx = self.store().begin().await?;
        let mut row = lock_environment(&mut tx, caller.tenant_id, id).await?;
        row.support_status = request.support_status.map(|s| s.as_str().to_owned());
        let row = update_row(&mut tx, &row).await?;
        record_event(
            &mut tx,
            caller,
            "execution_environment.updated",
            id,
            json!({ "support_status": row.support_status }),
        )
        .await?;
        tx.commit().await?;
        Ok(row.to_api())
    }

    /// `DELETE /execution-environments/:id`: `409` while tasks name it (the
    /// tasks' foreign key keeps it so even against a concurrent task
    /// create).
    pub async fn delete_environment(
        &self,
        caller: &Caller,
        id: Uuid,
    ) -> Result<ExecutionEnvironment> {
        let mut tx = self.store().begin().await?;
        let row = lock_environment(&mut tx, caller.tenant_id, id).await?;
        let referenced = task_references(&mut tx, caller.tenant_id, id).await?;
        if referenced > 0 {
            return Err(still_referenced(referenced));
        }
        let deleted = on_db!(&mut tx, c => sqlx::query(
            "DELETE FROM execution_environments WHERE tenant_id = $1 AND id = $2",
        )
        .bind(caller.tenant_id)
        .bind(id)
        .execute(c)
        .await
        .map(|r| r.rows_affected()));
        match deleted {
            Ok(_) => {}
            Err(sqlx::Error::Database(db)) if db.is_foreign_key_violation() => {
                return Err(still_referenced(1));
            }
            Err(e) => return Err(e.into()),
        }
        record_event(
            &mut tx,
            caller,
            "execution_environment.deleted",
            id,
            json!({ "name": row.name }),
        )
        .await?;
        tx.commit().await?;
        Ok(row.to_api())
    }

    /// `POST /execution-environments/:id/verify`: runs the probe (outside any
    /// transaction), then stores the verdict, unless the environment changed
    /// meanwhile (409).
    pub async fn verify_environment(&self, caller: &Caller, id: Uuid) -> Result<Verification> {
        let before = {
            let mut conn = self.store().read().await?;
            require_environment(&mut conn, caller.tenant_id, id).await?
        };
        let verification = probe::verify(self.config(), &before).await;
        let mut tx = self.store().begin().await?;
        let mut row = lock_environment(&mut tx, caller.tenant_id, id).await?;
        let same_subject = row.image == before.image
            && row.cpu == before.cpu
            && row.memory == before.memory
            && row.pull_policy == before.pull_policy
            && row.bootstrap_commands.0 == before.bootstrap_commands.0
            && row.bootstrap_required_domains.0 == before.bootstrap_required_domains.0;
        if !same_subject {
            return Err(Error::conflict(
                "the environment changed while it was being verified; verify it again",
            ));
        }
        row.compatibility_status = verification.compatibility_status.as_str().into();
        row.compatibility_errors = Json(verification.compatibility_errors.clone());
        row.verification_contract_version =
            Some(verification.verification_contract_version.clone());
        row.verified_metadata = StoredJson(verification.verified_metadata.clone());
        row.tool_capabilities = StoredJson(verification.tool_capabilities.clone());
        row.agent_hint = probe::agent_hint(&row);
        update_row(&mut tx, &row).await?;
        record_event(
            &mut tx,
            caller,
            "execution_environment.verified",
            id,
            json!({
                "compatibility_status": row.compatibility_status,
                "compatibility_errors": verification.compatibility_errors,
            }),
        )
        .await?;
        tx.commit().await?;
        Ok(verification)
    }
}

fn still_referenced(count: i64) -> Error {
    Error::Conflict {
        message: format!("the execution environment is used by {count} task(s)"),
        hint: Some("delete or finish those tasks first, or block the environment instead".into()),
    }
}
