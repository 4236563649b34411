-- Workspace specs, stored file bytes, workspace files, artifacts, and the
-- tenant-local specialists and skills the community catalog imports.

-- Versioned workspace spec: every PUT adds a version.
CREATE TABLE workspace_specs (
    workspace_id  UUID NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    tenant_id     UUID NOT NULL,
    version       INTEGER NOT NULL,
    spec          JSONB NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (workspace_id, version)
);

-- File bytes live apart from the metadata, in chunks, so lists never load
-- them and downloads stream chunk by chunk. Deleting a blob deletes its
-- chunks and the file or artifact row that points at it.
CREATE TABLE blobs (
    id            UUID PRIMARY KEY,
    tenant_id     UUID NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    workspace_id  UUID REFERENCES workspaces(id) ON DELETE CASCADE,
    size_bytes    BIGINT NOT NULL,
    sha256        TEXT NOT NULL,
    chunk_count   INTEGER NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL
);
CREATE TABLE blob_chunks (
    blob_id  UUID NOT NULL REFERENCES blobs(id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,
    data     BYTEA NOT NULL,
    PRIMARY KEY (blob_id, seq)
);

CREATE TABLE workspace_files (
    id            UUID PRIMARY KEY,
    tenant_id     UUID NOT NULL,
    workspace_id  UUID NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    blob_id       UUID NOT NULL UNIQUE REFERENCES blobs(id) ON DELETE CASCADE,
    key           TEXT NOT NULL,
    file_name     TEXT NOT NULL,
    description   TEXT,
    content_type  TEXT NOT NULL,
    size_bytes    BIGINT NOT NULL,
    checksum      TEXT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL,
    UNIQUE (workspace_id, key)
);

-- Artifacts: files that tasks produce. The linkage columns are plain
-- nullable ids (no foreign keys to workflow, work item or task tables).
CREATE TABLE artifacts (
    id            UUID PRIMARY KEY,
    tenant_id     UUID NOT NULL,
    workspace_id  UUID REFERENCES workspaces(id) ON DELETE CASCADE,
    workflow_id   UUID,
    work_item_id  UUID,
    task_id       UUID,
    stage_name    TEXT,
    role          TEXT,
    blob_id       UUID NOT NULL UNIQUE REFERENCES blobs(id) ON DELETE CASCADE,
    key           TEXT NOT NULL,
    file_name     TEXT NOT NULL,
    description   TEXT,
    content_type  TEXT NOT NULL,
    preview_mode  TEXT NOT NULL,
    size_bytes    BIGINT NOT NULL,
    checksum      TEXT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX artifacts_workspace_created ON artifacts (tenant_id, workspace_id, created_at DESC);
CREATE INDEX artifacts_task ON artifacts (task_id) WHERE task_id IS NOT NULL;
CREATE INDEX artifacts_workflow ON artifacts (workflow_id) WHERE workflow_id IS NOT NULL;

-- Specialists and skills: tenant-local records (imported from the catalog
-- or authored), with provenance when imported.
CREATE TABLE specialists (
    id                 UUID PRIMARY KEY,
    tenant_id          UUID NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    slug               TEXT NOT NULL,
    name               TEXT NOT NULL,
    description        TEXT NOT NULL DEFAULT '',
    definition         JSONB NOT NULL,
    source_repository  TEXT,
    catalog_id         TEXT,
    catalog_version    TEXT,
    created_at         TIMESTAMPTZ NOT NULL,
    updated_at         TIMESTAMPTZ NOT NULL,
    UNIQUE (tenant_id, slug)
);
CREATE TABLE skills (
    id                 UUID PRIMARY KEY,
    tenant_id          UUID NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    slug               TEXT NOT NULL,
    name               TEXT NOT NULL,
    description        TEXT NOT NULL DEFAULT '',
    definition         JSONB NOT NULL,
    source_repository  TEXT,
    catalog_id         TEXT,
    catalog_version    TEXT,
    created_at         TIMESTAMPTZ NOT NULL,
    updated_at         TIMESTAMPTZ NOT NULL,
    UNIQUE (tenant_id, slug)
);

-- One row per catalog import (the `import_batch_id` the import answers).
CREATE TABLE catalog_imports (
    id                 UUID PRIMARY KEY,
    tenant_id          UUID NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    catalog_id         TEXT NOT NULL,
    catalog_version    TEXT NOT NULL,
    source_repository  TEXT NOT NULL,
    playbook_id        UUID,
    result             JSONB NOT NULL,
    created_at         TIMESTAMPTZ NOT NULL
);


-- The workspace timeline reads events by workspace.
CREATE INDEX events_workspace ON events (workspace_id, id) WHERE workspace_id IS NOT NULL;
