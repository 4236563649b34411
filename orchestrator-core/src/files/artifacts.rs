//! Artifacts: what tasks and operators attach to a workspace, their explorer
//! (filters, sort, pages) and their content.

use crate::api::workspaces::{Artifact, ArtifactFilter, MAX_FILE_BYTES, UploadArtifact};
use crate::api::{Page, PageRequest};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Begun, Storage};
use crate::store::{Tx, contains_pattern, on_db};
use crate::workspaces::require_workspace;
use chrono::{DateTime, Utc};
use serde_json::json;
use uuid::Uuid;

use super::blobs::{Download, insert_blob};
use super::content::{
    derive_key, guess_content_type, prepare_parts, preview_mode, too_large, validate_content_type,
    validate_file_name, validate_key,
};

/// What [`ControlPlane::add_artifact`] stores.
#[derive(Debug, Clone, Default)]
pub struct NewArtifact {
    pub workspace_id: Option<Uuid>,
    pub workflow_id: Option<Uuid>,
    pub work_item_id: Option<Uuid>,
    pub task_id: Option<Uuid>,
    pub stage_name: Option<String>,
    pub role: Option<String>,
    pub file_name: String,
    /// Derived from the file name when absent.
    pub key: Option<String>,
    pub description: Option<String>,
    /// Guessed from the file name when absent.
    pub content_type: Option<String>,
    pub content: Vec<u8>,
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct ArtifactRow {
    id: Uuid,
    workspace_id: Option<Uuid>,
    workflow_id: Option<Uuid>,
    work_item_id: Option<Uuid>,
    task_id: Option<Uuid>,
    stage_name: Option<String>,
    role: Option<String>,
    blob_id: Uuid,
    key: String,
    file_name: String,
    description: Option<String>,
    content_type: String,
    preview_mode: String,
    size_bytes: i64,
    checksum: String,
    created_at: DateTime<Utc>,
}

impl ArtifactRow {
    pub(crate) fn to_api(&self) -> Artifact {
        Artifact {
            id: self.id,
            workspace_id: self.workspace_id,
            workflow_id: self.workflow_id,
            work_item_id: self.work_item_id,
            task_id: self.task_id,
            stage_name: self.stage_name.clone(),
            role: self.role.clone(),
            file_name: self.file_name.clone(),
            key: self.key.clone(),
            description: self.description.clone(),
            content_type: self.content_type.clone(),
            size_bytes: self.size_bytes,
            preview_mode: self.preview_mode.clone(),
            checksum: self.checksum.clone(),
            download_url: format!("/api/v1/artifacts/{}/content", self.id),
            created_at: self.created_at.into(),
        }
    }
}

macro_rules! artifact_columns {
    () => {
        "id, workspace_id, workflow_id, work_item_id, task_id, stage_name, role, blob_id, key, file_name, \
         description, content_type, preview_mode, size_bytes, checksum, created_at"
    };
}

pub(crate) fn validate_label(field: &str, value: Option<&str>) -> Result<()> {
    if value.is_some_and(|v| v.trim().is_empty() || v.len() > 200) {
        return Err(Error::invalid_field(field, "must be 1 to 200 characters"));
    }
    Ok(())
}

/// Stores an artifact inside `tx` (the workspace, when given, must be the
/// caller tenant's). For task completion, which attaches artifacts in its
/// own transaction.
pub(crate) async fn insert_artifact(
    tx: &mut Tx,
    caller: &Caller,
    artifact: NewArtifact,
) -> Result<Artifact> {
    validate_file_name("file_name", &artifact.file_name)?;
    validate_label("stage_name", artifact.stage_name.as_deref())?;
    validate_label("role", artifact.role.as_deref())?;
    let key = match artifact.key {
        Some(key) => {
            validate_key("key", &key)?;
            key
        }
        None => derive_key(&artifact.file_name).ok_or_else(|| {
            Error::invalid_field("key", "cannot be derived from the file name; give one")
        })?,
    };
    let content_type = match artifact.content_type {
        Some(ct) => {
            validate_content_type("content_type", &ct)?;
            ct
        }
        None => guess_content_type(&artifact.file_name).to_owned(),
    };
    if artifact.content.len() > MAX_FILE_BYTES {
        return Err(too_large(
            "content",
            &artifact.file_name,
            artifact.content.len(),
        ));
    }
    if let Some(workspace_id) = artifact.workspace_id {
        require_workspace(tx, caller.tenant_id, workspace_id).await?;
    }
    let blob = insert_blob(
        tx,
        caller.tenant_id,
        artifact.workspace_id,
        &artifact.content,
    )
    .await?;
    let now = tx.now().as_datetime();
    let row: ArtifactRow = on_db!(tx, c => sqlx::query_as(concat!(
        "INSERT INTO artifacts (id, tenant_id, workspace_id, workflow_id, work_item_id, task_id, stage_name, role, \
         blob_id, key, file_name, description, content_type, preview_mode, size_bytes, checksum, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) RETURNING ",
        artifact_columns!()
    ))
    .bind(Uuid::now_v7())
    .bind(caller.tenant_id)
    .bind(artifact.workspace_id)
    .bind(artifact.workflow_id)
    .bind(artifact.work_item_id)
    .bind(artifact.task_id)
    .bind(&artifact.stage_name)
    .bind(&artifact.role)
    .bind(blob.id)
    .bind(&key)
    .bind(&artifact.file_name)
    .bind(&artifact.description)
    .bind(&content_type)
    .bind(preview_mode(&content_type))
    .bind(blob.size_bytes)
    .bind(&blob.sha256)
    .bind(now)
    .fetch_one(c)
    .await)?;
    let mut event = NewEvent::new(
        "artifact.created",
        "artifact",
        row.id,
        json!({ "key": row.key, "task_id": row.task_id, "size_bytes": row.size_bytes }),
    );
    event.workspace_id = row.workspace_id;
    event.workflow_id = row.workflow_id;
    events::record(tx, caller, caller.tenant_id, event).await?;
    Ok(row.to_api())
}

/// The `ORDER BY` of an artifact sort value.
pub(crate) fn artifact_sort(sort: Option<&str>) -> Result<usize> {
    Ok(match sort.unwrap_or("-created_at") {
        "-created_at" => 0,
        "created_at" => 1,
        "file_name" => 2,
        "-file_name" => 3,
        "size_bytes" => 4,
        "-size_bytes" => 5,
        _ => {
            return Err(Error::invalid_field(
                "sort",
                "must be created_at, file_name or size_bytes, with a leading - for descending",
            ));
        }
    })
}

impl ControlPlane {
    /// Stores an artifact (a file a task produced) in its own transaction.
    pub async fn add_artifact(&self, caller: &Caller, artifact: NewArtifact) -> Result<Artifact> {
        let mut tx = self.store().begin().await?;
        let stored = insert_artifact(&mut tx, caller, artifact).await?;
        tx.commit().await?;
        Ok(stored)
    }

