-- Foundation: tenants, API keys, refresh sessions, idempotency records,
-- server secrets and the entity-event log.
-- UUIDs are 16-byte BLOBs, timestamps RFC 3339 TEXT, JSON TEXT.

CREATE TABLE tenants (
    id          BLOB PRIMARY KEY NOT NULL,
    name        TEXT NOT NULL,
    slug        TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL
);

CREATE TABLE api_keys (
    id          BLOB PRIMARY KEY NOT NULL,
    tenant_id   BLOB NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    scope       TEXT NOT NULL,
    key_hash    TEXT NOT NULL UNIQUE,
    key_prefix  TEXT NOT NULL,
    owner_type  TEXT NOT NULL,
    owner_id    BLOB,
    created_at  TEXT NOT NULL,
    expires_at  TEXT,
    revoked_at  TEXT
);
CREATE INDEX api_keys_tenant_created ON api_keys (tenant_id, created_at DESC, id DESC);

CREATE TABLE refresh_sessions (
    id          BLOB PRIMARY KEY NOT NULL,
    family_id   BLOB NOT NULL,
    tenant_id   BLOB NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    api_key_id  BLOB NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
    token_hash  TEXT NOT NULL UNIQUE,
    persistent  INTEGER NOT NULL,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    rotated_at  TEXT,
    revoked_at  TEXT
);
CREATE INDEX refresh_sessions_family ON refresh_sessions (family_id);

CREATE TABLE idempotency_records (
    tenant_id    BLOB NOT NULL,
    operation    TEXT NOT NULL,
    request_id   TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    response     TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (tenant_id, operation, request_id)
);

CREATE TABLE server_secrets (
    name        TEXT PRIMARY KEY NOT NULL,
    value       TEXT NOT NULL,
    created_at  TEXT NOT NULL
);

CREATE TABLE events (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id     BLOB NOT NULL,
    type          TEXT NOT NULL,
    entity_type   TEXT NOT NULL,
    entity_id     BLOB NOT NULL,
    workflow_id   BLOB,
    workspace_id  BLOB,
    actor_type    TEXT,
    actor_id      BLOB,
    data          TEXT NOT NULL,
    created_at    TEXT NOT NULL
);
CREATE INDEX events_tenant_id ON events (tenant_id, id);
CREATE INDEX events_workflow ON events (workflow_id, id) WHERE workflow_id IS NOT NULL;
