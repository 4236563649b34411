-- Foundation: tenants, API keys, refresh sessions, idempotency records,
-- server secrets and the entity-event log.

CREATE TABLE tenants (
    id          UUID PRIMARY KEY,
    name        TEXT NOT NULL,
    slug        TEXT NOT NULL UNIQUE,
    created_at  TIMESTAMPTZ NOT NULL
);

CREATE TABLE api_keys (
    id          UUID PRIMARY KEY,
    tenant_id   UUID NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    scope       TEXT NOT NULL,
    key_hash    TEXT NOT NULL UNIQUE,
    key_prefix  TEXT NOT NULL,
    owner_type  TEXT NOT NULL,
    owner_id    UUID,
    created_at  TIMESTAMPTZ NOT NULL,
    expires_at  TIMESTAMPTZ,
    revoked_at  TIMESTAMPTZ
);
CREATE INDEX api_keys_tenant_created ON api_keys (tenant_id, created_at DESC, id DESC);

CREATE TABLE refresh_sessions (
    id          UUID PRIMARY KEY,
    family_id   UUID NOT NULL,
    tenant_id   UUID NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    api_key_id  UUID NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
    token_hash  TEXT NOT NULL UNIQUE,
    persistent  BOOLEAN NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL,
    rotated_at  TIMESTAMPTZ,
    revoked_at  TIMESTAMPTZ
);
CREATE INDEX refresh_sessions_family ON refresh_sessions (family_id);

CREATE TABLE idempotency_records (
    tenant_id    UUID NOT NULL,
    operation    TEXT NOT NULL,
    request_id   TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    response     TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, operation, request_id)
);

CREATE TABLE server_secrets (
    name        TEXT PRIMARY KEY,
    value       TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL
);

CREATE TABLE events (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id     UUID NOT NULL,
    type          TEXT NOT NULL,
    entity_type   TEXT NOT NULL,
    entity_id     UUID NOT NULL,
    workflow_id   UUID,
    workspace_id  UUID,
    actor_type    TEXT,
    actor_id      UUID,
    data          JSONB NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX events_tenant_id ON events (tenant_id, id);
CREATE INDEX events_workflow ON events (workflow_id, id) WHERE workflow_id IS NOT NULL;