    /// `POST /workspaces/:id/artifacts` (admin; beyond the contract).
    pub async fn upload_artifact(
        &self,
        caller: &Caller,
        workspace_id: Uuid,
        request: UploadArtifact,
    ) -> Result<Artifact> {
        let item = prepare_parts(
            "",
            &request.file_name,
            &request.content_base64,
            request.content_type.as_deref(),
            request.description.as_deref(),
            request.key.as_deref(),
        )?;
        let mut write = match self
            .begin_idempotent(
                caller,
                "artifacts.upload",
                request.request_id.as_deref(),
                &(workspace_id, &request),
                Storage::Plain,
            )
            .await?
        {
            Begun::Replayed(recorded) => return Ok(recorded),
            Begun::Fresh(write) => write,
        };
        let artifact = insert_artifact(
            &mut write.tx,
            caller,
            NewArtifact {
                workspace_id: Some(workspace_id),
                workflow_id: request.workflow_id,
                work_item_id: request.work_item_id,
                task_id: request.task_id,
                stage_name: request.stage_name.clone(),
                role: request.role.clone(),
                file_name: item.file_name,
                key: Some(item.key),
                description: item.description,
                content_type: Some(item.content_type),
                content: item.bytes,
            },
        )
        .await?;
        write.finish(artifact).await
    }

