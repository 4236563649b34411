-- Flow limits (issue 31): concurrency keys, fair claiming across keys and
-- rate limits per key, all enforced inside the one claim statement.
--
-- `concurrency_key` / `rate_limit_key` never change after create.
-- `limit_waiting_at`: when the `task.limit_waiting` event was recorded (once
-- per task).
ALTER TABLE tasks ADD COLUMN concurrency_key TEXT;
ALTER TABLE tasks ADD COLUMN rate_limit_key TEXT;
ALTER TABLE tasks ADD COLUMN limit_waiting_at TEXT;

-- One row per concurrency key of a tenant that has a limit or ever had a
-- task, plus the row with the empty key: the group of tasks without a key
-- (keys are 1 to 200 characters, so '' names no user key). `held` counts the
-- key's claimed and in-progress tasks; the triggers below keep it in the
-- transaction that moves the task, so every path that frees a slot
-- (complete, fail, cancel, lease expiry, release) frees it by construction.
-- `last_claimed_at` is what fair claiming orders the groups by.
CREATE TABLE concurrency_keys (
    tenant_id                 BLOB NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    key                       TEXT NOT NULL,
    limit_value               INTEGER NOT NULL DEFAULT 1,
    limit_set                 INTEGER NOT NULL DEFAULT 0,
    held                      INTEGER NOT NULL DEFAULT 0,
    last_claimed_at           TEXT,
    created_at                TEXT NOT NULL,
    updated_at                TEXT NOT NULL,
    PRIMARY KEY (tenant_id, key)
);

CREATE TABLE rate_limits (
    tenant_id                 BLOB NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    key                       TEXT NOT NULL,
    limit_value               INTEGER NOT NULL,
    period_seconds            INTEGER NOT NULL,
    created_at                TEXT NOT NULL,
    updated_at                TEXT NOT NULL,
    PRIMARY KEY (tenant_id, key)
);

-- The claims of each rate key within its window (epoch milliseconds), so
-- the window slides exactly; older rows are pruned by the claim trigger.
CREATE TABLE rate_limit_claims (
    tenant_id                 BLOB NOT NULL,
    key                       TEXT NOT NULL,
    claimed_ms                INTEGER NOT NULL,
    task_id                   BLOB NOT NULL
);
CREATE INDEX rate_limit_claims_window ON rate_limit_claims (tenant_id, key, claimed_ms);

-- The fair pick of the claim: whether the tenant has pending keyed tasks
-- (it picks fairly only then), each key's oldest eligible task, and the
-- groups in the order of their last claim. Then the counts of the listings
-- and the limit-waiting sweep.
CREATE INDEX tasks_keyed_claimable ON tasks (tenant_id, concurrency_key, priority_rank DESC, created_at, id, run_at)
    WHERE state = 'pending' AND concurrency_key IS NOT NULL;
CREATE INDEX concurrency_keys_fair ON concurrency_keys (tenant_id, last_claimed_at, key);
CREATE INDEX tasks_concurrency_key ON tasks (tenant_id, concurrency_key, state) WHERE concurrency_key IS NOT NULL;
CREATE INDEX tasks_rate_limit_key ON tasks (tenant_id, rate_limit_key, state) WHERE rate_limit_key IS NOT NULL;
CREATE INDEX tasks_limit_unmarked ON tasks (created_at) WHERE state = 'pending' AND limit_waiting_at IS NULL
    AND (concurrency_key IS NOT NULL OR rate_limit_key IS NOT NULL);

-- A task becomes held: its key's slot is taken (over the limit aborts the
-- statement: the claim's own filter already skips full keys, so this fires
-- only for a claim that raced), its group's last claim moves, and a rate
-- key's claim is logged (over the window aborts likewise).
CREATE TRIGGER tasks_limits_take AFTER UPDATE OF state ON tasks
WHEN NEW.state IN ('claimed', 'in_progress') AND OLD.state NOT IN ('claimed', 'in_progress')
BEGIN
    UPDATE concurrency_keys SET held = held + CASE WHEN NEW.concurrency_key IS NULL THEN 0 ELSE 1 END,
           last_claimed_at = NEW.updated_at
     WHERE tenant_id = NEW.tenant_id AND key = COALESCE(NEW.concurrency_key, '');
    SELECT RAISE(ABORT, 'orch: flow limit reached') FROM concurrency_keys
     WHERE tenant_id = NEW.tenant_id AND key = NEW.concurrency_key AND held > limit_value;
    DELETE FROM rate_limit_claims WHERE NEW.rate_limit_key IS NOT NULL
       AND tenant_id = NEW.tenant_id AND key = NEW.rate_limit_key
       AND claimed_ms <= CAST(round((julianday(NEW.updated_at) - 2440587.5) * 86400000) AS INTEGER)
           - 1000 * (SELECT period_seconds FROM rate_limits r WHERE r.tenant_id = NEW.tenant_id AND r.key = NEW.rate_limit_key);
    INSERT INTO rate_limit_claims (tenant_id, key, claimed_ms, task_id)
    SELECT NEW.tenant_id, NEW.rate_limit_key,
           CAST(round((julianday(NEW.updated_at) - 2440587.5) * 86400000) AS INTEGER), NEW.id
     WHERE NEW.rate_limit_key IS NOT NULL AND EXISTS (SELECT 1 FROM rate_limits r
           WHERE r.tenant_id = NEW.tenant_id AND r.key = NEW.rate_limit_key);
    SELECT RAISE(ABORT, 'orch: flow limit reached') FROM rate_limits r
     WHERE NEW.rate_limit_key IS NOT NULL AND r.tenant_id = NEW.tenant_id AND r.key = NEW.rate_limit_key
       AND r.limit_value < (SELECT count(*) FROM rate_limit_claims c
           WHERE c.tenant_id = r.tenant_id AND c.key = r.key
             AND c.claimed_ms > CAST(round((julianday(NEW.updated_at) - 2440587.5) * 86400000) AS INTEGER)
                 - 1000 * r.period_seconds);
END;

-- A held task stops being held (any path): its slot frees.
CREATE TRIGGER tasks_limits_free AFTER UPDATE OF state ON tasks
WHEN NEW.concurrency_key IS NOT NULL AND OLD.state IN ('claimed', 'in_progress')
     AND NEW.state NOT IN ('claimed', 'in_progress')
BEGIN
    UPDATE concurrency_keys SET held = max(held - 1, 0)
     WHERE tenant_id = NEW.tenant_id AND key = NEW.concurrency_key;
END;

CREATE TRIGGER tasks_limits_free_deleted AFTER DELETE ON tasks
WHEN OLD.concurrency_key IS NOT NULL AND OLD.state IN ('claimed', 'in_progress')
BEGIN
    UPDATE concurrency_keys SET held = max(held - 1, 0)
     WHERE tenant_id = OLD.tenant_id AND key = OLD.concurrency_key;
END;
