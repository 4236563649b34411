-- Raw PostgreSQL baseline: a table shaped like orch's `tasks` (same columns
-- that the lifecycle touches, same types, the same partial claim index and
-- autovacuum settings) and an events table like orch's, without foreign
-- keys. Loaded by bench/run-all.sh into a scratch database, then driven by
-- pg_lifecycle.sql under pgbench.
DROP TABLE IF EXISTS bench_tasks;
DROP TABLE IF EXISTS bench_events;
CREATE TABLE bench_tasks (
    id                UUID PRIMARY KEY,
    tenant_id         UUID NOT NULL,
    title             TEXT NOT NULL,
    type              TEXT NOT NULL,
    priority_rank     INTEGER NOT NULL,
    state             TEXT NOT NULL,
    workflow_id       UUID,
    required_tags     JSONB NOT NULL,
    input             JSONB NOT NULL,
    context           JSONB NOT NULL,
    output            JSONB,
    metadata          JSONB NOT NULL,
    assigned_agent_id UUID,
    preferred_agent_id UUID,
    preferred_worker_id UUID,
    claimed_at        TIMESTAMPTZ,
    started_at        TIMESTAMPTZ,
    completed_at      TIMESTAMPTZ,
    created_at        TIMESTAMPTZ NOT NULL,
    updated_at        TIMESTAMPTZ NOT NULL
) WITH (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
CREATE INDEX bench_tasks_claimable ON bench_tasks (tenant_id, priority_rank DESC, created_at, id) WHERE state = 'pending';
CREATE INDEX bench_tasks_held_by_agent ON bench_tasks (assigned_agent_id) WHERE state IN ('claimed', 'in_progress');
CREATE INDEX bench_tasks_tenant_created ON bench_tasks (tenant_id, created_at DESC, id DESC);

CREATE TABLE bench_events (
    id          BIGSERIAL PRIMARY KEY,
    tenant_id   UUID NOT NULL,
    type        TEXT NOT NULL,
    entity_type TEXT NOT NULL,
    entity_id   UUID NOT NULL,
    data        JSONB NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL
);

-- A standing queue, so a claim always finds work (pgbench aborts a client
-- whose \gset gets no row) and claims scan a realistic queue.
INSERT INTO bench_tasks (id, tenant_id, title, type, priority_rank, state, required_tags, input, context, metadata, created_at, updated_at)
SELECT gen_random_uuid(), '00000000-0000-0000-0000-000000000001', 'seed ' || g, 'analysis', 2, 'pending',
       '[]', jsonb_build_object('n', g), '{}', '{}', now(), now()
FROM generate_series(1, 10000) g;
VACUUM ANALYZE bench_tasks;

-- orch's `logs` table (orchestrator-core/migrations/postgres 0005, 0009):
-- every column and all five indexes, for bench/raw/pg_ingest.sql.
DROP TABLE IF EXISTS bench_logs;
CREATE TABLE bench_logs (
    id                    BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    txid                  BIGINT NOT NULL DEFAULT (pg_current_xact_id()::text::bigint),
    tenant_id             UUID NOT NULL,
    created_at            TIMESTAMPTZ NOT NULL,
    trace_id              UUID,
    span_id               UUID,
    parent_span_id        UUID,
    source                TEXT NOT NULL,
    category              TEXT NOT NULL,
    level                 TEXT NOT NULL,
    operation             TEXT NOT NULL,
    status                TEXT,
    duration_ms           BIGINT,
    payload               JSONB NOT NULL,
    error                 JSONB,
    workspace_id          UUID,
    workflow_id           UUID,
    task_id               UUID,
    work_item_id          UUID,
    activation_id         UUID,
    stage_name            TEXT,
    is_orchestrator_task  BOOLEAN,
    execution_backend     TEXT,
    tool_owner            TEXT,
    role                  TEXT,
    actor_type            TEXT,
    actor_id              TEXT,
    actor_name            TEXT,
    resource_type         TEXT,
    resource_id           TEXT,
    resource_name         TEXT
);
CREATE INDEX bench_logs_tenant_key ON bench_logs (tenant_id, txid, id);
CREATE INDEX bench_logs_workflow ON bench_logs (tenant_id, workflow_id, txid, id) WHERE workflow_id IS NOT NULL;
CREATE INDEX bench_logs_task ON bench_logs (tenant_id, task_id, txid, id) WHERE task_id IS NOT NULL;
CREATE INDEX bench_logs_operation ON bench_logs (tenant_id, operation, txid, id);
CREATE INDEX bench_logs_trace ON bench_logs (tenant_id, trace_id, txid, id) WHERE trace_id IS NOT NULL;