    /// `GET /workspaces/:id/artifacts`: the explorer, with every filter.
    pub async fn list_artifacts(
        &self,
        caller: &Caller,
        workspace_id: Uuid,
        filter: ArtifactFilter,
        page: PageRequest,
    ) -> Result<Page<Artifact>> {
        let sort = artifact_sort(filter.sort.as_deref())?;
        if let Some(mode) = filter.preview_mode.as_deref()
            && !matches!(mode, "text" | "image" | "download")
        {
            return Err(Error::invalid_field(
                "preview_mode",
                "must be text, image or download",
            ));
        }
        if let (Some(from), Some(to)) = (filter.created_from, filter.created_to)
            && from > to
        {
            return Err(Error::invalid_field(
                "created_to",
                "must not be before created_from",
            ));
        }
        let q = contains_pattern("q", filter.q.as_deref())?.map(|p| p.to_lowercase());
        let (ct_exact, ct_prefix) = match filter
            .content_type
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty())
        {
            None => (None, None),
            Some(ct) => match ct.strip_suffix("/*").or_else(|| ct.strip_suffix('/')) {
                Some(prefix) => (None, Some(format!("{}/%", prefix.to_lowercase()))),
                None => (Some(ct.to_owned()), None),
            },
        };
        let from = filter.created_from.map(|t| t.as_datetime());
        let to = filter.created_to.map(|t| t.as_datetime());
        let mut conn = self.store().read().await?;
        require_workspace(&mut conn, caller.tenant_id, workspace_id).await?;
        macro_rules! filters {
            () => {
                " FROM artifacts WHERE tenant_id = $1 AND workspace_id = $2 \
                 AND ($3 IS NULL OR LOWER(file_name) LIKE $3 ESCAPE '\\' OR LOWER(key) LIKE $3 ESCAPE '\\' \
                      OR LOWER(COALESCE(description, '')) LIKE $3 ESCAPE '\\') \
                 AND ($4 IS NULL OR workflow_id = $4) AND ($5 IS NULL OR work_item_id = $5) \
                 AND ($6 IS NULL OR task_id = $6) AND ($7 IS NULL OR stage_name = $7) AND ($8 IS NULL OR role = $8) \
                 AND ($9 IS NULL OR content_type = $9) AND ($10 IS NULL OR LOWER(content_type) LIKE $10) \
                 AND ($11 IS NULL OR preview_mode = $11) AND ($12 IS NULL OR created_at >= $12) \
                 AND ($13 IS NULL OR created_at <= $13)"
            };
        }
        macro_rules! bind_filters {
            ($query:expr) => {
                $query
                    .bind(caller.tenant_id)
                    .bind(workspace_id)
                    .bind(&q)
                    .bind(filter.workflow_id)
                    .bind(filter.work_item_id)
                    .bind(filter.task_id)
                    .bind(&filter.stage_name)
                    .bind(&filter.role)
                    .bind(&ct_exact)
                    .bind(&ct_prefix)
                    .bind(&filter.preview_mode)
                    .bind(from)
                    .bind(to)
            };
        }
        macro_rules! list_sql {
            ($order:literal) => {
                concat!(
                    "SELECT ",
                    artifact_columns!(),
                    filters!(),
                    " ORDER BY ",
                    $order,
                    " LIMIT $14 OFFSET $15"
                )
            };
        }
        const SORTS: [&str; 6] = [
            list_sql!("created_at DESC, id DESC"),
            list_sql!("created_at ASC, id ASC"),
            list_sql!("file_name ASC, id ASC"),
            list_sql!("file_name DESC, id DESC"),
            list_sql!("size_bytes ASC, id ASC"),
            list_sql!("size_bytes DESC, id DESC"),
        ];
        let (total,): (i64,) = on_db!(&mut conn, c => bind_filters!(sqlx::query_as(concat!("SELECT COUNT(*)", filters!())))
            .fetch_one(c)
            .await)?;
        let rows: Vec<ArtifactRow> = on_db!(&mut conn, c => bind_filters!(sqlx::query_as(SORTS[sort]))
            .bind(i64::from(page.per_page))
            .bind(page.offset() as i64)
            .fetch_all(c)
            .await)?;
        Ok(Page::new(
            rows.iter().map(ArtifactRow::to_api).collect(),
            total as u64,
            page,
        ))
    }

    /// `GET /artifacts/:id/content` (beyond the contract): an artifact's bytes.
    pub async fn open_artifact(&self, caller: &Caller, artifact_id: Uuid) -> Result<Download> {
        let mut conn = self.store().read().await?;
        let row: Option<ArtifactRow> = on_db!(&mut conn, c => sqlx::query_as(concat!(
            "SELECT ", artifact_columns!(), " FROM artifacts WHERE tenant_id = $1 AND id = $2"
        ))
        .bind(caller.tenant_id)
        .bind(artifact_id)
        .fetch_optional(c)
        .await)?;
        let row = row.ok_or(Error::not_found("artifact"))?;
        self.download(
            &mut conn,
            row.blob_id,
            row.file_name,
            row.content_type,
            row.checksum,
            row.size_bytes,
        )
        .await
    }
}
