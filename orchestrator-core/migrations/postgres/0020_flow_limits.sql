-- Flow limits (issue 31): concurrency keys, fair claiming across keys and
-- rate limits per key, all enforced inside the one claim statement.
--
-- `concurrency_key` / `rate_limit_key` never change after create.
-- `limit_waiting_at`: when the `task.limit_waiting` event was recorded (once
-- per task).
ALTER TABLE tasks ADD COLUMN concurrency_key TEXT;
ALTER TABLE tasks ADD COLUMN rate_limit_key TEXT;
ALTER TABLE tasks ADD COLUMN limit_waiting_at TIMESTAMPTZ;

-- One row per concurrency key of a tenant that has a limit or ever had a
-- task, plus the row with the empty key: the group of tasks without a key
-- (keys are 1 to 200 characters, so '' names no user key). `held` counts the
-- key's claimed and in-progress tasks; the trigger below keeps it in the
-- transaction that moves the task, so every path that frees a slot
-- (complete, fail, cancel, lease expiry, release) frees it by construction.
-- `last_claimed_at` is what fair claiming orders the groups by.
CREATE TABLE concurrency_keys (
    tenant_id                 UUID NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    key                       TEXT NOT NULL,
    limit_value               INTEGER NOT NULL DEFAULT 1,
    limit_set                 BOOLEAN NOT NULL DEFAULT FALSE,
    held                      INTEGER NOT NULL DEFAULT 0,
    last_claimed_at           TIMESTAMPTZ,
    created_at                TIMESTAMPTZ NOT NULL,
    updated_at                TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, key)
);

CREATE TABLE rate_limits (
    tenant_id                 UUID NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    key                       TEXT NOT NULL,
    limit_value               INTEGER NOT NULL,
    period_seconds            INTEGER NOT NULL,
    created_at                TIMESTAMPTZ NOT NULL,
    updated_at                TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, key)
);

-- The claims of each rate key within its window (epoch milliseconds), so
-- the window slides exactly; older rows are pruned by the claim trigger.
CREATE TABLE rate_limit_claims (
    tenant_id                 UUID NOT NULL,
    key                       TEXT NOT NULL,
    claimed_ms                BIGINT NOT NULL,
    task_id                   UUID NOT NULL
);
CREATE INDEX rate_limit_claims_window ON rate_limit_claims (tenant_id, key, claimed_ms);

-- The fair pick of the claim: whether the tenant has pending keyed tasks
-- (it picks fairly only then), each key's oldest eligible task, and the
-- groups in the order of their last claim. Then the counts of the listings
-- and the limit-waiting sweep.
CREATE INDEX tasks_keyed_claimable ON tasks (tenant_id, concurrency_key, priority_rank DESC, created_at, id, run_at)
    WHERE state = 'pending' AND concurrency_key IS NOT NULL;
CREATE INDEX concurrency_keys_fair ON concurrency_keys (tenant_id, last_claimed_at NULLS FIRST, key);
CREATE INDEX tasks_concurrency_key ON tasks (tenant_id, concurrency_key, state) WHERE concurrency_key IS NOT NULL;
CREATE INDEX tasks_rate_limit_key ON tasks (tenant_id, rate_limit_key, state) WHERE rate_limit_key IS NOT NULL;
CREATE INDEX tasks_limit_unmarked ON tasks (created_at) WHERE state = 'pending' AND limit_waiting_at IS NULL
    AND (concurrency_key IS NOT NULL OR rate_limit_key IS NOT NULL);

-- Slots and windows, in the transaction that moves the task. A task that
-- becomes held takes its key's slot (the UPDATE waits on the key row's lock
-- and reads its latest count, so concurrent claims on several replicas
-- count one after the other; over the limit aborts the statement: the
-- claim's own filter already skips full keys, so this fires only for a
-- claim that raced, which the claim runs again), moves its group's last
-- claim, and logs a rate key's claim (the rate row is locked first, so the
-- window is counted one claim at a time). A held task that stops being held
-- frees its slot.
CREATE FUNCTION orch_flow_limits() RETURNS trigger LANGUAGE plpgsql AS $orch$
DECLARE
    v_held integer; v_limit integer; v_period integer; v_ms bigint; v_count bigint;
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF OLD.concurrency_key IS NOT NULL AND OLD.state IN ('claimed', 'in_progress') THEN
            UPDATE concurrency_keys SET held = greatest(held - 1, 0)
             WHERE tenant_id = OLD.tenant_id AND key = OLD.concurrency_key;
        END IF;
        RETURN OLD;
    END IF;
    IF NEW.state IN ('claimed', 'in_progress') AND OLD.state NOT IN ('claimed', 'in_progress') THEN
        UPDATE concurrency_keys SET held = held + CASE WHEN NEW.concurrency_key IS NULL THEN 0 ELSE 1 END,
               last_claimed_at = NEW.updated_at
         WHERE tenant_id = NEW.tenant_id AND key = coalesce(NEW.concurrency_key, '')
         RETURNING held, limit_value INTO v_held, v_limit;
        IF NEW.concurrency_key IS NOT NULL AND FOUND AND v_held > v_limit THEN
            RAISE EXCEPTION 'orch: flow limit reached' USING ERRCODE = 'OR001';
        END IF;
        IF NEW.rate_limit_key IS NOT NULL THEN
            SELECT limit_value, period_seconds INTO v_limit, v_period FROM rate_limits
             WHERE tenant_id = NEW.tenant_id AND key = NEW.rate_limit_key FOR UPDATE;
            IF FOUND THEN
                v_ms := (extract(epoch FROM NEW.updated_at) * 1000)::bigint;
                DELETE FROM rate_limit_claims WHERE tenant_id = NEW.tenant_id
                   AND key = NEW.rate_limit_key AND claimed_ms <= v_ms - 1000 * v_period;
                INSERT INTO rate_limit_claims (tenant_id, key, claimed_ms, task_id)
                VALUES (NEW.tenant_id, NEW.rate_limit_key, v_ms, NEW.id);
                SELECT count(*) INTO v_count FROM rate_limit_claims WHERE tenant_id = NEW.tenant_id
                   AND key = NEW.rate_limit_key AND claimed_ms > v_ms - 1000 * v_period;
                IF v_count > v_limit THEN
                    RAISE EXCEPTION 'orch: flow limit reached' USING ERRCODE = 'OR001';
                END IF;
            END IF;
        END IF;
    ELSIF NEW.concurrency_key IS NOT NULL AND OLD.state IN ('claimed', 'in_progress')
          AND NEW.state NOT IN ('claimed', 'in_progress') THEN
        UPDATE concurrency_keys SET held = greatest(held - 1, 0)
         WHERE tenant_id = NEW.tenant_id AND key = NEW.concurrency_key;
    END IF;
    RETURN NEW;
END
$orch$;

-- Only rows whose state changes call the function, so the hot path of a
-- task without keys pays one cheap trigger test per move.
CREATE TRIGGER tasks_flow_limits AFTER UPDATE OF state ON tasks
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state)
    EXECUTE FUNCTION orch_flow_limits();
CREATE TRIGGER tasks_flow_limits_deleted AFTER DELETE ON tasks
    FOR EACH ROW WHEN (OLD.concurrency_key IS NOT NULL)
    EXECUTE FUNCTION orch_flow_limits();
