//! Workspaces: standing repository and memory context.
//!
//! A workspace has a unique slug per tenant, JSON `settings` and a sticky
//! key/value `memory` (a JSON object of at most 1 MiB serialized). Its git
//! token is encrypted at rest, bound to the workspace id, and never read back
//! (records say `git_token_configured`).
//!
//! For other modules: [`find_workspace`] reads a workspace of a tenant by id.
//! [`workflow_summary`] is the hook the workflows module fills in.

use crate::api::workspaces::{
    CreateWorkspace, MAX_MEMORY_BYTES, PatchWorkspace, PutWorkspaceSpec, SetMemory, Workspace,
    WorkspaceFilter, WorkspaceSpec, WorkspaceSummary,
};
use crate::api::{Event, Page, PageRequest, Timestamp};
use crate::auth::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Begun, Storage, begin_write};
use crate::store::{Access, Tx, is_unique_violation, on_db};
use crate::tenants::{slugify, validate_slug};
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use sqlx::types::Json;
use uuid::Uuid;

#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct WorkspaceRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub name: String,
    pub slug: String,
    pub description: String,
    pub repository_url: Option<String>,
    pub default_branch: Option<String>,
    pub settings: Json<Value>,
    pub memory: Json<Value>,
    pub is_active: bool,
    pub git_token_encrypted: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

macro_rules! workspace_columns {
    () => {
        "id, tenant_id, name, slug, description, repository_url, default_branch, settings, memory, \
         is_active, git_token_encrypted, created_at, updated_at"
    };
}

impl WorkspaceRow {
    pub(crate) fn to_api(&self, summary: WorkspaceSummary) -> Workspace {
        Workspace {
            id: self.id,
            name: self.name.clone(),
            slug: self.slug.clone(),
            description: self.description.clone(),
            repository_url: self.repository_url.clone(),
            default_branch: self.default_branch.clone(),
            settings: self.settings.0.clone(),
            memory: self.memory.0.clone(),
            is_active: self.is_active,
            git_token_configured: self.git_token_encrypted.is_some(),
            summary,
            created_at: self.created_at.into(),
            updated_at: self.updated_at.into(),
        }
    }
}

