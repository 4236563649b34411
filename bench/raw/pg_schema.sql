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
