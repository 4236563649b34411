-- Work: agents, workers, workflows (stages, work items, activations) and
-- tasks with the claim queue.
-- Routing tags are JSONB arrays of normalised (trimmed, lower-case, sorted,
-- deduplicated) strings.

CREATE TABLE workers (
    id                          UUID PRIMARY KEY,
    tenant_id                   UUID NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    name                        TEXT NOT NULL,
    runtime_type                TEXT NOT NULL,
    connection_mode             TEXT NOT NULL,
    routing_tags                JSONB NOT NULL,
    host_info                   JSONB NOT NULL,
    heartbeat_interval_seconds  INTEGER NOT NULL,
    metadata                    JSONB NOT NULL,
    status                      TEXT NOT NULL,
    current_task_id             UUID,
    metrics                     JSONB,
    last_heartbeat_at           TIMESTAMPTZ NOT NULL,
    created_at                  TIMESTAMPTZ NOT NULL,
    updated_at                  TIMESTAMPTZ NOT NULL
);
CREATE INDEX workers_tenant_created ON workers (tenant_id, created_at DESC, id DESC);
CREATE INDEX workers_online ON workers (last_heartbeat_at) WHERE status = 'online';

CREATE TABLE agents (
    id                          UUID PRIMARY KEY,
    tenant_id                   UUID NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    name                        TEXT NOT NULL,
    protocol                    TEXT NOT NULL,
    routing_tags                JSONB NOT NULL,
    execution_mode              TEXT NOT NULL,
    status                      TEXT NOT NULL,
    worker_id                   UUID REFERENCES workers(id) ON DELETE SET NULL,
    heartbeat_interval_seconds  INTEGER NOT NULL,
    tools                       JSONB NOT NULL,
    metadata                    JSONB NOT NULL,
    acp                         JSONB,
    profile                     JSONB,
    last_heartbeat_at           TIMESTAMPTZ NOT NULL,
    created_at                  TIMESTAMPTZ NOT NULL,
    updated_at                  TIMESTAMPTZ NOT NULL
);
CREATE INDEX agents_tenant_created ON agents (tenant_id, created_at DESC, id DESC);
CREATE INDEX agents_worker ON agents (worker_id) WHERE worker_id IS NOT NULL;
CREATE INDEX agents_active ON agents (last_heartbeat_at) WHERE status = 'active';

CREATE TABLE workflows (
    id                      UUID PRIMARY KEY,
    tenant_id               UUID NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    workspace_id            UUID NOT NULL,
    playbook_id             UUID NOT NULL,
    name                    TEXT NOT NULL,
    state                   TEXT NOT NULL,
    lifecycle               TEXT NOT NULL,
    operator_note           TEXT,
    parameters              JSONB NOT NULL,
    metadata                JSONB NOT NULL,
    token_budget            DOUBLE PRECISION,
    cost_cap_usd            DOUBLE PRECISION,
    max_duration_minutes    DOUBLE PRECISION,
    live_visibility_mode    TEXT NOT NULL,
    initial_input_packet    JSONB,
    lineage_id              UUID NOT NULL,
    attempt_number          INTEGER NOT NULL,
    attempt_kind            TEXT NOT NULL,
    redrive_of              UUID,
    completed_at            TIMESTAMPTZ,
    created_at              TIMESTAMPTZ NOT NULL,
    updated_at              TIMESTAMPTZ NOT NULL
);
CREATE INDEX workflows_tenant_created ON workflows (tenant_id, created_at DESC, id DESC);
CREATE INDEX workflows_workspace ON workflows (workspace_id);
CREATE INDEX workflows_playbook ON workflows (playbook_id);
CREATE INDEX workflows_lineage ON workflows (lineage_id, attempt_number);

CREATE TABLE workflow_stages (
    workflow_id   UUID NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    position      INTEGER NOT NULL,
    name          TEXT NOT NULL,
    goal          TEXT,
    status        TEXT NOT NULL,
    started_at    TIMESTAMPTZ,
    completed_at  TIMESTAMPTZ,
    PRIMARY KEY (workflow_id, position)
);

