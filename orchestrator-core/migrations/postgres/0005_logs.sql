-- Logs: the structured execution log (ingested by runtimes and written by the
-- platform itself).
--
-- Keyset order on PostgreSQL is (txid, id): identity values commit out of
-- order, so a reader that only followed `id` could step past a row whose
-- transaction commits late. Each row records the id of the transaction that
-- wrote it, and readers that follow the log forwards only read rows with
-- `txid < pg_snapshot_xmin(pg_current_snapshot())`: every such transaction
-- has finished, and every later write gets a larger txid, so the order
-- (txid, id) only ever grows at the end. The same column is added to events.
CREATE TABLE logs (
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
CREATE INDEX logs_tenant_key ON logs (tenant_id, txid, id);
CREATE INDEX logs_workflow ON logs (tenant_id, workflow_id, txid, id) WHERE workflow_id IS NOT NULL;
CREATE INDEX logs_task ON logs (tenant_id, task_id, txid, id) WHERE task_id IS NOT NULL;
CREATE INDEX logs_operation ON logs (tenant_id, operation, txid, id);

ALTER TABLE events ADD COLUMN txid BIGINT NOT NULL DEFAULT (pg_current_xact_id()::text::bigint);
CREATE INDEX events_tenant_key ON events (tenant_id, txid, id);
