//! The workspace spec (versioned) and the workspace timeline.

use super::records::object_field;
use super::rows::{lock_workspace, require_workspace};
use crate::api::workspaces::{MAX_MEMORY_BYTES, PutWorkspaceSpec, WorkspaceSpec};
use crate::api::{Event, Page, PageRequest};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Begun, Storage};
use crate::store::StoredJson;
use crate::store::on_db;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use sqlx::types::Json;
use uuid::Uuid;

#[derive(sqlx::FromRow)]
pub(crate) struct SpecRow {
    version: i32,
    spec: StoredJson,
    created_at: DateTime<Utc>,
}

pub(crate) const SPEC_PARTS: [&str; 5] =
    ["resources", "documents", "tools", "config", "instructions"];

pub(crate) fn spec_to_api(workspace_id: Uuid, row: Option<SpecRow>) -> WorkspaceSpec {
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
        .bind(self.now().as_datetime())
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
