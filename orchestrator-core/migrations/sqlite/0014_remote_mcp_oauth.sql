-- OAuth of remote MCP servers (issue 12): one row per server with
-- authMode oauth once a reconnect started. The registered client, the
-- discovered endpoints, the tokens (sealed with the deployment's key) and
-- a pending authorization (sha256 of the one-time state, the sealed PKCE
-- verifier, its expiry). The server's oauth_status lives on
-- remote_mcp_servers.

CREATE TABLE remote_mcp_oauth (
    server_id                  BLOB PRIMARY KEY NOT NULL REFERENCES remote_mcp_servers(id) ON DELETE CASCADE,
    tenant_id                  BLOB NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    issuer                     TEXT NOT NULL,
    authorization_endpoint     TEXT NOT NULL,
    token_endpoint             TEXT NOT NULL,
    revocation_endpoint        TEXT,
    client_id                  TEXT NOT NULL,
    client_secret              TEXT,
    redirect_uri               TEXT NOT NULL,
    resource                   TEXT NOT NULL,
    scopes                     TEXT NOT NULL,
    access_token               TEXT,
    refresh_token              TEXT,
    expires_at                 TEXT,
    pending_state              TEXT,
    pending_verifier           TEXT,
    pending_expires_at         TEXT,
    updated_at                 TEXT NOT NULL
);
CREATE UNIQUE INDEX remote_mcp_oauth_pending_state ON remote_mcp_oauth (pending_state);
