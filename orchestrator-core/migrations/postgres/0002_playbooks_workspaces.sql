-- Playbooks (revision families) and workspaces.
--
-- A playbook is a family of revisions: every create, PATCH or PUT inserts a
-- row; `family_id` is the id of the family's first revision (so the id a
-- create answers stays valid forever) and `version` counts from 1 within the
-- family. Exactly one row per family has `is_current` (the newest revision);
-- `is_active` is true on the current revision unless the family is archived,
-- and false on every older revision. Workflows reference a revision id.

CREATE TABLE playbooks (
    id                 UUID PRIMARY KEY,
    tenant_id          UUID NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    family_id          UUID NOT NULL,
    version            INTEGER NOT NULL,
    is_current         BOOLEAN NOT NULL,
    is_active          BOOLEAN NOT NULL,
    archived           BOOLEAN NOT NULL DEFAULT FALSE,
    slug               TEXT NOT NULL,
    name               TEXT NOT NULL,
    description        TEXT NOT NULL DEFAULT '',
    outcome            TEXT NOT NULL,
    lifecycle          TEXT NOT NULL,
    definition         JSONB NOT NULL,
    source_repository  TEXT,
    catalog_id         TEXT,
    catalog_version    TEXT,
    created_at         TIMESTAMPTZ NOT NULL,
    updated_at         TIMESTAMPTZ NOT NULL,
    UNIQUE (family_id, version)
);
CREATE UNIQUE INDEX playbooks_current_family ON playbooks (family_id) WHERE is_current;
CREATE UNIQUE INDEX playbooks_current_slug ON playbooks (tenant_id, slug) WHERE is_current;
CREATE UNIQUE INDEX playbooks_current_name ON playbooks (tenant_id, name) WHERE is_current;
CREATE INDEX playbooks_tenant_created ON playbooks (tenant_id, created_at DESC);

-- Workspaces: standing repository and memory context. The git token is
-- encrypted at rest (AES-256-GCM, bound to the workspace id) and never read
-- back; `git_token_set_at` says whether one is stored.
CREATE TABLE workspaces (
    id                   UUID PRIMARY KEY,
    tenant_id            UUID NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    name                 TEXT NOT NULL,
    slug                 TEXT NOT NULL,
    description          TEXT NOT NULL DEFAULT '',
    repository_url       TEXT,
    default_branch       TEXT,
    settings             JSONB NOT NULL,
    memory               JSONB NOT NULL,
    is_active            BOOLEAN NOT NULL DEFAULT TRUE,
    git_token_encrypted  TEXT,
    git_token_set_at     TIMESTAMPTZ,
    git_verified_at      TIMESTAMPTZ,
    created_at           TIMESTAMPTZ NOT NULL,
    updated_at           TIMESTAMPTZ NOT NULL,
    UNIQUE (tenant_id, slug)
);
CREATE INDEX workspaces_tenant_created ON workspaces (tenant_id, created_at DESC);
