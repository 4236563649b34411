-- Logs: the structured execution log (ingested by runtimes and written by the
-- platform itself). `id` is the keyset-pagination key; ids commit in order
-- because SQLite has a single writer.
CREATE TABLE logs (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id             BLOB NOT NULL,
    created_at            TEXT NOT NULL,
    trace_id              BLOB,
    span_id               BLOB,
    parent_span_id        BLOB,
    source                TEXT NOT NULL,
    category              TEXT NOT NULL,
    level                 TEXT NOT NULL,
    operation             TEXT NOT NULL,
    status                TEXT,
    duration_ms           INTEGER,
    payload               TEXT NOT NULL,
    error                 TEXT,
    workspace_id          BLOB,
    workflow_id           BLOB,
    task_id               BLOB,
    work_item_id          BLOB,
    activation_id         BLOB,
    stage_name            TEXT,
    is_orchestrator_task  INTEGER,
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
CREATE INDEX logs_tenant_id ON logs (tenant_id, id);
CREATE INDEX logs_workflow ON logs (tenant_id, workflow_id, id) WHERE workflow_id IS NOT NULL;
CREATE INDEX logs_task ON logs (tenant_id, task_id, id) WHERE task_id IS NOT NULL;
CREATE INDEX logs_operation ON logs (tenant_id, operation, id);
