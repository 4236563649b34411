//! Workspace files: single and batch upload, list, delete and download.

use crate::api::workspaces::{BatchUpload, FileUpload, MAX_BATCH_FILES, WorkspaceFile};
use crate::api::{Page, PageRequest};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Begun, Storage};
use crate::store::{Access, Tx, on_db};
use crate::workspaces::require_workspace;
use chrono::{DateTime, Utc};
use serde_json::json;
use std::collections::HashSet;
use uuid::Uuid;

use super::blobs::{BlobStream, Download, delete_blob, insert_blob};
use super::content::{Prepared, prepare, preview_mode};

#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct FileRow {
    id: Uuid,
    workspace_id: Uuid,
    blob_id: Uuid,
    key: String,
    file_name: String,
    description: Option<String>,
    content_type: String,
    size_bytes: i64,
    checksum: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl FileRow {
    pub(crate) fn to_api(&self) -> WorkspaceFile {
        WorkspaceFile {
            id: self.id,
            workspace_id: self.workspace_id,
            key: self.key.clone(),
            file_name: self.file_name.clone(),
            description: self.description.clone(),
            content_type: self.content_type.clone(),
            size_bytes: self.size_bytes,
            preview_mode: preview_mode(&self.content_type).to_owned(),
            checksum: self.checksum.clone(),
            download_url: format!(
                "/api/v1/workspaces/{}/files/{}/content",
                self.workspace_id, self.id
            ),
            created_at: self.created_at.into(),
            updated_at: self.updated_at.into(),
        }
    }
}

macro_rules! file_columns {
    () => {
        "id, workspace_id, blob_id, key, file_name, description, content_type, size_bytes, checksum, created_at, updated_at"
    };
}

/// Stores one prepared file in `tx`: a new file, or new content for the
/// file already at that key.
pub(crate) async fn put_file(
    tx: &mut Tx,
    caller: &Caller,
    workspace_id: Uuid,
    item: &Prepared,
) -> Result<WorkspaceFile> {
    let existing: Option<FileRow> = on_db!(tx, c => sqlx::query_as(concat!(
        "SELECT ", file_columns!(), " FROM workspace_files WHERE tenant_id = $1 AND workspace_id = $2 AND key = $3"
    ))
    .bind(caller.tenant_id)
    .bind(workspace_id)
    .bind(&item.key)
    .fetch_optional(c)
    .await)?;
    let blob = insert_blob(tx, caller.tenant_id, Some(workspace_id), &item.bytes).await?;
    let now = tx.now().as_datetime();
    let row: FileRow = match &existing {
        Some(old) => on_db!(tx, c => sqlx::query_as(concat!(
            "UPDATE workspace_files SET blob_id = $1, file_name = $2, description = $3, content_type = $4, \
             size_bytes = $5, checksum = $6, updated_at = $7 WHERE id = $8 RETURNING ", file_columns!()
        ))
        .bind(blob.id)
        .bind(&item.file_name)
        .bind(&item.description)
        .bind(&item.content_type)
        .bind(blob.size_bytes)
        .bind(&blob.sha256)
        .bind(now)
        .bind(old.id)
        .fetch_one(c)
        .await)?,
        None => on_db!(tx, c => sqlx::query_as(concat!(
            "INSERT INTO workspace_files (id, tenant_id, workspace_id, blob_id, key, file_name, description, \
             content_type, size_bytes, checksum, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11) RETURNING ", file_columns!()
        ))
        .bind(Uuid::new_v4())
        .bind(caller.tenant_id)
        .bind(workspace_id)
        .bind(blob.id)
        .bind(&item.key)
        .bind(&item.file_name)
        .bind(&item.description)
        .bind(&item.content_type)
        .bind(blob.size_bytes)
        .bind(&blob.sha256)
        .bind(now)
        .fetch_one(c)
        .await)?,
    };
    if let Some(old) = &existing {
        delete_blob(tx, caller.tenant_id, old.blob_id).await?;
    }
    let mut event = NewEvent::new(
        "workspace.file_uploaded",
        "workspace_file",
        row.id,
        json!({ "key": row.key, "size_bytes": row.size_bytes, "replaced": existing.is_some() }),
    );
    event.workspace_id = Some(workspace_id);
    events::record(tx, caller, caller.tenant_id, event).await?;
    Ok(row.to_api())
}

impl ControlPlane {
    /// `POST /workspaces/:id/files`: one file.
    pub async fn upload_workspace_file(
        &self,
        caller: &Caller,
        workspace_id: Uuid,
        request: FileUpload,
    ) -> Result<WorkspaceFile> {
        let item = prepare("", &request)?;
        let mut write = match self
            .begin_idempotent(
                caller,
                "workspaces.files.upload",
                request.request_id.as_deref(),
                &(workspace_id, &request),
                Storage::Plain,
            )
            .await?
        {
            Begun::Replayed(recorded) => return Ok(recorded),
            Begun::Fresh(write) => write,
        };
        require_workspace(&mut write.tx, caller.tenant_id, workspace_id).await?;
        let file = put_file(&mut write.tx, caller, workspace_id, &item).await?;
        write.finish(file).await
    }

