//! The `/workspaces` records: create, list, get and patch.

use super::memory::check_memory_size;
use super::repository::{check_token_host, validate_branch, validate_repository_url};
use super::rows::{
    WorkspaceRow, lock_workspace, require_workspace, slug_conflict, update_row, workspace_columns,
};
use crate::api::workspaces::{CreateWorkspace, PatchWorkspace, Workspace, WorkspaceFilter};
use crate::api::{Page, PageRequest};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Begun, Storage, begin_write};
use crate::store::StoredJson;
use crate::store::{contains_pattern, is_unique_violation, on_db};
use crate::tenants::{slugify, validate_slug};
use serde_json::{Map, Value, json};
use sqlx::types::Json;
use uuid::Uuid;

pub(crate) fn object_field(field: &str, value: Option<&Value>) -> Result<Value> {
    match value {
        None | Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(Value::Object(map)) => Ok(Value::Object(map.clone())),
        Some(_) => Err(Error::schema_field(field, "must be a JSON object")),
    }
}

pub(crate) fn validate_name(name: &str) -> Result<()> {
    if name.trim().is_empty() || name.len() > 200 {
        return Err(Error::invalid_field("name", "must be 1 to 200 characters"));
    }
    Ok(())
}

pub(crate) fn patched_fields(request: &PatchWorkspace) -> Vec<&'static str> {
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

impl ControlPlane {
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
        let now = self.now().as_datetime();
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
        let pattern = contains_pattern("q", filter.q.as_deref())?.map(|p| p.to_lowercase());
        let mut conn = self.store().read().await?;
        macro_rules! where_clause {
            () => {
                " WHERE tenant_id = $1 AND ($2 IS NULL OR is_active = $2) AND ($3 IS NULL \
                 OR LOWER(name) LIKE $3 ESCAPE '\\' OR LOWER(slug) LIKE $3 ESCAPE '\\' \
                 OR LOWER(description) LIKE $3 ESCAPE '\\')"
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
        if let Some(url) = request.repository_url.as_deref().filter(|u| !u.is_empty()) {
            check_token_host(&row, url, "repository_url")?;
        }
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
            row.settings = StoredJson(settings);
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
}
