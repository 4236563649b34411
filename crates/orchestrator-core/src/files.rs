//! Stored bytes, workspace files and artifacts.
//!
//! Bytes live in the database on both backends, apart from the metadata: a
//! `blobs` row (size, SHA-256, chunk count) and `blob_chunks` rows of at most
//! [`CHUNK_BYTES`] each, so lists never touch them and a download reads one
//! chunk per query ([`BlobStream`]) instead of loading the file. Deleting a
//! blob deletes its chunks and the file or artifact row that points at it
//! (foreign keys with `ON DELETE CASCADE`), so a delete leaves nothing behind.
//!
//! Workspace files have a stable `key` per workspace (derived from the file
//! name when omitted): uploading to an existing key replaces that file's
//! content and keeps its id.
//!
//! Artifacts are files that tasks produce. Row shape: `id, workspace_id,
//! workflow_id, work_item_id, task_id, stage_name, role` (plain nullable
//! linkage, no foreign keys to workflow tables), `file_name, key,
//! description, content_type, size_bytes, preview_mode` (`text`, `image` or
//! `download`, derived from the content type), `checksum` (SHA-256 hex, the
//! download's `ETag`), `created_at` and `download_url`
//! (`/api/v1/artifacts/:id/content`). [`ControlPlane::add_artifact`] stores
//! one; [`insert_artifact`] does it inside a caller's transaction (task
//! completion attaches artifacts that way).

use crate::api::workspaces::{
    Artifact, ArtifactFilter, BatchUpload, FileUpload, MAX_BATCH_FILES, MAX_FILE_BYTES,
    UploadArtifact, WorkspaceFile,
};
use crate::api::{Page, PageRequest, Timestamp};
use crate::auth::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::events::{self, NewEvent};
use crate::idempotency::{Begun, Storage};
use crate::store::{Access, Store, Tx, on_db};
use crate::workspaces::require_workspace;
use base64::Engine;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use chrono::{DateTime, Utc};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use uuid::Uuid;

/// Bytes per stored chunk (and per streamed frame).
pub const CHUNK_BYTES: usize = 256 * 1024;

const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Decodes standard base64 (whitespace and missing padding tolerated),
/// refusing more than [`MAX_FILE_BYTES`] decoded.
pub(crate) fn decode_content(field: &str, encoded: &str) -> Result<Vec<u8>> {
    let compact: String = encoded
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    if compact.len() / 4 * 3 > MAX_FILE_BYTES + 3 {
        return Err(too_large(field));
    }
    let bytes = BASE64
        .decode(compact.as_bytes())
        .map_err(|e| Error::invalid_field(field, format!("is not valid base64: {e}")))?;
    if bytes.len() > MAX_FILE_BYTES {
        return Err(too_large(field));
    }
    Ok(bytes)
}

fn too_large(field: &str) -> Error {
    Error::invalid_field(
        field,
        format!("decodes to more than {MAX_FILE_BYTES} bytes (10 MiB)"),
    )
}

/// A key from a file name: lower-case letters, digits, `.`, `_` and `-`,
/// other runs becoming one `-` (`Design Notes.md` → `design-notes.md`).
pub fn derive_key(file_name: &str) -> Option<String> {
    let mut key = String::new();
    for c in file_name.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
            key.push(c);
        } else if !key.ends_with('-') {
            key.push('-');
        }
    }
    let key: String = key
        .trim_matches(|c| c == '-' || c == '.')
        .chars()
        .take(200)
        .collect();
    (!key.is_empty()).then_some(key)
}

fn validate_file_name(field: &str, name: &str) -> Result<()> {
    if name.trim().is_empty()
        || name.len() > 255
        || name
            .chars()
            .any(|c| c.is_control() || c == '/' || c == '\\')
    {
        return Err(Error::invalid_field(
            field,
            "must be 1 to 255 characters without slashes or control characters",
        ));
    }
    Ok(())
}

fn validate_key(field: &str, key: &str) -> Result<()> {
    if key.is_empty() || key.len() > 200 || key.chars().any(char::is_control) {
        return Err(Error::invalid_field(field, "must be 1 to 200 characters"));
    }
    Ok(())
}

fn validate_content_type(field: &str, content_type: &str) -> Result<()> {
    let ok = content_type.len() <= 200
        && content_type
            .split_once('/')
            .is_some_and(|(t, s)| !t.is_empty() && !s.is_empty())
        && content_type
            .chars()
            .all(|c| c.is_ascii_graphic() || c == ' ');
    if ok {
        Ok(())
    } else {
        Err(Error::invalid_field(
            field,
            "must be a MIME type such as text/plain",
        ))
    }
}

