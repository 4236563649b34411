-- Integrations: ACP sessions.

CREATE TABLE acp_sessions (
    id                 UUID PRIMARY KEY,
    tenant_id          UUID NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    agent_id           UUID NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    worker_id          UUID,
    workflow_id        UUID,
    task_id            UUID,
    transport          TEXT NOT NULL,
    mode               TEXT NOT NULL,
    status             TEXT NOT NULL,
    workspace_path     TEXT,
    metadata           JSONB NOT NULL,
    -- Set while a `session`-mode session is open: agent and workflow. The
    -- unique index makes "one reusable open session per agent and
    -- workflow" hold under concurrent creates.
    reuse_key          TEXT,
    last_heartbeat_at  TIMESTAMPTZ NOT NULL,
    created_at         TIMESTAMPTZ NOT NULL,
    updated_at         TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX acp_sessions_reuse ON acp_sessions (reuse_key);
CREATE INDEX acp_sessions_tenant_created ON acp_sessions (tenant_id, created_at DESC, id DESC);
CREATE INDEX acp_sessions_agent ON acp_sessions (agent_id);

-- The tenant's LLM provider (claim credentials). `api_key` and the values
-- of `extra_headers` (a JSON object name -> value) are sealed with the
-- deployment's key, bound to the tenant and the field.
CREATE TABLE llm_settings (
    tenant_id      UUID PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
    provider       TEXT NOT NULL,
    model          TEXT,
    base_url       TEXT,
    api_key        TEXT,
    extra_headers  JSONB NOT NULL,
    updated_at     TIMESTAMPTZ NOT NULL
);
