//! `/workspaces`.

use crate::client::{Client, JsonWithRequestId, M, decode, page_query};
use crate::error::Result;
use crate::paging;
use futures_util::stream::BoxStream;
use orchestrator_core::api::workspaces::{
    Artifact, ArtifactFilter, BatchUpload, CreateWorkspace, FileUpload, GitVerification,
    PatchWorkspace, PutWorkspaceSpec, SetMemory, UploadArtifact, VerifyGitAccess, Workspace,
    WorkspaceFile, WorkspaceFilter, WorkspaceSpec,
};
use orchestrator_core::api::{Event, Page, PageRequest};
use uuid::Uuid;

/// The `Workspaces` routes: get one from [`Client::workspaces`](crate::Client::workspaces).
pub struct Workspaces<'c> {
    pub(crate) client: &'c Client,
}

impl Workspaces<'_> {
    /// `GET /workspaces` with `q` and `is_active` filters.
    pub async fn list(
        &self,
        filter: &WorkspaceFilter,
        page: PageRequest,
    ) -> Result<Page<Workspace>> {
        self.client
            .page(
                self.client
                    .request(M::GET, "/api/v1/workspaces")
                    .query(filter)
                    .query(&page_query(page)),
            )
            .await
    }

    /// `POST /workspaces`.
    pub async fn create(&self, request: &CreateWorkspace) -> Result<Workspace> {
        self.client
            .data(
                self.client
                    .request(M::POST, "/api/v1/workspaces")
                    .json_id(self.client, request),
            )
            .await
    }

    /// `GET /workspaces/:id`.
    pub async fn get(&self, id: Uuid) -> Result<Workspace> {
        self.client
            .data(
                self.client
                    .request(M::GET, &format!("/api/v1/workspaces/{id}")),
            )
            .await
    }

    /// `PATCH /workspaces/:id` (at least one field).
    pub async fn patch(&self, id: Uuid, request: &PatchWorkspace) -> Result<Workspace> {
        self.client
            .data(
                self.client
                    .request(M::PATCH, &format!("/api/v1/workspaces/{id}"))
                    .json_id(self.client, request),
            )
            .await
    }

    /// `PATCH /workspaces/:id/memory`: sets one key.
    pub async fn set_memory(
        &self,
        id: Uuid,
        key: &str,
        value: serde_json::Value,
    ) -> Result<Workspace> {
        self.client
            .data(
                self.client
                    .request(M::PATCH, &format!("/api/v1/workspaces/{id}/memory"))
                    .json(&SetMemory {
                        key: key.to_owned(),
                        value,
                        request_id: None,
                    }),
            )
            .await
    }

    /// `DELETE /workspaces/:id/memory/:key`.
    pub async fn delete_memory(&self, id: Uuid, key: &str) -> Result<Workspace> {
        let mut url = reqwest::Url::parse("http://x/").expect("static URL");
        url.path_segments_mut().expect("base URL").extend([
            "api",
            "v1",
            "workspaces",
            &id.to_string(),
            "memory",
            key,
        ]);
        self.client
            .data(self.client.request(M::DELETE, url.path()))
            .await
    }

    /// `GET /workspaces/:id/spec`, the latest or `version`.
    pub async fn spec(&self, id: Uuid, version: Option<i32>) -> Result<WorkspaceSpec> {
        let mut request = self
            .client
            .request(M::GET, &format!("/api/v1/workspaces/{id}/spec"));
        if let Some(version) = version {
            request = request.query(&[("version", version)]);
        }
        self.client.data(request).await
    }

    /// `PUT /workspaces/:id/spec`: a new version.
    pub async fn put_spec(&self, id: Uuid, request: &PutWorkspaceSpec) -> Result<WorkspaceSpec> {
        self.client
            .data(
                self.client
                    .request(M::PUT, &format!("/api/v1/workspaces/{id}/spec"))
                    .json_id(self.client, request),
            )
            .await
    }

    /// `GET /workspaces/:id/timeline`: the workspace's events, newest first.
    pub async fn timeline(&self, id: Uuid, page: PageRequest) -> Result<Page<Event>> {
        self.client
            .page(
                self.client
                    .request(M::GET, &format!("/api/v1/workspaces/{id}/timeline"))
                    .query(&page_query(page)),
            )
            .await
    }

    /// `POST /workspaces/:id/verify-git-access`. A failed check is an
    /// [`crate::Error::Api`] with code `VERIFICATION_FAILED` whose details
    /// hold the packet.
    pub async fn verify_git_access(
        &self,
        id: Uuid,
        request: &VerifyGitAccess,
    ) -> Result<GitVerification> {
        self.client
            .data(
                self.client
                    .request(
                        M::POST,
                        &format!("/api/v1/workspaces/{id}/verify-git-access"),
                    )
                    .json_id(self.client, request),
            )
            .await
    }

    /// `GET /workspaces/:id/files`.
    pub async fn files(&self, id: Uuid, page: PageRequest) -> Result<Page<WorkspaceFile>> {
        self.client
            .page(
                self.client
                    .request(M::GET, &format!("/api/v1/workspaces/{id}/files"))
                    .query(&page_query(page)),
            )
            .await
    }

    /// `POST /workspaces/:id/files`: one file.
    pub async fn upload_file(&self, id: Uuid, file: &FileUpload) -> Result<WorkspaceFile> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/workspaces/{id}/files"))
                    .json_id(self.client, file),
            )
            .await
    }

    /// `POST /workspaces/:id/files/batch`: up to 10 files.
    pub async fn upload_files(&self, id: Uuid, batch: &BatchUpload) -> Result<Vec<WorkspaceFile>> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/workspaces/{id}/files/batch"))
                    .json_id(self.client, batch),
            )
            .await
    }

    /// `DELETE /workspaces/:id/files/:fileId`.
    pub async fn delete_file(&self, id: Uuid, file_id: Uuid) -> Result<WorkspaceFile> {
        self.client
            .data(self.client.request(
                M::DELETE,
                &format!("/api/v1/workspaces/{id}/files/{file_id}"),
            ))
            .await
    }

    /// `GET /workspaces/:id/files/:fileId/content`: the raw bytes.
    pub async fn download_file(&self, id: Uuid, file_id: Uuid) -> Result<Downloaded> {
        download(
            self.client,
            self.client.request(
                M::GET,
                &format!("/api/v1/workspaces/{id}/files/{file_id}/content"),
            ),
        )
        .await
    }

    /// `GET /workspaces/:id/artifacts`: the explorer.
    pub async fn artifacts(
        &self,
        id: Uuid,
        filter: &ArtifactFilter,
        page: PageRequest,
    ) -> Result<Page<Artifact>> {
        self.client
            .page(
                self.client
                    .request(M::GET, &format!("/api/v1/workspaces/{id}/artifacts"))
                    .query(filter)
                    .query(&page_query(page)),
            )
            .await
    }

    /// `POST /workspaces/:id/artifacts` (admin; beyond the contract).
    pub async fn upload_artifact(&self, id: Uuid, artifact: &UploadArtifact) -> Result<Artifact> {
        self.client
            .data(
                self.client
                    .request(M::POST, &format!("/api/v1/workspaces/{id}/artifacts"))
                    .json_id(self.client, artifact),
            )
            .await
    }

    /// `GET /artifacts/:id/content`: an artifact's raw bytes.
    pub async fn download_artifact(&self, artifact_id: Uuid) -> Result<Downloaded> {
        download(
            self.client,
            self.client
                .request(M::GET, &format!("/api/v1/artifacts/{artifact_id}/content")),
        )
        .await
    }
}

