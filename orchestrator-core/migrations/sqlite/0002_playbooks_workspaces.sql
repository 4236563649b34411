-- Playbooks (revision families) and workspaces.
--
-- A playbook is a family of revisions: every create, PATCH or PUT inserts a
-- row; `family_id` is the id of the family's first revision (so the id a
-- create answers stays valid forever) and `version` counts from 1 within the
-- family. Exactly one row per family has `is_current` (the newest revision);
-- `is_active` is true on the current revision unless the family is archived,
-- and false on every older revision. Workflows reference a revision id.

CREATE TABLE playbooks (
    id                 BLOB PRIMARY KEY NOT NULL,
    tenant_id          BLOB NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    family_id          BLOB NOT NULL,
    version            INTEGER NOT NULL,
    is_current         INTEGER NOT NULL,
    is_active          INTEGER NOT NULL,
    archived           INTEGER NOT NULL DEFAULT 0,
    slug               TEXT NOT NULL,
    name               TEXT NOT NULL,
    description        TEXT NOT NULL DEFAULT '',
    outcome            TEXT NOT NULL,
    lifecycle          TEXT NOT NULL,
    definition         TEXT NOT NULL,
    source_repository  TEXT,
    catalog_id         TEXT,
    catalog_version    TEXT,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    UNIQUE (family_id, version)
);
CREATE UNIQUE INDEX playbooks_current_family ON playbooks (family_id) WHERE is_current = 1;
CREATE UNIQUE INDEX playbooks_current_slug ON playbooks (tenant_id, slug) WHERE is_current = 1;
CREATE UNIQUE INDEX playbooks_current_name ON playbooks (tenant_id, name) WHERE is_current = 1;
CREATE INDEX playbooks_tenant_created ON playbooks (tenant_id, created_at DESC);

-- Workspaces: standing repository and memory context. The git token is
-- encrypted at rest (AES-256-GCM, bound to the workspace id) and never read
-- back; `git_token_set_at` says whether one is stored.
CREATE TABLE workspaces (
    id                   BLOB PRIMARY KEY NOT NULL,
    tenant_id            BLOB NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    name                 TEXT NOT NULL,
    slug                 TEXT NOT NULL,
    description          TEXT NOT NULL DEFAULT '',
    repository_url       TEXT,
    default_branch       TEXT,
    settings             TEXT NOT NULL,
    memory               TEXT NOT NULL,
    is_active            INTEGER NOT NULL DEFAULT 1,
    git_token_encrypted  TEXT,
    git_token_set_at     TEXT,
    git_verified_at      TEXT,
    created_at           TEXT NOT NULL,
    updated_at           TEXT NOT NULL,
    UNIQUE (tenant_id, slug)
);
CREATE INDEX workspaces_tenant_created ON workspaces (tenant_id, created_at DESC);
