//! Blob storage: content kept in fixed-size chunks in the database, hashed
//! on the way in, and streamed back out chunk by chunk.

use crate::error::{Error, Result};
use crate::store::{Store, Tx, on_db};
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// Bytes per stored chunk (and per streamed frame).
pub const CHUNK_BYTES: usize = 256 * 1024;

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
    let now = tx.now().as_datetime();
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
    .bind(now)
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
    pub(crate) store: Store,
    pub(crate) blob_id: Uuid,
    pub(crate) next: i32,
    pub(crate) count: i32,
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
    /// The name the file was uploaded with (for `Content-Disposition`).
    pub file_name: String,
    /// The media type recorded at upload (`Content-Type`).
    pub content_type: String,
    /// The whole file's length in bytes (`Content-Length`), known before
    /// the first chunk is read.
    pub size_bytes: i64,
    /// SHA-256 hex of the bytes (the `ETag`).
    pub checksum: String,
    /// The bytes, read chunk by chunk from the database as the response
    /// is sent rather than held in memory.
    pub content: BlobStream,
}