/// A downloaded file: its bytes and the headers that describe them.
#[derive(Debug, Clone)]
pub struct Downloaded {
    /// The content.
    pub bytes: Vec<u8>,
    /// `Content-Type`, when the server sent one.
    pub content_type: Option<String>,
    /// `Content-Disposition`, when the server sent one.
    pub content_disposition: Option<String>,
    /// The quoted SHA-256 of the bytes.
    pub etag: Option<String>,
}

/// Sends `request` through the client (retries, session refresh) and keeps
/// the raw body with its describing headers.
async fn download(client: &Client, request: reqwest::RequestBuilder) -> Result<Downloaded> {
    let response = client.send(request).await?;
    if !response.status().is_success() {
        return Err(decode::<serde_json::Value>(response)
            .await
            .err()
            .unwrap_or_else(|| crate::Error::InvalidUrl("unexpected success".into())));
    }
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let content_type = header("content-type");
    let content_disposition = header("content-disposition");
    let etag = header("etag");
    let bytes = response.bytes().await?.to_vec();
    Ok(Downloaded {
        bytes,
        content_type,
        content_disposition,
        etag,
    })
}

impl Workspaces<'_> {
    /// Every workspace matching `filter`, read page after page (100 at a
    /// time) as one stream; an error ends it.
    pub fn list_all(&self, filter: &WorkspaceFilter) -> BoxStream<'static, Result<Workspace>> {
        let client = self.client.clone();
        let filter = filter.clone();
        paging::pages(move |page| {
            let client = client.clone();
            let filter = filter.clone();
            async move { client.workspaces().list(&filter, page).await }
        })
    }

    /// Every artifact of workspace `id` matching `filter`, page after page,
    /// as one stream; an error ends it.
    pub fn artifacts_all(
        &self,
        id: Uuid,
        filter: &ArtifactFilter,
    ) -> BoxStream<'static, Result<Artifact>> {
        let client = self.client.clone();
        let filter = filter.clone();
        paging::pages(move |page| {
            let client = client.clone();
            let filter = filter.clone();
            async move { client.workspaces().artifacts(id, &filter, page).await }
        })
    }
}
