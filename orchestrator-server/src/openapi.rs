//! The OpenAPI 3.1 document, generated from the route table and the wire types.
//!
//! Nothing here is written by hand that the code already knows: the paths,
//! methods, scopes, body limits and rate limiting come from
//! [`crate::routes::table`], and every schema is the `schemars::JsonSchema` of
//! the wire type in `orchestrator_core::api` (the `schema` feature). What the
//! table cannot know, each route's input and output types, is said once per
//! route in [`docs`] below, keyed by method and path.
//!
//! A route of the table with no entry here is still listed, marked
//! `x-undocumented: true`; `tests/openapi.rs` fails on such a route, so a new
//! route cannot land undocumented. Served at `GET /api/v1/openapi.json`; the
//! reference page at `GET /api/docs` renders it.

use crate::app::App;
use crate::error::ApiError;
use crate::request::Req;
use crate::response::Reply;
use crate::routes::{Access, Route};
use http::{HeaderValue, Method, StatusCode, header};
use orchestrator_core::api::a2a::{A2aTask, A2aTaskEvent, AgentCard, SubmitA2aTask};
use orchestrator_core::api::acp::{
    AcpClaim, AcpClaimed, AcpHeartbeat, AcpSession, AcpSessionFilter, CreateAcpSession,
};
use orchestrator_core::api::catalog::{
    CatalogDetail, CatalogEntry, ImportPreview, ImportRequest, ImportResult, LibraryItem,
};
use orchestrator_core::api::environments::{
    CreateExecutionEnvironment, CreateFromCatalog, EnvironmentCatalogEntry, ExecutionEnvironment,
    PatchExecutionEnvironment, SetSupportStatus, Verification,
};
use orchestrator_core::api::fleet::{Container, FleetWorker};
use orchestrator_core::api::playbooks::{
    ArchivePlaybook, CreatePlaybook, DeletedPlaybook, PatchPlaybook, Playbook,
    PlaybookDeleteImpact, PlaybookSummary,
};
use orchestrator_core::api::settings::{LlmSettings, PutLlmSettings};
use orchestrator_core::api::workspaces::{
    Artifact, ArtifactFilter, BatchUpload, CreateWorkspace, FileUpload, GitVerification,
    PatchWorkspace, PutWorkspaceSpec, SetMemory, UploadArtifact, VerifyGitAccess, Workspace,
    WorkspaceFile, WorkspaceSpec,
};
use orchestrator_core::api::*;
use schemars::generate::SchemaSettings;
use schemars::transform::ReplaceBoolSchemas;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value, json};
use std::sync::{Arc, OnceLock};

/// A schema from the generator: a `$ref` into `components/schemas` for named
/// types.
type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

fn schema<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    let schema = generator.subschema_for::<T>();
    // Any JSON (`serde_json::Value`) is the schema `true`; say `{}`, which
    // every tool reads.
    if schema.as_bool() == Some(true) {
        schemars::json_schema!({})
    } else {
        schema
    }
}