/// A workspace of `tenant_id` by id (with its encrypted token column, which
/// only [`ControlPlane::workspace_git_token`] decrypts).
pub(crate) async fn find_workspace(
    access: &mut impl Access,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<Option<WorkspaceRow>> {
    Ok(on_db!(access, c => sqlx::query_as(concat!(
        "SELECT ", workspace_columns!(), " FROM workspaces WHERE tenant_id = $1 AND id = $2"
    ))
    .bind(tenant_id)
    .bind(id)
    .fetch_optional(c)
    .await)?)
}

/// [`find_workspace`] or 404.
pub(crate) async fn require_workspace(
    access: &mut impl Access,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<WorkspaceRow> {
    find_workspace(access, tenant_id, id)
        .await?
        .ok_or(Error::not_found("workspace"))
}

/// Workflow counts of a workspace (`open`: not completed, failed or
/// cancelled).
pub(crate) async fn workflow_summary(
    access: &mut impl Access,
    tenant_id: Uuid,
    workspace_id: Uuid,
) -> Result<WorkspaceSummary> {
    let (total, open): (i64, Option<i64>) = on_db!(access, c => sqlx::query_as(
        "SELECT COUNT(*), SUM(CASE WHEN state IN ('completed', 'failed', 'cancelled') THEN 0 ELSE 1 END) \
         FROM workflows WHERE tenant_id = $1 AND workspace_id = $2",
    )
    .bind(tenant_id)
    .bind(workspace_id)
    .fetch_one(c)
    .await)?;
    Ok(WorkspaceSummary {
        workflow_count: total,
        open_workflow_count: open.unwrap_or(0),
    })
}

/// The context a workspace's git token is encrypted under.
fn token_context(workspace_id: Uuid) -> String {
    format!("workspace-git-token:{workspace_id}")
}

/// Accepts `https://`, `http://`, `ssh://`, `git://`, `file://` URLs and
/// scp-like `user@host:path`.
pub(crate) fn validate_repository_url(url: &str) -> Result<()> {
    let schemes = ["https://", "http://", "ssh://", "git://", "file://"];
    let ok = url.len() <= 2000
        && !url.chars().any(char::is_whitespace)
        && (schemes
            .iter()
            .any(|s| url.len() > s.len() && url.to_ascii_lowercase().starts_with(s))
            || url
                .split_once('@')
                .is_some_and(|(user, rest)| !user.is_empty() && rest.contains(':')));
    if ok {
        Ok(())
    } else {
        Err(Error::invalid_field(
            "repository_url",
            "must be an https, http, ssh, git or file URL (or user@host:path)",
        ))
    }
}

pub(crate) fn validate_branch(branch: &str) -> Result<()> {
    let ok = !branch.is_empty()
        && branch.len() <= 255
        && !branch.starts_with('-')
        && !branch.contains("..")
        && !branch
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "~^:?*[\\".contains(c));
    if ok {
        Ok(())
    } else {
        Err(Error::invalid_field(
            "default_branch",
            "is not a valid branch name",
        ))
    }
}

fn object_field(field: &str, value: Option<&Value>) -> Result<Value> {
    match value {
        None | Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(Value::Object(map)) => Ok(Value::Object(map.clone())),
        Some(_) => Err(Error::invalid_field(field, "must be a JSON object")),
    }
}

fn check_memory_size(memory: &Value) -> Result<()> {
    let size = serde_json::to_vec(memory)?.len();
    if size > MAX_MEMORY_BYTES {
        return Err(Error::invalid_field(
            "memory",
            format!("is {size} bytes serialized; the limit is {MAX_MEMORY_BYTES} bytes (1 MiB)"),
        ));
    }
    Ok(())
}

fn validate_name(name: &str) -> Result<()> {
    if name.trim().is_empty() || name.len() > 200 {
        return Err(Error::invalid_field("name", "must be 1 to 200 characters"));
    }
    Ok(())
}

fn slug_conflict(slug: &str) -> Error {
    Error::Conflict {
        message: format!("a workspace with slug `{slug}` already exists"),
        hint: Some("choose another slug".into()),
    }
}

/// Writes `row` back (every mutable column) and answers the stored row.
pub(crate) async fn update_row(tx: &mut Tx, row: &WorkspaceRow) -> Result<WorkspaceRow> {
    let updated = on_db!(tx, c => sqlx::query_as::<_, WorkspaceRow>(concat!(
        "UPDATE workspaces SET name = $1, slug = $2, description = $3, repository_url = $4, default_branch = $5, \
         settings = $6, memory = $7, is_active = $8, git_token_encrypted = $9, \
         git_token_set_at = CASE WHEN $9 IS NULL THEN NULL ELSE COALESCE(git_token_set_at, $10) END, \
         updated_at = $10 WHERE tenant_id = $11 AND id = $12 RETURNING ", workspace_columns!()
    ))
    .bind(&row.name)
    .bind(&row.slug)
    .bind(&row.description)
    .bind(&row.repository_url)
    .bind(&row.default_branch)
    .bind(Json(&row.settings.0))
    .bind(Json(&row.memory.0))
    .bind(row.is_active)
    .bind(&row.git_token_encrypted)
    .bind(Timestamp::now().as_datetime())
    .bind(row.tenant_id)
    .bind(row.id)
    .fetch_one(c)
    .await);
    match updated {
        Ok(row) => Ok(row),
        Err(e) if is_unique_violation(&e) => Err(slug_conflict(&row.slug)),
        Err(e) => Err(e.into()),
    }
}

/// Reads a workspace for a write, locking its row on PostgreSQL so
/// read-modify-write (memory) cannot lose a concurrent update. (SQLite has one
/// writer, so the transaction already serializes.)
pub(crate) async fn lock_workspace(tx: &mut Tx, tenant_id: Uuid, id: Uuid) -> Result<WorkspaceRow> {
    let row: Option<WorkspaceRow> = on_db!(tx, c =>
        sqlite: sqlx::query_as(concat!(
            "SELECT ", workspace_columns!(), " FROM workspaces WHERE tenant_id = $1 AND id = $2"
        )).bind(tenant_id).bind(id).fetch_optional(c).await,
        postgres: sqlx::query_as(concat!(
            "SELECT ", workspace_columns!(), " FROM workspaces WHERE tenant_id = $1 AND id = $2 FOR UPDATE"
        )).bind(tenant_id).bind(id).fetch_optional(c).await,
    )?;
    row.ok_or(Error::not_found("workspace"))
}

impl ControlPlane {
    /// Encrypts a workspace's git token for storage.
    pub(crate) fn seal_git_token(&self, workspace_id: Uuid, token: &str) -> String {
        self.secrets()
            .encrypt(token.as_bytes(), token_context(workspace_id).as_bytes())
    }

    /// The decrypted git token of a workspace row, if one is stored.
    pub(crate) fn workspace_git_token(&self, row: &WorkspaceRow) -> Result<Option<String>> {
        row.git_token_encrypted
            .as_deref()
            .map(|sealed| {
                let bytes = self
                    .secrets()
                    .decrypt(sealed, token_context(row.id).as_bytes())?;
                String::from_utf8(bytes).map_err(Error::internal)
            })
            .transpose()
    }

    async fn workspace_record(
        &self,
        access: &mut impl Access,
        row: &WorkspaceRow,
    ) -> Result<Workspace> {
        let summary = workflow_summary(access, row.tenant_id, row.id).await?;
        Ok(row.to_api(summary))
    }

    /// `POST /workspaces`.
    pub async fn create_workspace(
        &self,
        caller: &Caller,
        request: CreateWorkspace,
    ) -> Result<Workspace> {
        let name = request.name.trim().to_owned();
        validate_name(&name)?;
        let slug = match &request.slug {
            Some(slug) => {
                validate_slug(slug)?;
                slug.clone()
            }
            None => slugify(&name).ok_or_else(|| {
                Error::invalid_field("slug", "cannot be derived from the name; give one")
            })?,
        };
        if let Some(url) = request.repository_url.as_deref().filter(|u| !u.is_empty()) {
            validate_repository_url(url)?;
        }
        if let Some(branch) = request.default_branch.as_deref().filter(|b| !b.is_empty()) {
            validate_branch(branch)?;
        }
        let settings = object_field("settings", request.settings.as_ref())?;
        let memory = object_field("memory", request.memory.as_ref())?;
        check_memory_size(&memory)?;
        if request.git_token.as_deref().is_some_and(str::is_empty) {
            return Err(Error::invalid_field("git_token", "must not be empty"));
        }
        let mut write = begin_write!(self, caller, "workspaces.create", request, Storage::Plain);
        let id = Uuid::new_v4();
        let now = Timestamp::now().as_datetime();
        let sealed = request
            .git_token
            .as_deref()
            .map(|t| self.seal_git_token(id, t));
        let inserted = on_db!(&mut write.tx, c => sqlx::query_as::<_, WorkspaceRow>(concat!(
            "INSERT INTO workspaces (id, tenant_id, name, slug, description, repository_url, default_branch, settings, memory, \
             is_active, git_token_encrypted, git_token_set_at, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, TRUE, $10, CASE WHEN $10 IS NULL THEN NULL ELSE $11 END, $11, $11) RETURNING ",
            workspace_columns!()
        ))
        .bind(id)
        .bind(caller.tenant_id)
        .bind(&name)
        .bind(&slug)
        .bind(request.description.clone().unwrap_or_default())
        .bind(request.repository_url.clone().filter(|u| !u.is_empty()))
        .bind(request.default_branch.clone().filter(|b| !b.is_empty()))
        .bind(Json(&settings))
        .bind(Json(&memory))
        .bind(&sealed)
        .bind(now)
        .fetch_one(c)
        .await);
        let row = match inserted {
            Ok(row) => row,
            Err(e) if is_unique_violation(&e) => return Err(slug_conflict(&slug)),
            Err(e) => return Err(e.into()),
        };
        let mut event = NewEvent::new(
            "workspace.created",
            "workspace",
            id,
            json!({ "slug": slug }),
        );
        event.workspace_id = Some(id);
        events::record(&mut write.tx, caller, caller.tenant_id, event).await?;
        let record = self.workspace_record(&mut write.tx, &row).await?;
        write.finish(record).await
    }

    /// `GET /workspaces`: newest first, filtered by `q` (name, slug or
    /// description, case-insensitive) and `is_active`.
    pub async fn list_workspaces(
        &self,
        caller: &Caller,
        filter: WorkspaceFilter,
        page: PageRequest,
    ) -> Result<Page<Workspace>> {
        let pattern = filter
            .q
            .as_deref()
            .map(str::trim)
            .filter(|q| !q.is_empty())
            .map(|q| format!("%{}%", q.to_lowercase()));
        let mut conn = self.store().read().await?;
        macro_rules! where_clause {
            () => {
                " WHERE tenant_id = $1 AND ($2 IS NULL OR is_active = $2) AND ($3 IS NULL \
                 OR LOWER(name) LIKE $3 OR LOWER(slug) LIKE $3 OR LOWER(description) LIKE $3)"
            };
        }
        let (total,): (i64,) = on_db!(&mut conn, c => sqlx::query_as(concat!("SELECT COUNT(*) FROM workspaces", where_clause!()))
            .bind(caller.tenant_id)
            .bind(filter.is_active)
            .bind(&pattern)
            .fetch_one(c)
            .await)?;
        let rows: Vec<WorkspaceRow> = on_db!(&mut conn, c => sqlx::query_as(concat!(
            "SELECT ", workspace_columns!(), " FROM workspaces", where_clause!(),
            " ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5"
        ))
            .bind(caller.tenant_id)
            .bind(filter.is_active)
            .bind(&pattern)
            .bind(i64::from(page.per_page))
            .bind(page.offset() as i64)
            .fetch_all(c)
            .await)?;
        let mut items = Vec::with_capacity(rows.len());
        for row in &rows {
            items.push(self.workspace_record(&mut conn, row).await?);
        }
        Ok(Page::new(items, total as u64, page))
    }

    /// `GET /workspaces/:id`.
    pub async fn get_workspace(&self, caller: &Caller, id: Uuid) -> Result<Workspace> {
        let mut conn = self.store().read().await?;
        let row = require_workspace(&mut conn, caller.tenant_id, id).await?;
        self.workspace_record(&mut conn, &row).await
    }

    /// `PATCH /workspaces/:id`: at least one field (else 400).
    pub async fn patch_workspace(
        &self,
        caller: &Caller,
        id: Uuid,
        request: PatchWorkspace,
    ) -> Result<Workspace> {
        if request.is_empty() {
            return Err(Error::validation(
                "a workspace patch needs at least one of name, slug, description, repository_url, default_branch, settings, is_active",
            ));
        }
        if let Some(name) = &request.name {
            validate_name(name)?;
        }
        if let Some(slug) = &request.slug {
            validate_slug(slug)?;
        }
        if let Some(url) = request.repository_url.as_deref().filter(|u| !u.is_empty()) {
            validate_repository_url(url)?;
        }
        if let Some(branch) = request.default_branch.as_deref().filter(|b| !b.is_empty()) {
            validate_branch(branch)?;
        }
        let settings = request
            .settings
            .as_ref()
            .map(|s| object_field("settings", Some(s)))
            .transpose()?;
        let mut write = match self
            .begin_idempotent(
                caller,
                "workspaces.patch",
                request.request_id.as_deref(),
                &(id, &request),
                Storage::Plain,
            )
            .await?
        {
            Begun::Replayed(recorded) => return Ok(recorded),
            Begun::Fresh(write) => write,
        };
        let mut row = lock_workspace(&mut write.tx, caller.tenant_id, id).await?;
        if let Some(name) = &request.name {
            row.name = name.trim().to_owned();
        }
        if let Some(slug) = &request.slug {
            row.slug = slug.clone();
        }
        if let Some(description) = &request.description {
            row.description = description.clone();
        }
        if let Some(url) = &request.repository_url {
            row.repository_url = Some(url.clone()).filter(|u| !u.is_empty());
        }
        if let Some(branch) = &request.default_branch {
            row.default_branch = Some(branch.clone()).filter(|b| !b.is_empty());
        }
        if let Some(settings) = settings {
            row.settings = Json(settings);
        }
        if let Some(is_active) = request.is_active {
            row.is_active = is_active;
        }
        let row = update_row(&mut write.tx, &row).await?;
        let mut event = NewEvent::new(
            "workspace.updated",
            "workspace",
            id,
            json!({ "fields": patched_fields(&request) }),
        );
        event.workspace_id = Some(id);
        events::record(&mut write.tx, caller, caller.tenant_id, event).await?;
        let record = self.workspace_record(&mut write.tx, &row).await?;
        write.finish(record).await
    }

    /// `PATCH /workspaces/:id/memory`: sets one key (1 MiB cap on the whole memory).
    pub async fn set_workspace_memory(
        &self,
        caller: &Caller,
        id: Uuid,
        request: SetMemory,
    ) -> Result<Workspace> {
        validate_memory_key(&request.key)?;
        let mut write = match self
            .begin_idempotent(
                caller,
                "workspaces.memory.set",
                request.request_id.as_deref(),
                &(id, &request),
                Storage::Plain,
            )
            .await?
        {
            Begun::Replayed(recorded) => return Ok(recorded),
            Begun::Fresh(write) => write,
        };
        let mut row = lock_workspace(&mut write.tx, caller.tenant_id, id).await?;
        let memory = row
            .memory
            .0
            .as_object_mut()
            .ok_or_else(|| Error::internal("memory is not an object"))?;
        memory.insert(request.key.clone(), request.value.clone());
        check_memory_size(&row.memory.0)?;
        let row = update_row(&mut write.tx, &row).await?;
        let mut event = NewEvent::new(
            "workspace.memory_set",
            "workspace",
            id,
            json!({ "key": request.key }),
        );
        event.workspace_id = Some(id);
        events::record(&mut write.tx, caller, caller.tenant_id, event).await?;
        let record = self.workspace_record(&mut write.tx, &row).await?;
        write.finish(record).await
    }

    /// `DELETE /workspaces/:id/memory/:key`: removes one key (a missing key
    /// answers the workspace unchanged).
    pub async fn delete_workspace_memory(
        &self,
        caller: &Caller,
        id: Uuid,
        key: &str,
    ) -> Result<Workspace> {
        let mut tx = self.store().begin().await?;
        let mut row = lock_workspace(&mut tx, caller.tenant_id, id).await?;
        let removed = row
            .memory
            .0
            .as_object_mut()
            .and_then(|m| m.remove(key))
            .is_some();
        if !removed {
            let record = self.workspace_record(&mut tx, &row).await?;
            return Ok(record);
        }
        let row = update_row(&mut tx, &row).await?;
        let mut event = NewEvent::new(
            "workspace.memory_deleted",
            "workspace",
            id,
            json!({ "key": key }),
        );
        event.workspace_id = Some(id);
        events::record(&mut tx, caller, caller.tenant_id, event).await?;
        let record = self.workspace_record(&mut tx, &row).await?;
        tx.commit().await?;
        Ok(record)
    }
}

fn validate_memory_key(key: &str) -> Result<()> {
    if key.is_empty() || key.len() > 200 {
        return Err(Error::invalid_field("key", "must be 1 to 200 characters"));
    }
    Ok(())
}

fn patched_fields(request: &PatchWorkspace) -> Vec<&'static str> {
    let mut fields = Vec::new();
    for (name, present) in [
        ("name", request.name.is_some()),
        ("slug", request.slug.is_some()),
        ("description", request.description.is_some()),
        ("repository_url", request.repository_url.is_some()),
        ("default_branch", request.default_branch.is_some()),
        ("settings", request.settings.is_some()),
        ("is_active", request.is_active.is_some()),
    ] {
        if present {
            fields.push(name);
        }
    }
    fields
}

