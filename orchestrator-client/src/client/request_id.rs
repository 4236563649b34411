//! Write bodies that carry a `request_id`: the client can fill one in, so
//! that the write is safe to retry (the server replays instead of acting
//! twice).

use super::Client;
use reqwest::RequestBuilder;

/// A request body with a `request_id` field.
pub(crate) trait CarriesRequestId: serde::Serialize + Clone {
    fn request_id(&self) -> Option<&str>;
    fn set_request_id(&mut self, id: String);
}

macro_rules! carries_request_id {
    ($($t:ty),* $(,)?) => {$(
        impl CarriesRequestId for $t {
            fn request_id(&self) -> Option<&str> {
                self.request_id.as_deref()
            }
            fn set_request_id(&mut self, id: String) {
                self.request_id = Some(id);
            }
        }
    )*};
}

use orchestrator_core::api as w;
carries_request_id!(
    w::SubmitA2aTask,
    w::RegisterAgent,
    w::RegisterWorker,
    w::CreateApiKey,
    w::catalog::ImportRequest,
    w::environments::CreateExecutionEnvironment,
    w::environments::PatchExecutionEnvironment,
    w::environments::CreateFromCatalog,
    w::schedules::CreateSchedule,
    w::schedules::PatchSchedule,
    w::schedules::TriggerSchedule,
    w::schedules::BackfillSchedule,
    w::playbooks::CreatePlaybook,
    w::playbooks::PatchPlaybook,
    w::playbooks::ArchivePlaybook,
    w::CreateTask,
    w::CreateHandoff,
    w::StartTask,
    w::CompleteTask,
    w::TaskArtifact,
    w::FailTask,
    w::RescheduleTask,
    w::TaskAction,
    w::CreateTenant,
    w::CreateWorkflow,
    w::CreateWorkItem,
    w::EnqueueActivation,
    w::RedriveWorkflow,
    w::WorkflowAction,
    w::PlanningWorkflow,
    w::workspaces::CreateWorkspace,
    w::workspaces::PatchWorkspace,
    w::workspaces::SetMemory,
    w::workspaces::PutWorkspaceSpec,
    w::workspaces::FileUpload,
    w::workspaces::BatchUpload,
    w::workspaces::UploadArtifact,
    w::workspaces::VerifyGitAccess,
);

/// `.json_id(client, request)`: [`Client::json`] in builder position.
pub(crate) trait JsonWithRequestId {
    fn json_id<T: CarriesRequestId>(self, client: &Client, request: &T) -> Self;
}

impl JsonWithRequestId for RequestBuilder {
    fn json_id<T: CarriesRequestId>(self, client: &Client, request: &T) -> Self {
        client.json(self, request)
    }
}
