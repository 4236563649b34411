-- Remote MCP servers (issue 12). `parameters` is a JSON array of
-- {placement, key, valueKind, value}; a secret's value is sealed with the
-- deployment's key, bound to the tenant, the server and the parameter.
-- `enabled_since` is when enabledByDefaultForNewSpecialists was last
-- turned on: agents registered from then on get the server in their claim
-- credentials.

CREATE TABLE remote_mcp_servers (
    id                         BLOB PRIMARY KEY NOT NULL,
    tenant_id                  BLOB NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    name                       TEXT NOT NULL,
    description                TEXT NOT NULL,
    endpoint_url               TEXT NOT NULL,
    transport_preference       TEXT NOT NULL,
    call_timeout_seconds       INTEGER NOT NULL,
    auth_mode                  TEXT NOT NULL,
    enabled_by_default         INTEGER NOT NULL,
    enabled_since              TEXT,
    parameters                 TEXT NOT NULL,
    verification_status        TEXT NOT NULL,
    verification_error         TEXT,
    verification_failed_step   TEXT,
    resolved_transport         TEXT,
    capabilities               TEXT NOT NULL,
    verified_at                TEXT,
    oauth_status               TEXT NOT NULL,
    created_at                 TEXT NOT NULL,
    updated_at                 TEXT NOT NULL
);
CREATE UNIQUE INDEX remote_mcp_servers_name ON remote_mcp_servers (tenant_id, name);
CREATE INDEX remote_mcp_servers_tenant_created ON remote_mcp_servers (tenant_id, created_at DESC, id DESC);