/// The content type of a file name's extension (`application/octet-stream`
/// when unknown).
pub fn guess_content_type(file_name: &str) -> &'static str {
    let ext = file_name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("txt" | "log") => "text/plain",
        Some("md" | "markdown") => "text/markdown",
        Some("csv") => "text/csv",
        Some("html" | "htm") => "text/html",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("xml") => "application/xml",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("svg") => "image/svg+xml",
        Some("pdf") => "application/pdf",
        Some("zip") => "application/zip",
        Some("gz" | "tgz") => "application/gzip",
        _ => "application/octet-stream",
    }
}

/// `text`, `image` or `download` for a content type.
pub fn preview_mode(content_type: &str) -> &'static str {
    let base = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if base.starts_with("image/") {
        "image"
    } else if base.starts_with("text/")
        || matches!(
            base.as_str(),
            "application/json"
                | "application/yaml"
                | "application/x-yaml"
                | "application/xml"
                | "application/javascript"
                | "application/toml"
        )
        || base.ends_with("+json")
        || base.ends_with("+xml")
    {
        "text"
    } else {
        "download"
    }
}

/// A stored blob's summary.
pub(crate) struct StoredBlob {
    pub id: Uuid,
    pub size_bytes: i64,
    pub sha256: String,
}

/// Stores `bytes` as a blob (in chunks) inside `tx`.
pub(crate) async fn insert_blob(
    tx: &mut Tx,
    tenant_id: Uuid,
    workspace_id: Option<Uuid>,
    bytes: &[u8],
) -> Result<StoredBlob> {
    let id = Uuid::new_v4();
    let sha256: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let chunks: Vec<&[u8]> = bytes.chunks(CHUNK_BYTES).collect();
    on_db!(tx, c => sqlx::query(
        "INSERT INTO blobs (id, tenant_id, workspace_id, size_bytes, sha256, chunk_count, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(id)
    .bind(tenant_id)
    .bind(workspace_id)
    .bind(bytes.len() as i64)
    .bind(&sha256)
    .bind(chunks.len() as i32)
    .bind(Timestamp::now().as_datetime())
    .execute(c).await.map(|r| r.rows_affected()))?;
    for (seq, chunk) in chunks.iter().enumerate() {
        on_db!(tx, c => sqlx::query("INSERT INTO blob_chunks (blob_id, seq, data) VALUES ($1, $2, $3)")
            .bind(id)
            .bind(seq as i32)
            .bind(*chunk)
            .execute(c).await.map(|r| r.rows_affected()))?;
    }
    Ok(StoredBlob {
        id,
        size_bytes: bytes.len() as i64,
        sha256,
    })
}

/// Deletes a blob, its chunks and the file or artifact row pointing at it.
pub(crate) async fn delete_blob(tx: &mut Tx, tenant_id: Uuid, blob_id: Uuid) -> Result<()> {
    on_db!(tx, c => sqlx::query("DELETE FROM blobs WHERE tenant_id = $1 AND id = $2")
        .bind(tenant_id)
        .bind(blob_id)
        .execute(c).await.map(|r| r.rows_affected()))?;
    Ok(())
}

/// Reads a blob one chunk per query, each on a pooled read connection taken
/// only for that query, so a slow download holds no connection.
#[derive(Debug)]
pub struct BlobStream {
    store: Store,
    blob_id: Uuid,
    next: i32,
    count: i32,
}

impl BlobStream {
    /// The next chunk, or `None` at the end.
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>> {
        if self.next >= self.count {
            return Ok(None);
        }
        let mut conn = self.store.read().await?;
        let row: Option<(Vec<u8>,)> = on_db!(&mut conn, c => sqlx::query_as(
            "SELECT data FROM blob_chunks WHERE blob_id = $1 AND seq = $2",
        )
        .bind(self.blob_id)
        .bind(self.next)
        .fetch_optional(c)
        .await)?;
        let (data,) =
            row.ok_or_else(|| Error::internal("file content changed during the download"))?;
        self.next += 1;
        Ok(Some(data))
    }
}

/// A download: headers' material plus the byte stream.
#[derive(Debug)]
pub struct Download {
    pub file_name: String,
    pub content_type: String,
    pub size_bytes: i64,
    /// SHA-256 hex of the bytes (the `ETag`).
    pub checksum: String,
    pub content: BlobStream,
}

#[derive(Debug, Clone, sqlx::FromRow)]
struct FileRow {
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

macro_rules! file_columns {
    () => {
        "id, workspace_id, blob_id, key, file_name, description, content_type, size_bytes, checksum, created_at, updated_at"
    };
}

impl FileRow {
    fn to_api(&self) -> WorkspaceFile {
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

/// A checked upload item.
struct Prepared {
    key: String,
    file_name: String,
    description: Option<String>,
    content_type: String,
    bytes: Vec<u8>,
}

fn prepare(prefix: &str, item: &FileUpload) -> Result<Prepared> {
    prepare_parts(
        prefix,
        &item.file_name,
        &item.content_base64,
        item.content_type.as_deref(),
        item.description.as_deref(),
        item.key.as_deref(),
    )
}

fn prepare_parts(
    prefix: &str,
    file_name: &str,
    content_base64: &str,
    content_type: Option<&str>,
    description: Option<&str>,
    key: Option<&str>,
) -> Result<Prepared> {
    let field = |name: &str| format!("{prefix}{name}");
    validate_file_name(&field("file_name"), file_name)?;
    let key = match key {
        Some(key) => {
            validate_key(&field("key"), key)?;
            key.to_owned()
        }
        None => derive_key(file_name).ok_or_else(|| {
            Error::invalid_field(
                &field("key"),
                "cannot be derived from the file name; give one",
            )
        })?,
    };
    let content_type = match content_type {
        Some(ct) => {
            validate_content_type(&field("content_type"), ct)?;
            ct.to_owned()
        }
        None => guess_content_type(file_name).to_owned(),
    };
    if description.is_some_and(|d| d.len() > 10_000) {
        return Err(Error::invalid_field(
            &field("description"),
            "must be at most 10000 characters",
        ));
    }
    Ok(Prepared {
        key,
        file_name: file_name.to_owned(),
        description: description.map(str::to_owned),
        content_type,
        bytes: decode_content(&field("content_base64"), content_base64)?,
    })
}

/// Stores one prepared file in `tx`: a new file, or new content for the
/// file already at that key.
async fn put_file(
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
    let now = Timestamp::now().as_datetime();
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
struct ArtifactRow {
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

macro_rules! artifact_columns {
    () => {
        "id, workspace_id, workflow_id, work_item_id, task_id, stage_name, role, blob_id, key, file_name, \
         description, content_type, preview_mode, size_bytes, checksum, created_at"
    };
}

impl ArtifactRow {
    fn to_api(&self) -> Artifact {
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

fn validate_label(field: &str, value: Option<&str>) -> Result<()> {
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
        return Err(too_large("content"));
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
    let row: ArtifactRow = on_db!(tx, c => sqlx::query_as(concat!(
        "INSERT INTO artifacts (id, tenant_id, workspace_id, workflow_id, work_item_id, task_id, stage_name, role, \
         blob_id, key, file_name, description, content_type, preview_mode, size_bytes, checksum, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) RETURNING ",
        artifact_columns!()
    ))
    .bind(Uuid::new_v4())
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
    .bind(Timestamp::now().as_datetime())
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
fn artifact_sort(sort: Option<&str>) -> Result<usize> {
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

    async fn find_file(
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

    async fn download(
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
        let q = filter
            .q
            .as_deref()
            .map(str::trim)
            .filter(|q| !q.is_empty())
            .map(|q| format!("%{}%", q.to_lowercase()));
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
                 AND ($3 IS NULL OR LOWER(file_name) LIKE $3 OR LOWER(key) LIKE $3 OR LOWER(COALESCE(description, '')) LIKE $3) \
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_types_and_preview_modes() {
        assert_eq!(
            derive_key("Design Notes.md").as_deref(),
            Some("design-notes.md")
        );
        assert_eq!(
            derive_key("  Report (final).PDF").as_deref(),
            Some("report-final-.pdf")
        );
        assert_eq!(derive_key("***"), None);
        assert_eq!(guess_content_type("x.PNG"), "image/png");
        assert_eq!(preview_mode("text/markdown; charset=utf-8"), "text");
        assert_eq!(preview_mode("application/vnd.api+json"), "text");
        assert_eq!(preview_mode("image/png"), "image");
        assert_eq!(preview_mode("application/octet-stream"), "download");
        assert!(decode_content("c", "aGVsbG8").unwrap() == b"hello");
        assert!(decode_content("c", "aGVs\nbG8=").unwrap() == b"hello");
        assert!(decode_content("c", "!!!").is_err());
    }
}