/// What a successful call answers.
#[derive(Clone, Copy)]
enum Success {
    /// `{data: T, meta}` with this status.
    Data(StatusCode, SchemaFn),
    /// `{data: [T], meta: {total, page, per_page, pages, ...}}`.
    Page(SchemaFn),
    /// `{data: [T], meta}` where `meta` carries these cursor fields
    /// (name, JSON schema) beside `request_id` and `timestamp`.
    Cursor(SchemaFn, &'static [(&'static str, &'static str)]),
    /// A JSON body with no envelope.
    Plain(SchemaFn),
    /// `text/event-stream`; each frame's `data:` is one T.
    Events(SchemaFn, &'static str),
    /// A file's bytes with its own media type (`200`, or `304` on a matching
    /// `If-None-Match`).
    Download,
    /// A body of these media types (HTML, text), not JSON.
    Text(&'static [&'static str]),
    /// An export: a JSON array of T, or CSV.
    Export(SchemaFn),
}

/// How a query parameter is typed.
#[derive(Clone, Copy)]
enum Query {
    /// The properties of a wire type parsed from the query string.
    Struct(SchemaFn),
    /// One parameter: name, JSON schema, description.
    One(&'static str, &'static str, &'static str),
    /// `page` and `per_page`.
    Paging,
    /// One parameter typed by a wire enum: name, enum, description, required.
    Enum(&'static str, SchemaFn, &'static str, bool),
}

/// The description of one route: what the table cannot know.
struct Doc {
    method: Method,
    path: &'static str,
    summary: &'static str,
    body: Option<SchemaFn>,
    query: Vec<Query>,
    /// Path parameters that are free text rather than UUIDs.
    text_params: &'static [&'static str],
    success: Success,
    /// `204 No Content` when there is nothing to claim.
    no_content: bool,
    /// Contract error bodies that are not the envelope: status, JSON schema.
    plain_errors: Vec<(StatusCode, &'static str)>,
}

fn op(method: Method, path: &'static str, summary: &'static str, success: Success) -> Doc {
    Doc {
        method,
        path,
        summary,
        body: None,
        query: Vec::new(),
        text_params: &[],
        success,
        no_content: false,
        plain_errors: Vec::new(),
    }
}

fn ok<T: JsonSchema>() -> Success {
    Success::Data(StatusCode::OK, schema::<T>)
}
fn created<T: JsonSchema>() -> Success {
    Success::Data(StatusCode::CREATED, schema::<T>)
}
fn page<T: JsonSchema>() -> Success {
    Success::Page(schema::<T>)
}
fn plain<T: JsonSchema>() -> Success {
    Success::Plain(schema::<T>)
}

const EVENT_CURSOR: &[(&str, &str)] = &[
    ("next_after", r#"{"type": ["string", "null"]}"#),
    ("has_more", r#"{"type": "boolean"}"#),
];
const LOG_CURSOR: &[(&str, &str)] = &[
    ("next_cursor", r#"{"type": ["string", "null"]}"#),
    ("per_page", r#"{"type": "integer", "minimum": 1}"#),
];
const HTML: &[&str] = &["text/html; charset=utf-8"];

impl Doc {
    fn body<T: JsonSchema>(mut self) -> Self {
        self.body = Some(schema::<T>);
        self
    }
    fn query<T: JsonSchema>(mut self) -> Self {
        self.query.push(Query::Struct(schema::<T>));
        self
    }
    fn param(mut self, name: &'static str, schema: &'static str, about: &'static str) -> Self {
        self.query.push(Query::One(name, schema, about));
        self
    }
    fn query_enum<T: JsonSchema>(mut self, name: &'static str, about: &'static str) -> Self {
        self.query
            .push(Query::Enum(name, schema::<T>, about, false));
        self
    }
    fn query_enum_required<T: JsonSchema>(
        mut self,
        name: &'static str,
        about: &'static str,
    ) -> Self {
        self.query.push(Query::Enum(name, schema::<T>, about, true));
        self
    }
    fn paged(mut self) -> Self {
        self.query.push(Query::Paging);
        self
    }
    fn text_params(mut self, names: &'static [&'static str]) -> Self {
        self.text_params = names;
        self
    }
    fn or_no_content(mut self) -> Self {
        self.no_content = true;
        self
    }
    fn plain_error(mut self, status: StatusCode, schema: &'static str) -> Self {
        self.plain_errors.push((status, schema));
        self
    }
}

const UUID: &str = r#"{"type": "string", "format": "uuid"}"#;
const TEXT: &str = r#"{"type": "string"}"#;
const BOOL: &str = r#"{"type": "boolean"}"#;
const INT: &str = r#"{"type": "integer", "format": "int64"}"#;
const CURSOR_AFTER: &str = r#"{"type": "integer", "format": "int64", "minimum": 0}"#;

/// Every route's input and output types, in the order of the route table.
/// A new route in [`crate::routes::table`] gets its line here.
fn docs() -> Vec<Doc> {
    use Method as M;
    let events_sse = Success::Events(
        schema::<Event>,
        "One event record per frame; the SSE `event:` is the event type and `id:` the event id (resume with `Last-Event-ID` or `?after=`). Comment lines keep the connection alive.",
    );
    vec![
        op(M::GET, "/healthz", "Liveness", ok::<Liveness>()),
        op(M::GET, "/readyz", "Readiness (the database answers)", ok::<Readiness>()),
        op(M::GET, "/api/v1/version", "The server's version", ok::<ServerVersion>()),
        op(M::GET, "/metrics", "Prometheus metrics", Success::Text(&["text/plain; version=0.0.4"])),
        op(M::GET, "/api/v1/openapi.json", "This document", plain::<Value>()),
        op(M::GET, "/api/docs", "The API reference page", Success::Text(HTML)),
        op(M::GET, "/api/docs/{asset}", "A file of the reference page", Success::Text(&["text/javascript; charset=utf-8", "text/css; charset=utf-8"])).text_params(&["asset"]),
        // Authentication
        op(M::POST, "/api/v1/auth/token", "Exchange an API key for a session", ok::<TokenResponse>()).body::<TokenRequest>(),
        op(M::POST, "/api/v1/auth/login", "Exchange an API key for a session (alias of /auth/token)", ok::<TokenResponse>()).body::<TokenRequest>(),
        op(M::GET, "/api/v1/auth/me", "The caller", ok::<Me>()),
        op(M::POST, "/api/v1/auth/refresh", "A new access token from a refresh token (bearer or refresh cookie with the CSRF header)", ok::<RefreshResponse>()),
        op(M::POST, "/api/v1/auth/logout", "End the session and clear the cookies", ok::<LoggedOut>()),
        // Tenants and keys
        op(M::POST, "/api/v1/tenants", "Create a tenant and its first admin key", created::<CreatedTenant>()).body::<CreateTenant>(),
        op(M::GET, "/api/v1/tenants", "List tenants", page::<Tenant>()).paged(),
        op(M::GET, "/api/v1/api-keys", "List API keys", page::<ApiKey>()).paged(),
        op(M::POST, "/api/v1/api-keys", "Create an API key (the secret is shown once)", created::<CreatedApiKey>()).body::<CreateApiKey>(),
        op(M::DELETE, "/api/v1/api-keys/{id}", "Revoke an API key", ok::<ApiKey>()),
        // Agents and workers
        op(M::POST, "/api/v1/agents/register", "Register an agent", created::<Agent>()).body::<RegisterAgent>(),
        op(M::GET, "/api/v1/agents", "List agents", page::<Agent>()).paged(),
        op(M::GET, "/api/v1/agents/{id}", "Get an agent", ok::<Agent>()),
        op(M::POST, "/api/v1/agents/{id}/heartbeat", "Agent heartbeat", ok::<HeartbeatAck>()),
        op(M::POST, "/api/v1/workers/register", "Register a worker", created::<RegisteredWorker>()).body::<RegisterWorker>(),
        op(M::GET, "/api/v1/workers", "List workers", page::<Worker>()).paged(),
        op(M::GET, "/api/v1/workers/{id}", "Get a worker", ok::<Worker>()),
        op(M::POST, "/api/v1/workers/{id}/heartbeat", "Worker heartbeat", ok::<WorkerHeartbeatAck>()).body::<WorkerHeartbeat>(),
        op(M::POST, "/api/v1/workers/{id}/next", "Claim the worker's next task", ok::<Task>()).body::<WorkerNext>().or_no_content(),
        op(M::POST, "/api/v1/workers/{id}/signal", "Send a signal to a connected worker", ok::<SignalSent>()).body::<SignalWorker>(),
        // Tasks
        op(M::POST, "/api/v1/tasks", "Create a task", created::<Task>()).body::<CreateTask>(),
        op(M::GET, "/api/v1/tasks", "List tasks", page::<Task>()).query::<TaskFilter>(),
        op(M::POST, "/api/v1/tasks/claim", "Claim a ready task", ok::<Task>()).body::<ClaimTask>().or_no_content(),
        op(M::GET, "/api/v1/tasks/{id}", "Get a task", ok::<Task>()),
        op(M::GET, "/api/v1/tasks/{id}/context", "A task's context packet", ok::<TaskContext>()).query::<TaskContextQuery>(),
        op(M::GET, "/api/v1/tasks/{id}/git", "A task's git coordinates", ok::<TaskGit>()),
        op(M::GET, "/api/v1/tasks/{id}/stream", "Follow a streaming task's events", events_sse)
            .param("after", CURSOR_AFTER, "Resume after this event id")
            .plain_error(StatusCode::CONFLICT, r#"{"type": "object", "required": ["error"], "properties": {"error": {"const": "task_not_streaming"}}}"#),
        op(M::POST, "/api/v1/tasks/{id}/claim-credentials", "Resolve the credentials of a claimed task", ok::<ClaimedCredentials>()).body::<ClaimCredentials>(),
        op(M::POST, "/api/v1/tasks/{id}/token", "A token limited to this task, for the assignee's command", created::<TaskToken>()).body::<IssueTaskToken>(),
        op(M::POST, "/api/v1/tasks/{id}/start", "Start a claimed task", ok::<Task>()).body::<StartTask>(),
        op(M::POST, "/api/v1/tasks/{id}/complete", "Complete a task", ok::<Task>()).body::<CompleteTask>(),
        op(M::POST, "/api/v1/tasks/{id}/fail", "Fail a task", ok::<Task>()).body::<FailTask>(),
        op(M::POST, "/api/v1/tasks/{id}/retry", "Retry a task", ok::<Task>()).body::<TaskAction>(),
        op(M::POST, "/api/v1/tasks/{id}/request-changes", "Send a task back with requested changes", ok::<Task>()).body::<TaskAction>(),
        op(M::POST, "/api/v1/tasks/{id}/reassign", "Reassign a task", ok::<Task>()).body::<TaskAction>(),
        op(M::POST, "/api/v1/tasks/{id}/skip", "Skip a task", ok::<Task>()).body::<TaskAction>(),
        op(M::POST, "/api/v1/tasks/{id}/escalate", "Escalate a task", ok::<Task>()).body::<TaskAction>(),
        op(M::POST, "/api/v1/tasks/{id}/resolve-escalation", "Resolve a task's escalation", ok::<Task>()).body::<TaskAction>(),
        op(M::POST, "/api/v1/tasks/{id}/approve-output", "Approve a task's output", ok::<Task>()).body::<TaskAction>(),
        op(M::POST, "/api/v1/tasks/{id}/cancel", "Cancel a task", ok::<Task>()).body::<TaskAction>(),
        op(M::GET, "/api/v1/tasks/{id}/handoffs", "A task's handoffs", ok::<Vec<Handoff>>()),
        op(M::POST, "/api/v1/tasks/{id}/handoffs", "Record a handoff", created::<Handoff>()).body::<CreateHandoff>(),
        op(M::POST, "/api/v1/tasks/{id}/artifacts", "Attach an artifact to a task (base64 content in JSON)", created::<Artifact>()).body::<TaskArtifact>(),
        // Workflows
        op(M::POST, "/api/v1/workflows", "Create a workflow", created::<Workflow>()).body::<CreateWorkflow>(),
        op(M::GET, "/api/v1/workflows", "List workflows", page::<WorkflowListItem>()).query::<WorkflowFilter>(),
        op(M::GET, "/api/v1/workflows/{id}", "Get a workflow", ok::<WorkflowDetail>()),
        op(M::POST, "/api/v1/workflows/{id}/redrives", "Redrive a workflow", created::<Applied>()).body::<RedriveWorkflow>(),
        op(M::GET, "/api/v1/workflows/{id}/events", "A workflow's events (cursor list)", Success::Cursor(schema::<Event>, EVENT_CURSOR)).query::<WorkflowEventQuery>(),
        op(M::POST, "/api/v1/workflows/{id}/activations", "Enqueue an activation", created::<Applied>()).body::<EnqueueActivation>(),
        op(M::GET, "/api/v1/workflows/{id}/activations", "A workflow's activations", ok::<Vec<Activation>>()),
        op(M::GET, "/api/v1/workflows/{id}/board", "A workflow's board", ok::<Board>()),
        op(M::GET, "/api/v1/workflows/{id}/stages", "A workflow's stages", ok::<Vec<WorkflowStage>>()),
        op(M::POST, "/api/v1/workflows/{id}/pause", "Pause a workflow", ok::<Workflow>()).body::<WorkflowAction>(),
        op(M::POST, "/api/v1/workflows/{id}/resume", "Resume a workflow", ok::<Workflow>()).body::<WorkflowAction>(),
        op(M::POST, "/api/v1/workflows/{id}/cancel", "Cancel a workflow", ok::<Workflow>()).body::<WorkflowAction>(),
        op(M::POST, "/api/v1/workflows/{id}/work-items", "Create a work item", created::<WorkItem>()).body::<CreateWorkItem>(),
        op(M::GET, "/api/v1/workflows/{id}/work-items", "A workflow's work items", ok::<Vec<WorkItem>>()),
        op(M::GET, "/api/v1/workflows/{id}/work-items/{work_item_id}", "Get a work item", ok::<WorkItem>()),
        op(M::PATCH, "/api/v1/workflows/{id}/work-items/{work_item_id}", "Update a work item", ok::<WorkItem>()).body::<UpdateWorkItem>(),
        op(M::GET, "/api/v1/operations/workflows/rail", "The operations rail", page::<RailItem>())
            .param("mode", TEXT, "Rail mode")
            .param("needs_action_only", BOOL, "Only workflows that need an operator")
            .param("lifecycle", TEXT, "Lifecycle filter")
            .param("search", TEXT, "Free-text search")
            .param("workflow_id", UUID, "One workflow")
            .paged(),
        op(M::GET, "/api/v1/operations/workflows/{id}/workspace", "The operations workspace packet of a workflow", ok::<WorkspacePacket>())
            .param("work_item_id", UUID, "Focus on one work item")
            .param("task_id", UUID, "Focus on one task")
            .param("tab_scope", TEXT, "Which tab the packet is for")
            .param("live_console_after", INT, "Live console cursor")
            .param("live_console_limit", INT, "Live console page size")
            .param("briefs_after", INT, "Briefs cursor")
            .param("history_after", INT, "History cursor")
            .param("deliverables_after", INT, "Deliverables cursor"),
        op(M::POST, "/api/v1/workspaces/{id}/planning-workflow", "Start a planning workflow in a workspace", created::<Workflow>()).body::<PlanningWorkflow>(),
        // Playbooks
        op(M::POST, "/api/v1/playbooks", "Create a playbook", created::<Playbook>()).body::<CreatePlaybook>(),
        op(M::GET, "/api/v1/playbooks", "List playbooks", page::<PlaybookSummary>()).paged(),
        op(M::GET, "/api/v1/playbooks/{id}", "Get a playbook", ok::<Playbook>()),
        op(M::PATCH, "/api/v1/playbooks/{id}", "Patch a playbook (new revision)", ok::<Playbook>()).body::<PatchPlaybook>(),
        op(M::PUT, "/api/v1/playbooks/{id}", "Replace a playbook (new revision)", ok::<Playbook>()).body::<CreatePlaybook>(),
        op(M::DELETE, "/api/v1/playbooks/{id}", "Delete a playbook (soft)", ok::<DeletedPlaybook>()),
        op(M::GET, "/api/v1/playbooks/{id}/revisions", "A playbook's revisions", page::<Playbook>()).paged(),
        op(M::PATCH, "/api/v1/playbooks/{id}/archive", "Archive or unarchive a playbook", ok::<Playbook>()).body::<ArchivePlaybook>(),
        op(M::GET, "/api/v1/playbooks/{id}/delete-impact", "What deleting a playbook would touch", ok::<PlaybookDeleteImpact>()),
        op(M::DELETE, "/api/v1/playbooks/{id}/permanent", "Delete a playbook permanently", ok::<DeletedPlaybook>()),
        // Workspaces
        op(M::POST, "/api/v1/workspaces", "Create a workspace", created::<Workspace>()).body::<CreateWorkspace>(),
        op(M::GET, "/api/v1/workspaces", "List workspaces", page::<Workspace>())
            .param("q", TEXT, "Free-text search")
            .param("is_active", BOOL, "Active or inactive workspaces only")
            .paged(),
        op(M::GET, "/api/v1/workspaces/{id}", "Get a workspace", ok::<Workspace>()),
        op(M::PATCH, "/api/v1/workspaces/{id}", "Patch a workspace", ok::<Workspace>()).body::<PatchWorkspace>(),
        op(M::PATCH, "/api/v1/workspaces/{id}/memory", "Set workspace memory entries", ok::<Workspace>()).body::<SetMemory>(),
        op(M::DELETE, "/api/v1/workspaces/{id}/memory/{key}", "Delete a workspace memory entry", ok::<Workspace>()).text_params(&["key"]),
        op(M::GET, "/api/v1/workspaces/{id}/spec", "A workspace's spec", ok::<WorkspaceSpec>())
            .param("version", r#"{"type": "integer", "minimum": 0}"#, "A past version"),
        op(M::PUT, "/api/v1/workspaces/{id}/spec", "Replace a workspace's spec", ok::<WorkspaceSpec>()).body::<PutWorkspaceSpec>(),
        op(M::GET, "/api/v1/workspaces/{id}/timeline", "A workspace's timeline", page::<Event>()).paged(),
        op(M::POST, "/api/v1/workspaces/{id}/verify-git-access", "Check a workspace's git access", ok::<GitVerification>()).body::<VerifyGitAccess>(),
        op(M::GET, "/api/v1/workspaces/{id}/files", "A workspace's files", page::<WorkspaceFile>()).paged(),
        op(M::POST, "/api/v1/workspaces/{id}/files", "Upload a file (base64 content in JSON)", created::<WorkspaceFile>()).body::<FileUpload>(),
        op(M::POST, "/api/v1/workspaces/{id}/files/batch", "Upload several files (base64 content in JSON)", created::<Vec<WorkspaceFile>>()).body::<BatchUpload>(),
        op(M::DELETE, "/api/v1/workspaces/{id}/files/{file_id}", "Delete a file", ok::<WorkspaceFile>()),
        op(M::GET, "/api/v1/workspaces/{id}/files/{file_id}/content", "Download a file", Success::Download),
        op(M::GET, "/api/v1/workspaces/{id}/artifacts", "A workspace's artifacts", page::<Artifact>()).query::<ArtifactFilter>().paged(),
        op(M::POST, "/api/v1/workspaces/{id}/artifacts", "Upload an artifact (base64 content in JSON)", created::<Artifact>()).body::<UploadArtifact>(),
        op(M::GET, "/api/v1/artifacts/{id}/content", "Download an artifact", Success::Download),
        // Community catalog, specialists and skills
        op(M::GET, "/api/v1/community-catalog/playbooks", "The community catalog", ok::<Vec<CatalogEntry>>()),
        op(M::GET, "/api/v1/community-catalog/playbooks/{id}", "A catalog playbook", ok::<CatalogDetail>()).text_params(&["id"]),
        op(M::POST, "/api/v1/community-catalog/playbooks/{id}/import-preview", "Preview importing a catalog playbook", ok::<ImportPreview>()).text_params(&["id"]),
        op(M::POST, "/api/v1/community-catalog/playbooks/{id}/import", "Import a catalog playbook (an empty body takes the defaults)", created::<ImportResult>()).text_params(&["id"]).body::<ImportRequest>(),
        op(M::GET, "/api/v1/specialists", "The tenant's specialists", page::<LibraryItem>()).paged(),
        op(M::GET, "/api/v1/skills", "The tenant's skills", page::<LibraryItem>()).paged(),
        // Logs and events
        op(M::POST, "/api/v1/logs/ingest", "Ingest log entries", created::<Ingested>()).body::<IngestLogs>(),
        op(M::GET, "/api/v1/logs", "Query logs (cursor list)", Success::Cursor(schema::<LogRow>, LOG_CURSOR))
            .query::<LogFilter>()
            .query_enum::<LogDetail>("detail", "How much of each row")
            .param("cursor", TEXT, "The previous page's next_cursor")
            .param("per_page", r#"{"type": "integer", "minimum": 1}"#, "Rows per page (clamped)"),
        op(M::GET, "/api/v1/logs/stream", "Follow logs", Success::Events(schema::<LogRow>, "`event: log` frames carry one log row (`id:` is the row id); `event: heartbeat` frames carry `{ts}`."))
            .query::<LogFilter>()
            .param("cursor", TEXT, "Start after this cursor")
            .param("after", TEXT, "Start after this row id"),
        op(M::GET, "/api/v1/logs/export", "Export logs as JSON or CSV (a download)", Success::Export(schema::<LogRow>))
            .query::<LogFilter>()
            .query_enum::<ExportFormat>("format", "json (default) or csv")
            .query_enum::<SortOrder>("order", "desc (default) or asc"),
        op(M::GET, "/api/v1/logs/stats", "Log counts grouped by a field", ok::<LogStats>())
            .query::<LogFilter>()
            .query_enum_required::<LogGroupBy>("group_by", "The grouping"),
        op(M::GET, "/api/v1/logs/operations", "Distinct log operations", ok::<Vec<String>>()),
        op(M::GET, "/api/v1/logs/roles", "Distinct log roles", ok::<Vec<String>>()),
        op(M::GET, "/api/v1/logs/actors", "Distinct log actors", ok::<Vec<LogActor>>()),
        op(M::GET, "/api/v1/logs/workflows", "Workflows that have logs", ok::<Vec<uuid::Uuid>>()),
        op(M::GET, "/api/v1/logs/{id}", "One log row", ok::<LogRow>())
            .text_params(&["id"])
            .plain_error(StatusCode::NOT_FOUND, r#"{"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}}"#),
        op(M::GET, "/api/v1/events", "List events (cursor list); a worker's websocket upgrade opens the worker channel", Success::Cursor(schema::<Event>, EVENT_CURSOR)).query::<EventFilter>(),
        op(M::GET, "/api/v1/events/stream", "Follow events", events_sse).query::<EventFilter>(),
        // Remote MCP servers
        op(M::GET, "/api/v1/remote-mcp-servers", "List remote MCP servers", page::<RemoteMcpServer>()).paged(),
        op(M::POST, "/api/v1/remote-mcp-servers", "Register a remote MCP server (verified against it first)", created::<RemoteMcpServer>()).body::<RemoteMcpServerRequest>(),
        op(M::GET, "/api/v1/remote-mcp-servers/{id}", "Get a remote MCP server", ok::<RemoteMcpServer>()),
        op(M::PUT, "/api/v1/remote-mcp-servers/{id}", "Replace a remote MCP server (verified first)", ok::<RemoteMcpServer>()).body::<RemoteMcpServerRequest>(),
        op(M::DELETE, "/api/v1/remote-mcp-servers/{id}", "Delete a remote MCP server", ok::<RemoteMcpServer>()),
        op(M::POST, "/api/v1/remote-mcp-servers/{id}/reverify", "Verify a stored remote MCP server again", ok::<RemoteMcpServer>()),
        op(M::POST, "/api/v1/remote-mcp-servers/{id}/oauth/reconnect", "Start OAuth (authorization code with PKCE) for a server; open the returned URL", ok::<OAuthAuthorization>()),
        op(M::POST, "/api/v1/remote-mcp-servers/{id}/oauth/disconnect", "Revoke and forget a server's OAuth tokens", ok::<RemoteMcpServer>()),
        op(M::GET, "/api/v1/remote-mcp-servers/oauth/callback", "The OAuth redirect target: exchanges the code, stores the tokens, verifies the server", ok::<RemoteMcpServer>())
            .param("code", TEXT, "The authorization code")
            .param("state", TEXT, "The one-time state from reconnect")
            .param("error", TEXT, "The authorization server's error, when it refused"),
        // Execution environments
        op(M::POST, "/api/v1/execution-environments", "Create an execution environment", created::<ExecutionEnvironment>()).body::<CreateExecutionEnvironment>(),
        op(M::GET, "/api/v1/execution-environments", "List execution environments", page::<ExecutionEnvironment>())
            .query_enum::<orchestrator_core::api::environments::CompatibilityStatus>("compatibility_status", "Compatibility filter")
            .param("support_status", TEXT, "Support status filter")
            .param("q", TEXT, "Free-text search")
            .paged(),
        op(M::GET, "/api/v1/execution-environments/catalog", "The environment catalog", ok::<Vec<EnvironmentCatalogEntry>>()),
        op(M::POST, "/api/v1/execution-environments/from-catalog", "Create an environment from the catalog", created::<ExecutionEnvironment>()).body::<CreateFromCatalog>(),
        op(M::GET, "/api/v1/execution-environments/{id}", "Get an execution environment", ok::<ExecutionEnvironment>()),
        op(M::PATCH, "/api/v1/execution-environments/{id}", "Patch an execution environment", ok::<ExecutionEnvironment>()).body::<PatchExecutionEnvironment>(),
        op(M::DELETE, "/api/v1/execution-environments/{id}", "Delete an execution environment", ok::<ExecutionEnvironment>()),
        op(M::POST, "/api/v1/execution-environments/{id}/verify", "Verify an execution environment", ok::<Verification>()),
        op(M::POST, "/api/v1/execution-environments/{id}/support", "Set an environment's support status", ok::<ExecutionEnvironment>()).body::<SetSupportStatus>(),
        op(M::GET, "/api/v1/fleet/workers", "The fleet's workers", ok::<Vec<FleetWorker>>()),
        op(M::GET, "/api/v1/fleet/live-containers", "Live containers", ok::<Vec<Container>>()),
        op(M::GET, "/api/v1/containers", "List containers", page::<Container>())
            .param("worker_id", UUID, "One worker's containers")
            .query_enum::<orchestrator_core::api::fleet::ContainerState>("state", "Container state")
            .param("task_id", UUID, "One task's containers")
            .paged(),
        // Integrations
        op(M::GET, "/.well-known/agent.json", "The A2A agent card", plain::<AgentCard>()),
        op(M::POST, "/api/v1/a2a/tasks", "Submit an A2A task", created::<A2aTask>()).body::<SubmitA2aTask>(),
        op(M::GET, "/api/v1/a2a/tasks/{id}", "Get an A2A task", ok::<A2aTask>()),
        op(M::GET, "/api/v1/a2a/tasks/{id}/events", "Follow an A2A task's state", Success::Events(schema::<A2aTaskEvent>, "`event: task.state_changed` frames; the stream ends after a terminal state.")),
        op(M::POST, "/api/v1/acp/sessions", "Open an ACP session (200 when an open one is reused)", created::<AcpSession>()).body::<CreateAcpSession>(),
        op(M::GET, "/api/v1/acp/sessions", "List ACP sessions", page::<AcpSession>()).query::<AcpSessionFilter>(),
        op(M::GET, "/api/v1/acp/sessions/{id}", "Get an ACP session", ok::<AcpSession>()),
        op(M::POST, "/api/v1/acp/sessions/{id}/heartbeat", "ACP session heartbeat", ok::<AcpSession>()).body::<AcpHeartbeat>(),
        op(M::POST, "/api/v1/acp/sessions/{id}/close", "Close an ACP session", ok::<AcpSession>()),
        op(M::POST, "/api/v1/acp/claim", "Claim a task over ACP", ok::<AcpClaimed>()).body::<AcpClaim>().or_no_content(),
        op(M::GET, "/api/v1/settings/llm", "The tenant's LLM settings", ok::<LlmSettings>()),
        op(M::PUT, "/api/v1/settings/llm", "Replace the tenant's LLM settings", ok::<LlmSettings>()).body::<PutLlmSettings>(),
        // Dashboard
        op(M::GET, "/", "The operator dashboard", Success::Text(HTML)),
        op(M::GET, "/ui", "The operator dashboard", Success::Text(HTML)),
        op(M::GET, "/ui/{*path}", "A dashboard asset, or the dashboard for a client-side route", Success::Text(&["text/html; charset=utf-8", "text/javascript; charset=utf-8", "text/css; charset=utf-8", "image/svg+xml"])).text_params(&["path"]),
    ]
}

/// The error envelope's statuses a route can answer, from what the table and
/// its description say about it.
fn error_statuses(route: &Route, doc: &Doc) -> Vec<StatusCode> {
    let api = route.path.starts_with("/api/");
    let has_params = route.path.contains('{');
    let has_input = doc.body.is_some() || !doc.query.is_empty() || has_params;
    let writes = route.method != Method::GET;
    let mut statuses = Vec::new();
    if has_input {
        statuses.push(StatusCode::BAD_REQUEST);
    }
    if matches!(route.access, Access::Scoped(_)) || route.path.starts_with("/api/v1/auth/") {
        statuses.push(StatusCode::UNAUTHORIZED);
    }
    if matches!(route.access, Access::Scoped(_)) {
        statuses.push(StatusCode::FORBIDDEN);
    }
    if has_params {
        statuses.push(StatusCode::NOT_FOUND);
    }
    if api && writes {
        statuses.push(StatusCode::CONFLICT);
    }
    if doc.body.is_some() {
        statuses.push(StatusCode::PAYLOAD_TOO_LARGE);
    }
    if has_input {
        statuses.push(StatusCode::UNPROCESSABLE_ENTITY);
    }
    if route.rate_limited {
        statuses.push(StatusCode::TOO_MANY_REQUESTS);
    }
    if api || route.path == "/readyz" {
        statuses.push(StatusCode::SERVICE_UNAVAILABLE);
    }
    statuses
}

/// Every status of the error envelope, shared by the operations through
/// `components/responses`.
const ERROR_STATUSES: [StatusCode; 9] = [
    StatusCode::BAD_REQUEST,
    StatusCode::UNAUTHORIZED,
    StatusCode::FORBIDDEN,
    StatusCode::NOT_FOUND,
    StatusCode::CONFLICT,
    StatusCode::PAYLOAD_TOO_LARGE,
    StatusCode::UNPROCESSABLE_ENTITY,
    StatusCode::TOO_MANY_REQUESTS,
    StatusCode::SERVICE_UNAVAILABLE,
];

fn error_response_name(status: StatusCode) -> String {
    status
        .canonical_reason()
        .unwrap_or("Error")
        .split(|c: char| !c.is_ascii_alphanumeric())
        .collect()
}

fn error_responses(generator: &mut SchemaGenerator) -> Map<String, Value> {
    let error = schema::<ErrorEnvelope>(generator).to_value();
    ERROR_STATUSES
        .iter()
        .map(|status| {
            let about = format!(
                "{} {}: the error envelope",
                status.as_u16(),
                status.canonical_reason().unwrap_or("Error")
            );
            (
                error_response_name(*status),
                json!({"description": about, "content": json_content(error.clone())}),
            )
        })
        .collect()
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("bad schema literal {text}: {e}"))
}

/// Removes `null` from a schema's alternatives: a query parameter is absent
/// rather than null.
fn strip_null(mut schema: Value) -> Value {
    let Some(object) = schema.as_object_mut() else {
        return schema;
    };
    if let Some(Value::Array(types)) = object.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types[0].clone();
            object.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = object.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = object.get_mut(key) {
            options.retain(|o| o.get("type").is_none_or(|t| t != "null"));
            if options.len() == 1 {
                let only = options.remove(0);
                object.remove(key);
                if let Value::Object(fields) = only {
                    for (k, v) in fields {
                        object.entry(k).or_insert(v);
                    }
                }
            }
        }
    }
    schema
}

fn query_parameter(name: &str, schema: Value, about: Option<String>, required: bool) -> Value {
    let mut schema = strip_null(schema);
    let description = about.or_else(|| {
        schema
            .as_object_mut()
            .and_then(|o| o.remove("description"))
            .and_then(|d| d.as_str().map(str::to_owned))
    });
    if let Some(o) = schema.as_object_mut() {
        o.remove("title");
        o.remove("$schema");
        o.remove("default");
    }
    let mut parameter = json!({
        "name": name,
        "in": "query",
        "required": required,
        "schema": schema,
    });
    if let Some(description) = description {
        parameter["description"] = Value::String(description);
    }
    parameter
}

fn query_parameters(queries: &[Query], inline: &mut SchemaGenerator) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for query in queries {
        match query {
            Query::Struct(schema) => {
                let schema = schema(inline).to_value();
                let required: Vec<&str> = schema
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                    for (name, property) in properties {
                        out.push(query_parameter(
                            name,
                            property.clone(),
                            None,
                            required.contains(&name.as_str()),
                        ));
                    }
                }
            }
            Query::One(name, schema, about) => {
                out.push(query_parameter(
                    name,
                    parse(schema),
                    Some((*about).into()),
                    false,
                ));
            }
            Query::Enum(name, schema, about, required) => {
                out.push(query_parameter(
                    name,
                    schema(inline).to_value(),
                    Some((*about).into()),
                    *required,
                ));
            }
            Query::Paging => {
                out.push(query_parameter(
                    "page",
                    json!({"type": "integer", "minimum": 1, "default": 1}),
                    Some("Page number, from 1".into()),
                    false,
                ));
                out.push(query_parameter(
                    "per_page",
                    json!({"type": "integer", "minimum": 1}),
                    Some("Items per page (default 20, clamped to 100)".into()),
                    false,
                ));
            }
        }
    }
    // One parameter per name: a struct's own `page`/`per_page` wins.
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|p| seen.insert(p["name"].as_str().unwrap_or_default().to_owned()));
    out
}

/// `{id}` stays `{id}`; matchit's catch-all `{*path}` becomes `{path}`.
fn openapi_path(path: &str) -> String {
    path.replace("{*", "{")
}

fn path_parameters(route: &Route, doc: Option<&Doc>) -> Vec<Value> {
    let text = doc.map(|d| d.text_params).unwrap_or(&[]);
    openapi_path(route.path)
        .split('/')
        .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
        .map(|name| {
            let schema = if text.contains(&name) {
                json!({"type": "string"})
            } else {
                json!({"type": "string", "format": "uuid"})
            };
            json!({"name": name, "in": "path", "required": true, "schema": schema})
        })
        .collect()
}

fn operation_id(route: &Route) -> String {
    let mut id = route.method.as_str().to_ascii_lowercase();
    let words: String = route
        .path
        .trim_start_matches("/api/v1")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let words: Vec<&str> = words.split('_').filter(|w| !w.is_empty()).collect();
    id.push('_');
    id.push_str(&if words.is_empty() {
        "root".to_owned()
    } else {
        words.join("_")
    });
    id
}

fn tag(path: &str) -> String {
    match path.strip_prefix("/api/v1/") {
        Some(rest) => rest.split('/').next().unwrap_or("api").to_owned(),
        None if path == "/" || path.starts_with("/ui") => "dashboard".to_owned(),
        None if path.starts_with("/api/docs") => "openapi".to_owned(),
        None if path.starts_with("/.well-known") => "a2a".to_owned(),
        None => "service".to_owned(),
    }
}

fn envelope(data: Value, meta: Value) -> Value {
    json!({
        "type": "object",
        "required": ["data", "meta"],
        "properties": {"data": data, "meta": meta},
    })
}

fn json_content(schema: Value) -> Value {
    json!({"application/json": {"schema": schema}})
}

fn success_response(success: Success, generator: &mut SchemaGenerator) -> (StatusCode, Value) {
    match success {
        Success::Data(status, data) => {
            let data = data(generator).to_value();
            let meta = schema::<ResponseMeta>(generator).to_value();
            (
                status,
                json!({"description": "`{data, meta}`", "content": json_content(envelope(data, meta))}),
            )
        }
        Success::Page(item) => {
            let items = json!({"type": "array", "items": item(generator).to_value()});
            let meta = schema::<ListMeta>(generator).to_value();
            (
                StatusCode::OK,
                json!({"description": "A page: `{data: [...], meta: {total, page, per_page, pages}}`", "content": json_content(envelope(items, meta))}),
            )
        }
        Success::Cursor(item, fields) => {
            let items = json!({"type": "array", "items": item(generator).to_value()});
            let mut properties = Map::new();
            properties.insert("request_id".into(), json!({"type": "string"}));
            properties.insert(
                "timestamp".into(),
                schema::<Timestamp>(generator).to_value(),
            );
            let mut required = vec![json!("request_id"), json!("timestamp")];
            for (name, field) in fields {
                properties.insert((*name).into(), parse(field));
                required.push(json!(name));
            }
            let meta = json!({"type": "object", "required": required, "properties": properties});
            (
                StatusCode::OK,
                json!({"description": "A cursor page: `{data: [...], meta}` with the cursor in `meta`", "content": json_content(envelope(items, meta))}),
            )
        }
        Success::Plain(body) => (
            StatusCode::OK,
            json!({"description": "A JSON body without the envelope", "content": json_content(body(generator).to_value())}),
        ),
        Success::Events(frame, about) => (
            StatusCode::OK,
            json!({
                "description": format!("Server-sent events. {about}"),
                "content": {"text/event-stream": {
                    "schema": {"type": "string"},
                    "x-event-data": frame(generator).to_value(),
                }},
            }),
        ),
        Success::Download => (
            StatusCode::OK,
            json!({
                "description": "The file's bytes, with its own Content-Type, an ETag and Content-Disposition",
                "content": {"application/octet-stream": {"schema": {"type": "string", "contentMediaType": "application/octet-stream"}}},
            }),
        ),
        Success::Export(row) => (
            StatusCode::OK,
            json!({
                "description": "An attachment: a JSON array of rows, or CSV with a header line",
                "content": {
                    "application/json": {"schema": {"type": "array", "items": row(generator).to_value()}},
                    "text/csv": {"schema": {"type": "string"}},
                },
            }),
        ),
        Success::Text(types) => {
            let content: Map<String, Value> = types
                .iter()
                .map(|t| ((*t).to_owned(), json!({"schema": {"type": "string"}})))
                .collect();
            (
                StatusCode::OK,
                json!({"description": "The body as it is", "content": content}),
            )
        }
    }
}

fn security(access: Access) -> Value {
    match access {
        Access::Public => json!([]),
        Access::Scoped(scope) => json!([
            {"bearerAuth": [scope.as_str()]},
            {"cookieSession": [scope.as_str()]},
        ]),
    }
}

fn operation(
    route: &Route,
    doc: Option<&Doc>,
    generator: &mut SchemaGenerator,
    inline: &mut SchemaGenerator,
) -> Value {
    let mut op = Map::new();
    op.insert("operationId".into(), json!(operation_id(route)));
    op.insert("tags".into(), json!([tag(route.path)]));
    op.insert("security".into(), security(route.access));
    if let Access::Scoped(scope) = route.access {
        op.insert("x-scope".into(), json!(scope.as_str()));
    }
    op.insert("x-body-limit".into(), json!(route.body_limit));
    op.insert("x-rate-limited".into(), json!(route.rate_limited));
    if let Some((scope, _)) = &route.upgrade {
        op.insert(
            "x-websocket-upgrade".into(),
            json!({
                "scope": scope.as_str(),
                "description": "With `Upgrade: websocket` this path opens the worker channel (101 Switching Protocols); frames are JSON messages",
                "client-messages": schema::<WorkerMessage>(generator).to_value(),
                "server-messages": schema::<ServerMessage>(generator).to_value(),
            }),
        );
    }
    let mut parameters = path_parameters(route, doc);
    let Some(doc) = doc else {
        op.insert(
            "summary".into(),
            json!("UNDOCUMENTED: add this route to orchestrator-server/src/openapi.rs"),
        );
        op.insert("x-undocumented".into(), json!(true));
        if !parameters.is_empty() {
            op.insert("parameters".into(), json!(parameters));
        }
        op.insert(
            "responses".into(),
            json!({"default": {"description": "Not documented"}}),
        );
        return Value::Object(op);
    };
    op.insert("summary".into(), json!(doc.summary));
    parameters.extend(query_parameters(&doc.query, inline));
    if !parameters.is_empty() {
        op.insert("parameters".into(), json!(parameters));
    }
    if let Some(body) = doc.body {
        let schema = body(generator).to_value();
        let required = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.rsplit('/').next())
            .and_then(|name| generator.definitions().get(name))
            .and_then(|d| d.get("required"))
            .and_then(Value::as_array)
            .is_some_and(|r| !r.is_empty());
        op.insert(
            "requestBody".into(),
            json!({"required": required, "content": json_content(schema)}),
        );
    }
    let mut responses = Map::new();
    let (status, success) = success_response(doc.success, generator);
    responses.insert(status.as_u16().to_string(), success);
    if matches!(doc.success, Success::Data(StatusCode::CREATED, _))
        && doc.path == "/api/v1/acp/sessions"
    {
        // An open session that is reused answers 200 with the same body.
        let (_, reused) = success_response(doc.success, generator);
        responses.insert("200".into(), reused);
    }
    if doc.no_content {
        responses.insert("204".into(), json!({"description": "Nothing to claim"}));
    }
    if matches!(doc.success, Success::Download) {
        responses.insert(
            "304".into(),
            json!({"description": "Not modified (If-None-Match matched the ETag)"}),
        );
    }
    let error = schema::<ErrorEnvelope>(generator).to_value();
    for status in error_statuses(route, doc) {
        responses.insert(
            status.as_u16().to_string(),
            json!({"$ref": format!("#/components/responses/{}", error_response_name(status))}),
        );
    }
    for (status, plain) in &doc.plain_errors {
        let schema = json!({"anyOf": [error.clone(), parse(plain)]});
        let reason = status.canonical_reason().unwrap_or("Error");
        responses.insert(
            status.as_u16().to_string(),
            json!({"description": reason, "content": json_content(schema)}),
        );
    }
    op.insert("responses".into(), Value::Object(responses));
    Value::Object(op)
}

/// The document for `table`.
pub(crate) fn document(table: &[Route]) -> Value {
    let mut generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.definitions_path = "/components/schemas".into();
            s.meta_schema = None;
        })
        .with_transform({
            let mut any_json = ReplaceBoolSchemas::default();
            any_json.skip_additional_properties = true;
            any_json
        })
        .into_generator();
    let mut inline = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let docs = docs();
    let mut paths = Map::new();
    for route in table {
        let doc = docs
            .iter()
            .find(|d| d.method == route.method && d.path == route.path);
        let operation = operation(route, doc, &mut generator, &mut inline);
        let item = paths
            .entry(openapi_path(route.path))
            .or_insert_with(|| json!({}));
        item[route.method.as_str().to_ascii_lowercase()] = operation;
    }
    let responses = error_responses(&mut generator);
    let schemas = generator.take_definitions(true);
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "orch control plane API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Generated from the server's route table and wire types; never edited by hand. \
                Scopes are ordered agent < worker < admin < service: a credential satisfies every route whose scope is at most its own. \
                Every success body is `{data, meta}`; every error body is `{error: {code, message, recovery_hint?, details?}, meta}`.",
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "responses": responses,
            "securitySchemes": {
                "bearerAuth": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An access token from POST /api/v1/auth/token, or an API key. The listed role is the least scope the route needs.",
                },
                "cookieSession": {
                    "type": "apiKey",
                    "in": "cookie",
                    "name": "service_access_token",
                    "description": "The browser session set by /api/v1/auth/token; writes also need the CSRF header matching the service_csrf_token cookie.",
                },
            },
        },
    })
}