#[derive(sqlx::FromRow)]
struct SpecRow {
    version: i32,
    spec: Json<Value>,
    created_at: DateTime<Utc>,
}

const SPEC_PARTS: [&str; 5] = ["resources", "documents", "tools", "config", "instructions"];

fn spec_to_api(workspace_id: Uuid, row: Option<SpecRow>) -> WorkspaceSpec {
    let (version, spec, created_at) = match row {
        Some(row) => (row.version, row.spec.0, Some(row.created_at.into())),
        None => (0, json!({}), None),
    };
    let part = |name: &str| spec.get(name).cloned().unwrap_or_else(|| json!({}));
    WorkspaceSpec {
        workspace_id,
        version,
        resources: part("resources"),
        documents: part("documents"),
        tools: part("tools"),
        config: part("config"),
        instructions: part("instructions"),
        created_at,
    }
}

impl ControlPlane {
    /// `GET /workspaces/:id/spec[?version=N]`: the latest spec, or version N
    /// (404 when it does not exist). Version 0 with empty parts before any PUT.
    pub async fn get_workspace_spec(
        &self,
        caller: &Caller,
        id: Uuid,
        version: Option<i32>,
    ) -> Result<WorkspaceSpec> {
        let mut conn = self.store().read().await?;
        require_workspace(&mut conn, caller.tenant_id, id).await?;
        let row: Option<SpecRow> = match version {
            Some(version) => {
                let row = on_db!(&mut conn, c => sqlx::query_as(
                    "SELECT version, spec, created_at FROM workspace_specs WHERE workspace_id = $1 AND version = $2",
                )
                .bind(id)
                .bind(version)
                .fetch_optional(c)
                .await)?;
                if row.is_none() && version != 0 {
                    return Err(Error::not_found("workspace spec version"));
                }
                row
            }
            None => on_db!(&mut conn, c => sqlx::query_as(
                "SELECT version, spec, created_at FROM workspace_specs WHERE workspace_id = $1 ORDER BY version DESC LIMIT 1",
            )
            .bind(id)
            .fetch_optional(c)
            .await)?,
        };
        Ok(spec_to_api(id, row))
    }

