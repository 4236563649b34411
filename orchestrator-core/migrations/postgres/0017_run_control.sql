-- Run control (issue 30): retry policies with backoff, delayed tasks and
-- expiry, leases with heartbeats and fencing, cooperative cancellation and
-- dedupe keys.
--
-- `run_at`: a pending task is claimable only once `run_at` is NULL or past.
-- `attempt`: 1 for the first run, +1 at each retry; the fencing token of
-- heartbeat/start/complete/fail. `last_heartbeat_at`: the holder's last
-- claim, start or heartbeat; with `heartbeat_timeout_seconds` it makes the
-- lease (expires at last_heartbeat_at + timeout). `lease_lost_agent_id`: the
-- agent whose lease expired last, so its late calls are told LEASE_LOST.
ALTER TABLE tasks ADD COLUMN run_at TIMESTAMPTZ;
ALTER TABLE tasks ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1;
ALTER TABLE tasks ADD COLUMN retry_policy JSONB;
ALTER TABLE tasks ADD COLUMN heartbeat_timeout_seconds INTEGER;
ALTER TABLE tasks ADD COLUMN last_heartbeat_at TIMESTAMPTZ;
ALTER TABLE tasks ADD COLUMN lease_lost_agent_id UUID;
ALTER TABLE tasks ADD COLUMN progress JSONB;
ALTER TABLE tasks ADD COLUMN progress_at TIMESTAMPTZ;
ALTER TABLE tasks ADD COLUMN cancel_requested BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE tasks ADD COLUMN expires_at TIMESTAMPTZ;
ALTER TABLE tasks ADD COLUMN dedupe_key TEXT;
ALTER TABLE workflows ADD COLUMN dedupe_key TEXT;

-- The claim walks these in claim order; `run_at` rides along at the end so
-- the `run_at IS NULL OR run_at <= now` test is answered from the index
-- entry, and the claim stays one indexed statement.
DROP INDEX tasks_claimable;
DROP INDEX tasks_claimable_preferred_agent;
DROP INDEX tasks_claimable_preferred_worker;
CREATE INDEX tasks_claimable ON tasks (tenant_id, priority_rank DESC, created_at, id, run_at) WHERE state = 'pending';
CREATE INDEX tasks_claimable_preferred_agent ON tasks (preferred_agent_id, priority_rank DESC, created_at, id, run_at) WHERE state = 'pending' AND preferred_agent_id IS NOT NULL;
CREATE INDEX tasks_claimable_preferred_worker ON tasks (preferred_worker_id, priority_rank DESC, created_at, id, run_at) WHERE state = 'pending' AND preferred_worker_id IS NOT NULL;

-- Due work of the run-control job: the next delayed task, the next expiry,
-- the held tasks with a lease.
CREATE INDEX tasks_delayed ON tasks (run_at) WHERE state = 'pending' AND run_at IS NOT NULL;
CREATE INDEX tasks_expiring ON tasks (expires_at) WHERE state = 'pending' AND expires_at IS NOT NULL;
CREATE INDEX tasks_leased ON tasks (last_heartbeat_at) WHERE state IN ('claimed', 'in_progress') AND heartbeat_timeout_seconds IS NOT NULL;

-- One live task (workflow) per key and tenant: a second create with the key
-- finds the first instead of inserting.
CREATE UNIQUE INDEX tasks_dedupe_key ON tasks (tenant_id, dedupe_key) WHERE dedupe_key IS NOT NULL AND state NOT IN ('completed', 'failed', 'cancelled');
CREATE UNIQUE INDEX workflows_dedupe_key ON workflows (tenant_id, dedupe_key) WHERE dedupe_key IS NOT NULL AND state NOT IN ('completed', 'failed', 'cancelled');
