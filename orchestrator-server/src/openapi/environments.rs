//! Execution environments: each route's input and output types.

use super::describe::*;
use http::Method as M;
use orchestrator_core::api::environments::{CreateExecutionEnvironment, CreateFromCatalog, EnvironmentCatalogEntry, ExecutionEnvironment, PatchExecutionEnvironment, SetSupportStatus, Verification};

/// Execution environments.
pub(super) fn docs() -> Vec<Doc> {
    vec![
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
    ]
}