    /// `PUT /workspaces/:id/spec`: stores a new version (earlier ones stay readable).
    pub async fn put_workspace_spec(
        &self,
        caller: &Caller,
        id: Uuid,
        request: PutWorkspaceSpec,
    ) -> Result<WorkspaceSpec> {
        let parts = [
            &request.resources,
            &request.documents,
            &request.tools,
            &request.config,
            &request.instructions,
        ];
        let mut spec = Map::new();
        for (name, value) in SPEC_PARTS.iter().zip(parts) {
            spec.insert((*name).to_owned(), object_field(name, value.as_ref())?);
        }
        let spec = Value::Object(spec);
        if serde_json::to_vec(&spec)?.len() > MAX_MEMORY_BYTES {
            return Err(Error::validation("the spec is larger than 1 MiB"));
        }
        let mut write = match self
            .begin_idempotent(
                caller,
                "workspaces.spec.put",
                request.request_id.as_deref(),
                &(id, &request),
                Storage::Plain,
            )
            .await?
        {
            Begun::Replayed(recorded) => return Ok(recorded),
            Begun::Fresh(write) => write,
        };
        lock_workspace(&mut write.tx, caller.tenant_id, id).await?;
        let row: SpecRow = on_db!(&mut write.tx, c => sqlx::query_as(
            "INSERT INTO workspace_specs (workspace_id, tenant_id, version, spec, created_at) \
             VALUES ($1, $2, (SELECT COALESCE(MAX(version), 0) + 1 FROM workspace_specs WHERE workspace_id = $1), $3, $4) \
             RETURNING version, spec, created_at",
        )
        .bind(id)
        .bind(caller.tenant_id)
        .bind(Json(&spec))
        .bind(Timestamp::now().as_datetime())
        .fetch_one(c)
        .await)?;
        let mut event = NewEvent::new(
            "workspace.spec_updated",
            "workspace",
            id,
            json!({ "version": row.version }),
        );
        event.workspace_id = Some(id);
        events::record(&mut write.tx, caller, caller.tenant_id, event).await?;
        write.finish(spec_to_api(id, Some(row))).await
    }

    /// `GET /workspaces/:id/timeline`: the workspace's events, newest first,
    /// paginated.
    pub async fn workspace_timeline(
        &self,
        caller: &Caller,
        id: Uuid,
        page: PageRequest,
    ) -> Result<Page<Event>> {
        let mut conn = self.store().read().await?;
        require_workspace(&mut conn, caller.tenant_id, id).await?;
        let (items, total) = events::list_for_workspace(
            &mut conn,
            caller.tenant_id,
            id,
            i64::from(page.per_page),
            page.offset() as i64,
        )
        .await?;
        Ok(Page::new(items, total as u64, page))
    }
}