/// The served document, generated once.
fn served() -> &'static [u8] {
    static DOCUMENT: OnceLock<Vec<u8>> = OnceLock::new();
    DOCUMENT.get_or_init(|| {
        let mut bytes =
            serde_json::to_vec_pretty(&document(&crate::routes::table())).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    })
}

/// `GET /api/v1/openapi.json`.
pub(crate) async fn openapi_json(_app: Arc<App>, _req: Req) -> Result<Reply, ApiError> {
    Ok(Reply::bytes(StatusCode::OK, served()).with_header(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    ))
}

/// The reference page's files, compiled in (`orchestrator-server/docs-assets/`:
/// our own small page, no third-party code, nothing fetched at run time).
const DOCS_INDEX: &[u8] = include_bytes!("../docs-assets/index.html");
const DOCS_ASSETS: &[(&str, &str, &[u8])] = &[
    (
        "docs.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../docs-assets/docs.js"),
    ),
    (
        "docs.css",
        "text/css; charset=utf-8",
        include_bytes!("../docs-assets/docs.css"),
    ),
];

/// Scripts, styles and the document only from this origin.
const DOCS_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'; object-src 'none'";

fn docs_reply(body: &'static [u8], content_type: &'static str) -> Reply {
    Reply::bytes(StatusCode::OK, body)
        .with_header(header::CONTENT_TYPE, HeaderValue::from_static(content_type))
        .with_header(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(DOCS_CSP),
        )
        .with_header(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        )
        .with_header(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"))
}

/// `GET /api/docs`: the reference page.
pub(crate) async fn docs_page(_app: Arc<App>, _req: Req) -> Result<Reply, ApiError> {
    Ok(docs_reply(DOCS_INDEX, "text/html; charset=utf-8"))
}

/// `GET /api/docs/{asset}`: the page's script and stylesheet.
pub(crate) async fn docs_asset(_app: Arc<App>, req: Req) -> Result<Reply, ApiError> {
    let name = req.param("asset").unwrap_or_default();
    match DOCS_ASSETS.iter().find(|(n, _, _)| *n == name) {
        Some((_, content_type, body)) => Ok(docs_reply(body, content_type)),
        None => Err(ApiError::RouteNotFound {
            path: format!("/api/docs/{name}"),
        }),
    }
}

/// Routes of the table that have no description, and descriptions that name
/// no route (for the unit test below and `tests/openapi.rs`).
#[cfg(test)]
fn mismatches() -> (Vec<String>, Vec<String>) {
    let table = crate::routes::table();
    let docs = docs();
    let undocumented = table
        .iter()
        .filter(|r| {
            !docs
                .iter()
                .any(|d| d.method == r.method && d.path == r.path)
        })
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    let stale = docs
        .iter()
        .filter(|d| {
            !table
                .iter()
                .any(|r| d.method == r.method && d.path == r.path)
        })
        .map(|d| format!("{} {}", d.method, d.path))
        .collect();
    (undocumented, stale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_is_described_and_every_description_has_a_route() {
        let (undocumented, stale) = mismatches();
        assert!(
            undocumented.is_empty(),
            "routes with no entry in openapi::docs(): {undocumented:?}"
        );
        assert!(
            stale.is_empty(),
            "entries in openapi::docs() with no route: {stale:?}"
        );
    }

    #[test]
    fn operation_ids_are_unique() {
        let document = document(&crate::routes::table());
        let mut seen = std::collections::BTreeSet::new();
        for item in document["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                let id = op["operationId"].as_str().unwrap().to_owned();
                assert!(seen.insert(id.clone()), "duplicate operationId {id}");
            }
        }
    }
}