CREATE TABLE work_items (
    id            UUID PRIMARY KEY,
    tenant_id     UUID NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    workflow_id   UUID NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    title         TEXT NOT NULL,
    goal          TEXT,
    stage_name    TEXT,
    column_id     TEXT NOT NULL,
    priority      TEXT NOT NULL,
    metadata      JSONB NOT NULL,
    completed_at  TIMESTAMPTZ,
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX work_items_workflow ON work_items (workflow_id, created_at, id);

CREATE TABLE activations (
    id            UUID PRIMARY KEY,
    tenant_id     UUID NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    workflow_id   UUID NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    reason        TEXT NOT NULL,
    event_type    TEXT NOT NULL,
    payload       JSONB NOT NULL,
    status        TEXT NOT NULL,
    task_id       UUID,
    attempts      INTEGER NOT NULL,
    error         JSONB,
    started_at    TIMESTAMPTZ,
    completed_at  TIMESTAMPTZ,
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX activations_workflow ON activations (workflow_id, created_at, id);
CREATE INDEX activations_queued ON activations (workflow_id, created_at, id) WHERE status = 'queued';
CREATE UNIQUE INDEX activations_one_processing ON activations (workflow_id) WHERE status = 'processing';

CREATE TABLE tasks (
    id                   UUID PRIMARY KEY,
    tenant_id            UUID NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    title                TEXT NOT NULL,
    type                 TEXT NOT NULL,
    task_kind            TEXT NOT NULL,
    description          TEXT,
    priority             TEXT NOT NULL,
    priority_rank        INTEGER NOT NULL,
    state                TEXT NOT NULL,
    workflow_id          UUID REFERENCES workflows(id) ON DELETE CASCADE,
    work_item_id         UUID REFERENCES work_items(id) ON DELETE SET NULL,
    workspace_id         UUID,
    activation_id        UUID,
    stage_name           TEXT,
    role                 TEXT,
    required_tags        JSONB NOT NULL,
    input                JSONB NOT NULL,
    context              JSONB NOT NULL,
    output               JSONB,
    error                JSONB,
    metrics              JSONB,
    git_info             JSONB,
    verification         JSONB,
    execution_backend    TEXT NOT NULL,
    timeout_minutes      INTEGER NOT NULL,
    token_budget         DOUBLE PRECISION,
    cost_cap_usd         DOUBLE PRECISION,
    max_iterations       INTEGER,
    llm_max_retries      INTEGER,
    auto_retry           BOOLEAN NOT NULL,
    max_retries          INTEGER NOT NULL,
    retry_count          INTEGER NOT NULL,
    metadata             JSONB NOT NULL,
    assigned_agent_id    UUID,
    assigned_worker_id   UUID,
    preferred_agent_id   UUID,
    preferred_worker_id  UUID,
    claimed_at           TIMESTAMPTZ,
    started_at           TIMESTAMPTZ,
    completed_at         TIMESTAMPTZ,
    created_at           TIMESTAMPTZ NOT NULL,
    updated_at           TIMESTAMPTZ NOT NULL
) WITH (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
-- The claim queue: only pending rows, in claim order.
CREATE INDEX tasks_claimable ON tasks (tenant_id, priority_rank DESC, created_at, id) WHERE state = 'pending';
CREATE INDEX tasks_claimable_preferred_agent ON tasks (preferred_agent_id, priority_rank DESC, created_at, id) WHERE state = 'pending' AND preferred_agent_id IS NOT NULL;
CREATE INDEX tasks_claimable_preferred_worker ON tasks (preferred_worker_id, priority_rank DESC, created_at, id) WHERE state = 'pending' AND preferred_worker_id IS NOT NULL;
-- Held work: one active task per agent, liveness and timeouts.
CREATE INDEX tasks_held_by_agent ON tasks (assigned_agent_id) WHERE state IN ('claimed', 'in_progress');
CREATE INDEX tasks_held_since ON tasks (claimed_at) WHERE state IN ('claimed', 'in_progress');
CREATE INDEX tasks_tenant_created ON tasks (tenant_id, created_at DESC, id DESC);
CREATE INDEX tasks_workflow ON tasks (workflow_id, state) WHERE workflow_id IS NOT NULL;
CREATE INDEX tasks_work_item ON tasks (work_item_id) WHERE work_item_id IS NOT NULL;

CREATE TABLE task_handoffs (
    id          UUID PRIMARY KEY,
    tenant_id   UUID NOT NULL,
    task_id     UUID NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    sequence    INTEGER NOT NULL,
    body        JSONB NOT NULL,
    agent_id    UUID,
    created_at  TIMESTAMPTZ NOT NULL,
    UNIQUE (task_id, sequence)
);
