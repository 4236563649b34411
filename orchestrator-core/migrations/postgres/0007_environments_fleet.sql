-- Execution environments: container images tasks run in, their verification
-- verdict and the operators' support posture. JSON columns are JSONB here.

CREATE TABLE execution_environments (
    id                             UUID PRIMARY KEY,
    tenant_id                      UUID NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    name                           TEXT NOT NULL,
    description                    TEXT NOT NULL DEFAULT '',
    source_kind                    TEXT NOT NULL,
    catalog_key                    TEXT,
    catalog_version                INTEGER,
    image                          TEXT NOT NULL,
    cpu                            TEXT NOT NULL,
    memory                         TEXT NOT NULL,
    pull_policy                    TEXT NOT NULL,
    compatibility_status           TEXT NOT NULL,
    compatibility_errors           JSONB NOT NULL,
    support_status                 TEXT,
    verification_contract_version  TEXT,
    verified_metadata              JSONB NOT NULL,
    tool_capabilities              JSONB NOT NULL,
    bootstrap_commands             JSONB NOT NULL,
    bootstrap_required_domains     JSONB NOT NULL,
    operator_notes                 TEXT NOT NULL DEFAULT '',
    agent_hint                     TEXT NOT NULL,
    created_at                     TIMESTAMPTZ NOT NULL,
    updated_at                     TIMESTAMPTZ NOT NULL,
    UNIQUE (tenant_id, name)
);
CREATE INDEX execution_environments_tenant_created
    ON execution_environments (tenant_id, created_at DESC, id DESC);

-- A task names the environment it runs in; the foreign key keeps a
-- referenced environment from being deleted. `execution_environment` is the
-- summary the task read model shows, taken when the task was created.
ALTER TABLE tasks ADD COLUMN execution_environment_id UUID REFERENCES execution_environments(id);
ALTER TABLE tasks ADD COLUMN execution_environment JSONB;
CREATE INDEX tasks_execution_environment ON tasks (execution_environment_id)
    WHERE execution_environment_id IS NOT NULL;

-- What each worker last reported it runs: a heartbeat with `containers`
-- replaces the worker's rows.
CREATE TABLE worker_containers (
    tenant_id     UUID NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    worker_id     UUID NOT NULL REFERENCES workers(id) ON DELETE CASCADE,
    container_id  TEXT NOT NULL,
    name          TEXT NOT NULL,
    image         TEXT NOT NULL,
    state         TEXT NOT NULL,
    task_id       UUID,
    started_at    TIMESTAMPTZ NOT NULL,
    cpu_percent   DOUBLE PRECISION,
    memory_bytes  BIGINT,
    reported_at   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (worker_id, container_id)
);
CREATE INDEX worker_containers_tenant ON worker_containers (tenant_id, reported_at DESC);
