-- Schedules (issue 29): cron and interval schedules that launch a workflow or
-- create a task, and the run of each slot.
--
-- `next_slot` is the next slot of the spec (its `scheduled_for`) and
-- `next_fire_at` that slot plus its jitter: the firing job picks schedules
-- with `next_fire_at <= now`. Both are NULL while paused or after `end_at`.
-- `buffered_slot` is the one slot an overlap policy `buffer_one` keeps
-- waiting; `backfill_next`/`backfill_until` the rest of a backfill.
-- The unique key on (schedule_id, scheduled_for) is what makes each slot
-- fire at most once: the run row is inserted in the transaction that
-- launches the workflow or creates the task. `lag_ms` is how long after
-- its due time (slot + jitter) a timer's fire ran (for the metrics).

CREATE TABLE schedules (
    id                      BLOB PRIMARY KEY NOT NULL,
    tenant_id               BLOB NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    name                    TEXT NOT NULL,
    description             TEXT,
    cron                    TEXT,
    every_seconds           INTEGER,
    timezone                TEXT NOT NULL,
    overlap                 TEXT NOT NULL,
    catchup                 TEXT NOT NULL,
    catchup_window_seconds  INTEGER NOT NULL,
    jitter_seconds          INTEGER NOT NULL,
    start_at                TEXT,
    end_at                  TEXT,
    paused                  INTEGER NOT NULL,
    target                  TEXT NOT NULL,
    next_slot               TEXT,
    next_fire_at            TEXT,
    buffered_slot           TEXT,
    backfill_next           TEXT,
    backfill_until          TEXT,
    last_fired_at           TEXT,
    fire_count              INTEGER NOT NULL,
    skip_count              INTEGER NOT NULL,
    created_at              TEXT NOT NULL,
    updated_at              TEXT NOT NULL
);
CREATE UNIQUE INDEX schedules_name ON schedules (tenant_id, name);
CREATE INDEX schedules_tenant_created ON schedules (tenant_id, created_at DESC, id DESC);
CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE next_fire_at IS NOT NULL;

CREATE TABLE schedule_runs (
    id              BLOB PRIMARY KEY NOT NULL,
    tenant_id       BLOB NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    schedule_id     BLOB NOT NULL REFERENCES schedules(id) ON DELETE CASCADE,
    scheduled_for   TEXT NOT NULL,
    fired_at        TEXT NOT NULL,
    outcome         TEXT NOT NULL,
    reason          TEXT,
    lag_ms          INTEGER,
    workflow_id     BLOB,
    task_id         BLOB
);
CREATE UNIQUE INDEX schedule_runs_slot ON schedule_runs (schedule_id, scheduled_for);
