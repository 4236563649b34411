//! The route table: every route with its method, path, required scope, body
//! limit and handler. Scopes are enforced from this table in one place
//! ([`crate::app`]); handlers never check them.
//!
//! A handler parses its input from [`Req`], calls one core method and renders
//! the answer. Nothing else.

mod a2a;
mod acp;
mod agents;
mod api_keys;
mod auth;
mod bulk_actions;
mod catalog;
mod environments;
mod events;
mod fleet;
mod health;
mod limits;
mod logs;
mod playbooks;
mod remote_mcp;
mod route;
mod run_control;
mod schedules;
mod settings;
mod tasks;
mod tenants;
mod webhooks;
mod worker_channel;
mod workflows;
mod workspaces;

use crate::config::UPLOAD_BODY_LIMIT;
use http::Method;
use orchestrator_core::api::Scope;
pub(crate) use route::{Access, Handler, Route};

/// The routes of the `--metrics-listen` address: the exposition only, open.
pub(crate) fn metrics_table() -> Vec<Route> {
    vec![Route::public(Method::GET, "/metrics", crate::metrics::scrape_all).unlimited()]
}

/// Every route the server serves.
pub(crate) fn table() -> Vec<Route> {
    use Method as M;
    use Scope::*;
    let mut routes = vec![
        Route::public(M::GET, "/healthz", health::live).unlimited(),
        Route::public(M::GET, "/readyz", health::ready).unlimited(),
        Route::public(M::GET, "/api/v1/version", health::version).unlimited(),
        Route::scoped(M::GET, "/metrics", Admin, crate::metrics::scrape).unlimited(),
        // The generated OpenAPI document and its reference page (issue 15)
        Route::public(M::GET, "/api/v1/openapi.json", crate::openapi::openapi_json).unlimited(),
        Route::public(M::GET, "/api/docs", crate::openapi::docs_page).unlimited(),
        Route::public(M::GET, "/api/docs/{asset}", crate::openapi::docs_asset).unlimited(),
        // Authentication
        Route::public(M::POST, "/api/v1/auth/token", auth::token),
        Route::public(M::POST, "/api/v1/auth/login", auth::token),
        Route::scoped(M::GET, "/api/v1/auth/me", Agent, auth::me),
        Route::public(M::POST, "/api/v1/auth/refresh", auth::refresh),
        Route::public(M::POST, "/api/v1/auth/logout", auth::logout),
        // Tenants and keys
        Route::scoped(M::POST, "/api/v1/tenants", Service, tenants::create),
        Route::scoped(M::GET, "/api/v1/tenants", Service, tenants::list),
        Route::scoped(M::GET, "/api/v1/api-keys", Admin, api_keys::list),
        Route::scoped(M::POST, "/api/v1/api-keys", Admin, api_keys::create),
        Route::scoped(M::DELETE, "/api/v1/api-keys/{id}", Admin, api_keys::revoke),
        // Agents and workers
        Route::scoped(M::POST, "/api/v1/agents/register", Agent, agents::register),
        Route::scoped(M::GET, "/api/v1/agents", Agent, agents::list),
        Route::scoped(M::GET, "/api/v1/agents/{id}", Agent, agents::get),
        Route::scoped(
            M::POST,
            "/api/v1/agents/{id}/heartbeat",
            Agent,
            agents::heartbeat,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/workers/register",
            Worker,
            agents::register_worker,
        ),
        Route::scoped(M::GET, "/api/v1/workers", Agent, agents::list_workers),
        Route::scoped(M::GET, "/api/v1/workers/{id}", Agent, agents::get_worker),
        Route::scoped(
            M::DELETE,
            "/api/v1/workers/{id}",
            Admin,
            agents::delete_worker,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/workers/{id}/heartbeat",
            Worker,
            agents::worker_heartbeat,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/workers/{id}/next",
            Worker,
            agents::worker_next,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/workers/{id}/claim-batch",
            Worker,
            agents::worker_claim_batch,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/workers/{id}/signal",
            Admin,
            worker_channel::signal,
        ),
        // Tasks
        Route::scoped(M::POST, "/api/v1/tasks", Agent, tasks::create),
        Route::scoped(M::GET, "/api/v1/tasks", Agent, tasks::list),
        Route::scoped(M::POST, "/api/v1/tasks/claim", Agent, tasks::claim),
        Route::scoped(
            M::POST,
            "/api/v1/tasks/create-batch",
            Agent,
            tasks::create_batch,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/tasks/complete-batch",
            Agent,
            tasks::complete_batch,
        ),
        Route::scoped(M::GET, "/api/v1/tasks/{id}", Agent, tasks::get),
        Route::scoped(M::GET, "/api/v1/tasks/{id}/context", Agent, tasks::context),
        Route::scoped(M::GET, "/api/v1/tasks/{id}/git", Agent, tasks::git),
        Route::scoped(M::GET, "/api/v1/tasks/{id}/stream", Agent, tasks::stream).unlimited(),
        Route::scoped(
            M::POST,
            "/api/v1/tasks/{id}/claim-credentials",
            Agent,
            tasks::claim_credentials,
        ),
        Route::scoped(M::POST, "/api/v1/tasks/{id}/start", Agent, tasks::start),
        Route::scoped(
            M::POST,
            "/api/v1/tasks/{id}/complete",
            Agent,
            tasks::complete,
        ),
        Route::scoped(M::POST, "/api/v1/tasks/{id}/fail", Agent, tasks::fail),
        Route::scoped(
            M::POST,
            "/api/v1/tasks/{id}/heartbeat",
            Agent,
            tasks::heartbeat,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/tasks/{id}/reschedule",
            Admin,
            tasks::reschedule,
        ),
        Route::scoped(M::POST, "/api/v1/tasks/{id}/retry", Admin, tasks::retry),
        Route::scoped(
            M::POST,
            "/api/v1/tasks/{id}/request-changes",
            Admin,
            tasks::request_changes,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/tasks/{id}/reassign",
            Admin,
            tasks::reassign,
        ),
        Route::scoped(M::POST, "/api/v1/tasks/{id}/skip", Admin, tasks::skip),
        Route::scoped(
            M::POST,
            "/api/v1/tasks/{id}/escalate",
            Admin,
            tasks::escalate,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/tasks/{id}/resolve-escalation",
            Admin,
            tasks::resolve_escalation,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/tasks/{id}/approve-output",
            Admin,
            tasks::approve_output,
        ),
        Route::scoped(M::POST, "/api/v1/tasks/{id}/cancel", Admin, tasks::cancel),
        Route::scoped(
            M::GET,
            "/api/v1/tasks/{id}/handoffs",
            Agent,
            tasks::list_handoffs,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/tasks/{id}/handoffs",
            Agent,
            tasks::create_handoff,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/tasks/{id}/token",
            Agent,
            tasks::issue_token,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/tasks/{id}/artifacts",
            Agent,
            tasks::add_artifact,
        )
        .body_limit(UPLOAD_BODY_LIMIT),
        // Workflows
        // A launch carries its input files (up to 10 MiB each), as an upload.
        Route::scoped(M::POST, "/api/v1/workflows", Admin, workflows::create)
            .body_limit(UPLOAD_BODY_LIMIT),
        Route::scoped(M::GET, "/api/v1/workflows", Agent, workflows::list),
        Route::scoped(M::GET, "/api/v1/workflows/{id}", Agent, workflows::get),
        Route::scoped(
            M::POST,
            "/api/v1/workflows/{id}/redrives",
            Admin,
            workflows::redrive,
        )
        .body_limit(UPLOAD_BODY_LIMIT),
        Route::scoped(
            M::GET,
            "/api/v1/workflows/{id}/events",
            Agent,
            workflows::events,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/workflows/{id}/activations",
            Admin,
            workflows::enqueue_activation,
        ),
        Route::scoped(
            M::GET,
            "/api/v1/workflows/{id}/activations",
            Agent,
            workflows::list_activations,
        ),
        Route::scoped(
            M::GET,
            "/api/v1/workflows/{id}/board",
            Agent,
            workflows::board,
        ),
        Route::scoped(
            M::GET,
            "/api/v1/workflows/{id}/stages",
            Agent,
            workflows::stages,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/workflows/{id}/pause",
            Admin,
            workflows::pause,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/workflows/{id}/resume",
            Admin,
            workflows::resume,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/workflows/{id}/cancel",
            Admin,
            workflows::cancel,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/workflows/{id}/work-items",
            Agent,
            workflows::create_work_item,
        ),
        Route::scoped(
            M::GET,
            "/api/v1/workflows/{id}/work-items",
            Agent,
            workflows::list_work_items,
        ),
        Route::scoped(
            M::GET,
            "/api/v1/workflows/{id}/work-items/{work_item_id}",
            Agent,
            workflows::get_work_item,
        ),
        Route::scoped(
            M::PATCH,
            "/api/v1/workflows/{id}/work-items/{work_item_id}",
            Agent,
            workflows::update_work_item,
        ),
        Route::scoped(
            M::GET,
            "/api/v1/operations/workflows/rail",
            Agent,
            workflows::rail,
        ),
        Route::scoped(
            M::GET,
            "/api/v1/operations/workflows/{id}/workspace",
            Agent,
            workflows::operations_workspace,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/workspaces/{id}/planning-workflow",
            Admin,
            workflows::planning_workflow,
        ),
        // Playbooks
        Route::scoped(M::POST, "/api/v1/playbooks", Admin, playbooks::create),
        Route::scoped(M::GET, "/api/v1/playbooks", Agent, playbooks::list),
        Route::scoped(M::GET, "/api/v1/playbooks/{id}", Agent, playbooks::get),
        Route::scoped(M::PATCH, "/api/v1/playbooks/{id}", Admin, playbooks::patch),
        Route::scoped(M::PUT, "/api/v1/playbooks/{id}", Admin, playbooks::replace),
        Route::scoped(
            M::DELETE,
            "/api/v1/playbooks/{id}",
            Admin,
            playbooks::delete,
        ),
        Route::scoped(
            M::GET,
            "/api/v1/playbooks/{id}/revisions",
            Agent,
            playbooks::revisions,
        ),
        Route::scoped(
            M::PATCH,
            "/api/v1/playbooks/{id}/archive",
            Admin,
            playbooks::archive,
        ),
        Route::scoped(
            M::GET,
            "/api/v1/playbooks/{id}/delete-impact",
            Admin,
            playbooks::delete_impact,
        ),
        Route::scoped(
            M::DELETE,
            "/api/v1/playbooks/{id}/permanent",
            Admin,
            playbooks::delete_permanent,
        ),
        // Workspaces
        Route::scoped(M::POST, "/api/v1/workspaces", Admin, workspaces::create),
        Route::scoped(M::GET, "/api/v1/workspaces", Agent, workspaces::list),
        Route::scoped(M::GET, "/api/v1/workspaces/{id}", Agent, workspaces::get),
        Route::scoped(
            M::PATCH,
            "/api/v1/workspaces/{id}",
            Admin,
            workspaces::patch,
        ),
        Route::scoped(
            M::PATCH,
            "/api/v1/workspaces/{id}/memory",
            Agent,
            workspaces::set_memory,
        ),
        Route::scoped(
            M::DELETE,
            "/api/v1/workspaces/{id}/memory/{key}",
            Agent,
            workspaces::delete_memory,
        ),
        Route::scoped(
            M::GET,
            "/api/v1/workspaces/{id}/spec",
            Agent,
            workspaces::get_spec,
        ),
        Route::scoped(
            M::PUT,
            "/api/v1/workspaces/{id}/spec",
            Admin,
            workspaces::put_spec,
        ),
        Route::scoped(
            M::GET,
            "/api/v1/workspaces/{id}/timeline",
            Agent,
            workspaces::timeline,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/workspaces/{id}/verify-git-access",
            Admin,
            workspaces::verify_git,
        ),
        Route::scoped(
            M::GET,
            "/api/v1/workspaces/{id}/files",
            Agent,
            workspaces::list_files,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/workspaces/{id}/files",
            Admin,
            workspaces::upload_file,
        )
        .body_limit(UPLOAD_BODY_LIMIT),
        Route::scoped(
            M::POST,
            "/api/v1/workspaces/{id}/files/batch",
            Admin,
            workspaces::upload_batch,
        )
        .body_limit(UPLOAD_BODY_LIMIT),
        Route::scoped(
            M::DELETE,
            "/api/v1/workspaces/{id}/files/{file_id}",
            Admin,
            workspaces::delete_file,
        ),
        Route::scoped(
            M::GET,
            "/api/v1/workspaces/{id}/files/{file_id}/content",
            Agent,
            workspaces::file_content,
        ),
        Route::scoped(
            M::GET,
            "/api/v1/workspaces/{id}/artifacts",
            Agent,
            workspaces::list_artifacts,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/workspaces/{id}/artifacts",
            Admin,
            workspaces::upload_artifact,
        )
        .body_limit(UPLOAD_BODY_LIMIT),
        Route::scoped(
            M::GET,
            "/api/v1/artifacts/{id}/content",
            Agent,
            workspaces::artifact_content,
        ),
        // Community catalog and the tenant's specialists and skills
        Route::scoped(
            M::GET,
            "/api/v1/community-catalog/playbooks",
            Admin,
            catalog::list,
        ),
        Route::scoped(
            M::GET,
            "/api/v1/community-catalog/playbooks/{id}",
            Admin,
            catalog::get,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/community-catalog/playbooks/{id}/import-preview",
            Admin,
            catalog::preview,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/community-catalog/playbooks/{id}/import",
            Admin,
            catalog::import,
        ),
        Route::scoped(M::GET, "/api/v1/specialists", Agent, catalog::specialists),
        Route::scoped(M::GET, "/api/v1/skills", Agent, catalog::skills),
        // Logs and events
        Route::scoped(M::POST, "/api/v1/logs/ingest", Worker, logs::ingest)
            .body_limit(logs::INGEST_BODY_LIMIT),
        Route::scoped(M::GET, "/api/v1/logs", Agent, logs::query),
        Route::scoped(M::GET, "/api/v1/logs/stream", Agent, logs::stream).unlimited(),
        Route::scoped(M::GET, "/api/v1/logs/export", Admin, logs::export).unlimited(),
        Route::scoped(M::GET, "/api/v1/logs/stats", Agent, logs::stats),
        Route::scoped(M::GET, "/api/v1/logs/operations", Agent, logs::operations),
        Route::scoped(M::GET, "/api/v1/logs/roles", Agent, logs::roles),
        Route::scoped(M::GET, "/api/v1/logs/actors", Agent, logs::actors),
        Route::scoped(M::GET, "/api/v1/logs/workflows", Agent, logs::workflows),
        Route::scoped(M::GET, "/api/v1/logs/{id}", Agent, logs::get),
        Route::scoped(M::GET, "/api/v1/events", Agent, events::list)
            .upgrade(Worker, worker_channel::connect),
        Route::scoped(M::GET, "/api/v1/events/stream", Agent, events::stream).unlimited(),
        // Execution environments (issue 11)
        Route::scoped(
            M::POST,
            "/api/v1/execution-environments",
            Admin,
            environments::create,
        ),
        Route::scoped(
            M::GET,
            "/api/v1/execution-environments",
            Admin,
            environments::list,
        ),
        Route::scoped(
            M::GET,
            "/api/v1/execution-environments/catalog",
            Admin,
            environments::catalog,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/execution-environments/from-catalog",
            Admin,
            environments::from_catalog,
        ),
        Route::scoped(
            M::GET,
            "/api/v1/execution-environments/{id}",
            Admin,
            environments::get,
        ),
        Route::scoped(
            M::PATCH,
            "/api/v1/execution-environments/{id}",
            Admin,
            environments::patch,
        ),
        Route::scoped(
            M::DELETE,
            "/api/v1/execution-environments/{id}",
            Admin,
            environments::delete,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/execution-environments/{id}/verify",
            Admin,
            environments::verify,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/execution-environments/{id}/support",
            Admin,
            environments::support,
        ),
        Route::scoped(M::GET, "/api/v1/fleet/workers", Admin, fleet::workers),
        Route::scoped(
            M::GET,
            "/api/v1/fleet/live-containers",
            Admin,
            fleet::live_containers,
        ),
        Route::scoped(M::GET, "/api/v1/containers", Admin, fleet::containers),
        // Integrations: A2A, ACP, claim credentials, remote MCP
        Route::public(M::GET, "/.well-known/agent.json", a2a::card),
        Route::scoped(M::POST, "/api/v1/a2a/tasks", Agent, a2a::submit),
        Route::scoped(M::GET, "/api/v1/a2a/tasks/{id}", Agent, a2a::get),
        Route::scoped(M::GET, "/api/v1/a2a/tasks/{id}/events", Agent, a2a::events).unlimited(),
        Route::scoped(M::POST, "/api/v1/acp/sessions", Agent, acp::create_session),
        Route::scoped(M::GET, "/api/v1/acp/sessions", Agent, acp::list_sessions),
        Route::scoped(M::GET, "/api/v1/acp/sessions/{id}", Agent, acp::get_session),
        Route::scoped(
            M::POST,
            "/api/v1/acp/sessions/{id}/heartbeat",
            Agent,
            acp::heartbeat,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/acp/sessions/{id}/close",
            Agent,
            acp::close,
        ),
        Route::scoped(M::POST, "/api/v1/acp/claim", Agent, acp::claim),
        Route::scoped(M::GET, "/api/v1/settings/llm", Admin, settings::get_llm),
        Route::scoped(M::PUT, "/api/v1/settings/llm", Admin, settings::put_llm),
        // Remote MCP servers (issue 12)
        Route::scoped(
            M::GET,
            "/api/v1/remote-mcp-servers",
            Admin,
            remote_mcp::list,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/remote-mcp-servers",
            Admin,
            remote_mcp::create,
        ),
        Route::scoped(
            M::GET,
            "/api/v1/remote-mcp-servers/{id}",
            Admin,
            remote_mcp::get,
        ),
        Route::scoped(
            M::PUT,
            "/api/v1/remote-mcp-servers/{id}",
            Admin,
            remote_mcp::replace,
        ),
        Route::scoped(
            M::DELETE,
            "/api/v1/remote-mcp-servers/{id}",
            Admin,
            remote_mcp::delete,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/remote-mcp-servers/{id}/reverify",
            Admin,
            remote_mcp::reverify,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/remote-mcp-servers/{id}/oauth/reconnect",
            Admin,
            remote_mcp::oauth_reconnect,
        ),
        Route::scoped(
            M::POST,
            "/api/v1/remote-mcp-servers/{id}/oauth/disconnect",
            Admin,
            remote_mcp::oauth_disconnect,
        ),
        Route::public(
            M::GET,
            "/api/v1/remote-mcp-servers/oauth/callback",
            remote_mcp::oauth_callback,
        ),
        // The operator dashboard (embedded assets; client-side routes under /ui)
        Route::public(M::GET, "/", crate::dashboard::index).unlimited(),
        Route::public(M::GET, "/ui", crate::dashboard::index).unlimited(),
        Route::public(M::GET, "/ui/{*path}", crate::dashboard::asset).unlimited(),
    ];
    routes.extend(run_control::routes());
    routes
}

// Reliability (issue 13): the table as data, for tests that walk every route.
/// Every route's method and path (matchit syntax), in table order.
pub fn route_list() -> Vec<(Method, &'static str)> {
    table().into_iter().map(|r| (r.method, r.path)).collect()
}