    /// `POST /workspaces/:id/files/batch`: 1 to 10 files, all or none.
    pub async fn upload_workspace_files(
        &self,
        caller: &Caller,
        workspace_id: Uuid,
        request: BatchUpload,
    ) -> Result<Vec<WorkspaceFile>> {
        if request.files.is_empty() || request.files.len() > MAX_BATCH_FILES {
            return Err(Error::invalid_field(
                "files",
                format!("must hold 1 to {MAX_BATCH_FILES} files"),
            ));
        }
        let mut items = Vec::with_capacity(request.files.len());
        let mut keys = HashSet::new();
        for (index, file) in request.files.iter().enumerate() {
            if file.request_id.is_some() {
                return Err(Error::invalid_field(
                    &format!("files.{index}.request_id"),
                    "give request_id on the batch, not on its files",
                ));
            }
            let item = prepare(&format!("files.{index}."), file)?;
            if !keys.insert(item.key.clone()) {
                return Err(Error::invalid_field(
                    &format!("files.{index}.key"),
                    format!("`{}` is used by another file of this batch", item.key),
                ));
            }
            items.push(item);
        }
        let mut write = match self
            .begin_idempotent(
                caller,
                "workspaces.files.batch",
                request.request_id.as_deref(),
                &(workspace_id, &request),
                Storage::Plain,
            )
            .await?
        {
            Begun::Replayed(recorded) => return Ok(recorded),
            Begun::Fresh(write) => write,
        };
        require_workspace(&mut write.tx, caller.tenant_id, workspace_id).await?;
        let mut files = Vec::with_capacity(items.len());
        for item in &items {
            files.push(put_file(&mut write.tx, caller, workspace_id, item).await?);
        }
        write.finish(files).await
    }

    /// `GET /workspaces/:id/files`: newest first.
    pub async fn list_workspace_files(
        &self,
        caller: &Caller,
        workspace_id: Uuid,
        page: PageRequest,
    ) -> Result<Page<WorkspaceFile>> {
        let mut conn = self.store().read().await?;
        require_workspace(&mut conn, caller.tenant_id, workspace_id).await?;
        let (total,): (i64,) = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT COUNT(*) FROM workspace_files WHERE tenant_id = $1 AND workspace_id = $2",
        )
        .bind(caller.tenant_id)
        .bind(workspace_id)
        .fetch_one(c)
        .await)?;
        let rows: Vec<FileRow> = on_db!(&mut conn, c => sqlx::query_as(concat!(
            "SELECT ", file_columns!(), " FROM workspace_files WHERE tenant_id = $1 AND workspace_id = $2 \
             ORDER BY updated_at DESC, id DESC LIMIT $3 OFFSET $4"
        ))
        .bind(caller.tenant_id)
        .bind(workspace_id)
        .bind(i64::from(page.per_page))
        .bind(page.offset() as i64)
        .fetch_all(c)
        .await)?;
        Ok(Page::new(
            rows.iter().map(FileRow::to_api).collect(),
            total as u64,
            page,
        ))
    }

    pub(crate) async fn find_file(
        &self,
        access: &mut impl Access,
        caller: &Caller,
        workspace_id: Uuid,
        file_id: Uuid,
    ) -> Result<FileRow> {
        let row: Option<FileRow> = on_db!(access, c => sqlx::query_as(concat!(
            "SELECT ", file_columns!(), " FROM workspace_files WHERE tenant_id = $1 AND workspace_id = $2 AND id = $3"
        ))
        .bind(caller.tenant_id)
        .bind(workspace_id)
        .bind(file_id)
        .fetch_optional(c)
        .await)?;
        row.ok_or(Error::not_found("file"))
    }

    /// `DELETE /workspaces/:id/files/:fileId` (beyond the contract): removes
    /// the file and its bytes; answers the removed record.
    pub async fn delete_workspace_file(
        &self,
        caller: &Caller,
        workspace_id: Uuid,
        file_id: Uuid,
    ) -> Result<WorkspaceFile> {
        let mut tx = self.store().begin().await?;
        let row = self
            .find_file(&mut tx, caller, workspace_id, file_id)
            .await?;
        delete_blob(&mut tx, caller.tenant_id, row.blob_id).await?;
        let mut event = NewEvent::new(
            "workspace.file_deleted",
            "workspace_file",
            row.id,
            json!({ "key": row.key }),
        );
        event.workspace_id = Some(workspace_id);
        events::record(&mut tx, caller, caller.tenant_id, event).await?;
        tx.commit().await?;
        Ok(row.to_api())
    }

    /// `GET /workspaces/:id/files/:fileId/content`: the bytes, as a stream.
    pub async fn open_workspace_file(
        &self,
        caller: &Caller,
        workspace_id: Uuid,
        file_id: Uuid,
    ) -> Result<Download> {
        let mut conn = self.store().read().await?;
        let row = self
            .find_file(&mut conn, caller, workspace_id, file_id)
            .await?;
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

    pub(crate) async fn download(
        &self,
        access: &mut impl Access,
        blob_id: Uuid,
        file_name: String,
        content_type: String,
        checksum: String,
        size_bytes: i64,
    ) -> Result<Download> {
        let (count,): (i32,) = on_db!(access, c => sqlx::query_as("SELECT chunk_count FROM blobs WHERE id = $1")
            .bind(blob_id)
            .fetch_one(c)
            .await)?;
        Ok(Download {
            file_name,
            content_type,
            size_bytes,
            checksum,
            content: BlobStream {
                store: self.store().clone(),
                blob_id,
                next: 0,
                count,
            },
        })
    }
}
