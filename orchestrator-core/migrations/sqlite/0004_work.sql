-- Work: agents, workers, workflows (stages, work items, activations) and
-- tasks with the claim queue. UUIDs are BLOBs, timestamps TEXT, JSON TEXT.
-- Routing tags are JSON arrays of normalised (trimmed, lower-case, sorted,
-- deduplicated) strings.

CREATE TABLE workers (
    id                          BLOB PRIMARY KEY NOT NULL,
    tenant_id                   BLOB NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    name                        TEXT NOT NULL,
    runtime_type                TEXT NOT NULL,
    connection_mode             TEXT NOT NULL,
    routing_tags                TEXT NOT NULL,
    host_info                   TEXT NOT NULL,
    heartbeat_interval_seconds  INTEGER NOT NULL,
    metadata                    TEXT NOT NULL,
    status                      TEXT NOT NULL,
    current_task_id             BLOB,
    metrics                     TEXT,
    last_heartbeat_at           TEXT NOT NULL,
    created_at                  TEXT NOT NULL,
    updated_at                  TEXT NOT NULL
);
CREATE INDEX workers_tenant_created ON workers (tenant_id, created_at DESC, id DESC);
CREATE INDEX workers_online ON workers (last_heartbeat_at) WHERE status = 'online';

CREATE TABLE agents (
    id                          BLOB PRIMARY KEY NOT NULL,
    tenant_id                   BLOB NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    name                        TEXT NOT NULL,
    protocol                    TEXT NOT NULL,
    routing_tags                TEXT NOT NULL,
    execution_mode              TEXT NOT NULL,
    status                      TEXT NOT NULL,
    worker_id                   BLOB REFERENCES workers(id) ON DELETE SET NULL,
    heartbeat_interval_seconds  INTEGER NOT NULL,
    tools                       TEXT NOT NULL,
    metadata                    TEXT NOT NULL,
    acp                         TEXT,
    profile                     TEXT,
    last_heartbeat_at           TEXT NOT NULL,
    created_at                  TEXT NOT NULL,
    updated_at                  TEXT NOT NULL
);
CREATE INDEX agents_tenant_created ON agents (tenant_id, created_at DESC, id DESC);
CREATE INDEX agents_worker ON agents (worker_id) WHERE worker_id IS NOT NULL;
CREATE INDEX agents_active ON agents (last_heartbeat_at) WHERE status = 'active';

CREATE TABLE workflows (
    id                      BLOB PRIMARY KEY NOT NULL,
    tenant_id               BLOB NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    workspace_id            BLOB NOT NULL,
    playbook_id             BLOB NOT NULL,
    name                    TEXT NOT NULL,
    state                   TEXT NOT NULL,
    lifecycle               TEXT NOT NULL,
    operator_note           TEXT,
    parameters              TEXT NOT NULL,
    metadata                TEXT NOT NULL,
    token_budget            DOUBLE PRECISION,
    cost_cap_usd            DOUBLE PRECISION,
    max_duration_minutes    DOUBLE PRECISION,
    live_visibility_mode    TEXT NOT NULL,
    initial_input_packet    TEXT,
    lineage_id              BLOB NOT NULL,
    attempt_number          INTEGER NOT NULL,
    attempt_kind            TEXT NOT NULL,
    redrive_of              BLOB,
    completed_at            TEXT,
    created_at              TEXT NOT NULL,
    updated_at              TEXT NOT NULL
);
CREATE INDEX workflows_tenant_created ON workflows (tenant_id, created_at DESC, id DESC);
CREATE INDEX workflows_workspace ON workflows (workspace_id);
CREATE INDEX workflows_playbook ON workflows (playbook_id);
CREATE INDEX workflows_lineage ON workflows (lineage_id, attempt_number);

CREATE TABLE workflow_stages (
    workflow_id   BLOB NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    position      INTEGER NOT NULL,
    name          TEXT NOT NULL,
    goal          TEXT,
    status        TEXT NOT NULL,
    started_at    TEXT,
    completed_at  TEXT,
    PRIMARY KEY (workflow_id, position)
);

CREATE TABLE work_items (
    id            BLOB PRIMARY KEY NOT NULL,
    tenant_id     BLOB NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    workflow_id   BLOB NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    title         TEXT NOT NULL,
    goal          TEXT,
    stage_name    TEXT,
    column_id     TEXT NOT NULL,
    priority      TEXT NOT NULL,
    metadata      TEXT NOT NULL,
    completed_at  TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE INDEX work_items_workflow ON work_items (workflow_id, created_at, id);

CREATE TABLE activations (
    id            BLOB PRIMARY KEY NOT NULL,
    tenant_id     BLOB NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    workflow_id   BLOB NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    reason        TEXT NOT NULL,
    event_type    TEXT NOT NULL,
    payload       TEXT NOT NULL,
    status        TEXT NOT NULL,
    task_id       BLOB,
    attempts      INTEGER NOT NULL,
    error         TEXT,
    started_at    TEXT,
    completed_at  TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE INDEX activations_workflow ON activations (workflow_id, created_at, id);
CREATE INDEX activations_queued ON activations (workflow_id, created_at, id) WHERE status = 'queued';
CREATE UNIQUE INDEX activations_one_processing ON activations (workflow_id) WHERE status = 'processing';

CREATE TABLE tasks (
    id                   BLOB PRIMARY KEY NOT NULL,
    tenant_id            BLOB NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    title                TEXT NOT NULL,
    type                 TEXT NOT NULL,
    task_kind            TEXT NOT NULL,
    description          TEXT,
    priority             TEXT NOT NULL,
    priority_rank        INTEGER NOT NULL,
    state                TEXT NOT NULL,
    workflow_id          BLOB REFERENCES workflows(id) ON DELETE CASCADE,
    work_item_id         BLOB REFERENCES work_items(id) ON DELETE SET NULL,
    workspace_id         BLOB,
    activation_id        BLOB,
    stage_name           TEXT,
    role                 TEXT,
    required_tags        TEXT NOT NULL,
    input                TEXT NOT NULL,
    context              TEXT NOT NULL,
    output               TEXT,
    error                TEXT,
    metrics              TEXT,
    git_info             TEXT,
    verification         TEXT,
    execution_backend    TEXT NOT NULL,
    timeout_minutes      INTEGER NOT NULL,
    token_budget         DOUBLE PRECISION,
    cost_cap_usd         DOUBLE PRECISION,
    max_iterations       INTEGER,
    llm_max_retries      INTEGER,
    auto_retry           INTEGER NOT NULL,
    max_retries          INTEGER NOT NULL,
    retry_count          INTEGER NOT NULL,
    metadata             TEXT NOT NULL,
    assigned_agent_id    BLOB,
    assigned_worker_id   BLOB,
    preferred_agent_id   BLOB,
    preferred_worker_id  BLOB,
    claimed_at           TEXT,
    started_at           TEXT,
    completed_at         TEXT,
    created_at           TEXT NOT NULL,
    updated_at           TEXT NOT NULL
);
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
    id          BLOB PRIMARY KEY NOT NULL,
    tenant_id   BLOB NOT NULL,
    task_id     BLOB NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    sequence    INTEGER NOT NULL,
    body        TEXT NOT NULL,
    agent_id    BLOB,
    created_at  TEXT NOT NULL,
    UNIQUE (task_id, sequence)
);
