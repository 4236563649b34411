//! Tenants and API keys: each route's input and output types.

use super::describe::*;
use http::Method as M;
use orchestrator_core::api::*;

/// Tenants and API keys.
pub(super) fn docs() -> Vec<Doc> {
    vec![
        op(M::POST, "/api/v1/tenants", "Create a tenant and its first admin key", created::<CreatedTenant>()).body::<CreateTenant>(),
        op(M::GET, "/api/v1/tenants", "List tenants", page::<Tenant>()).paged(),
        op(M::GET, "/api/v1/api-keys", "List API keys", page::<ApiKey>()).paged(),
        op(M::POST, "/api/v1/api-keys", "Create an API key (the secret is shown once)", created::<CreatedApiKey>()).body::<CreateApiKey>(),
        op(M::DELETE, "/api/v1/api-keys/{id}", "Revoke an API key", ok::<ApiKey>()),
    ]
}
