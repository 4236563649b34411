-- Flow limits: what the claim pays for them (`orch bench limits`).
--
-- 1. The fair pick's probe of the group without a key walked the claim-order
--    index over every pending keyed task before it (none of which it could
--    take): with 4,000 keyed tasks pending, every claim walked them. The
--    index below holds the claimable tasks without a key alone.
CREATE INDEX tasks_claimable_keyless ON tasks (tenant_id, priority_rank DESC, created_at, id, run_at)
    WHERE state = 'pending' AND concurrency_key IS NULL;

-- 2. Each rate key's window is checked in constant time.
--
-- The claim used to count a rate key's log (`rate_limit_claims`) for every
-- candidate it looked at, and the trigger counted it again: a key allowing
-- 1,000,000 claims a minute made every claim walk the minute's claims
-- (`orch bench limits`: 137 tasks/s against 1,727 without limits). Now
-- `rate_limits.logged` is the number of the key's rows in the log, kept by
-- the trigger that writes the log, so a check is that count less the rows
-- that left the window since the key's last claim (an index walk over
-- those few).
ALTER TABLE rate_limits ADD COLUMN logged INTEGER NOT NULL DEFAULT 0;
UPDATE rate_limits SET logged = (SELECT count(*) FROM rate_limit_claims c
    WHERE c.tenant_id = rate_limits.tenant_id AND c.key = rate_limits.key);

-- The trigger of 0020, split: the slot of a concurrency key here, the rate
-- key's log in its own trigger below, which runs only for tasks that name
-- one.
DROP TRIGGER tasks_limits_take;
CREATE TRIGGER tasks_limits_take AFTER UPDATE OF state ON tasks
WHEN NEW.state IN ('claimed', 'in_progress') AND OLD.state NOT IN ('claimed', 'in_progress')
BEGIN
    UPDATE concurrency_keys SET held = held + CASE WHEN NEW.concurrency_key IS NULL THEN 0 ELSE 1 END,
           last_claimed_at = NEW.updated_at
     WHERE tenant_id = NEW.tenant_id AND key = COALESCE(NEW.concurrency_key, '');
    SELECT RAISE(ABORT, 'orch: flow limit reached') FROM concurrency_keys
     WHERE tenant_id = NEW.tenant_id AND key = NEW.concurrency_key AND held > limit_value;
END;

-- A claim of a task with a rate key that has a limit: the claims that left
-- the window leave the count and the log, the claim joins both, and a count
-- over the limit aborts the statement (a claim that raced; the claim runs
-- again).
CREATE TRIGGER tasks_limits_rate AFTER UPDATE OF state ON tasks
WHEN NEW.rate_limit_key IS NOT NULL
     AND NEW.state IN ('claimed', 'in_progress') AND OLD.state NOT IN ('claimed', 'in_progress')
BEGIN
    UPDATE rate_limits SET logged = logged + 1 - (SELECT count(*) FROM rate_limit_claims c
           WHERE c.tenant_id = rate_limits.tenant_id AND c.key = rate_limits.key
             AND c.claimed_ms <= CAST(round((julianday(NEW.updated_at) - 2440587.5) * 86400000) AS INTEGER)
                 - 1000 * rate_limits.period_seconds)
     WHERE tenant_id = NEW.tenant_id AND key = NEW.rate_limit_key;
    DELETE FROM rate_limit_claims WHERE tenant_id = NEW.tenant_id AND key = NEW.rate_limit_key
       AND claimed_ms <= CAST(round((julianday(NEW.updated_at) - 2440587.5) * 86400000) AS INTEGER)
           - 1000 * (SELECT period_seconds FROM rate_limits r WHERE r.tenant_id = NEW.tenant_id AND r.key = NEW.rate_limit_key);
    INSERT INTO rate_limit_claims (tenant_id, key, claimed_ms, task_id)
    SELECT NEW.tenant_id, NEW.rate_limit_key,
           CAST(round((julianday(NEW.updated_at) - 2440587.5) * 86400000) AS INTEGER), NEW.id
     WHERE EXISTS (SELECT 1 FROM rate_limits r WHERE r.tenant_id = NEW.tenant_id AND r.key = NEW.rate_limit_key);
    SELECT RAISE(ABORT, 'orch: flow limit reached') FROM rate_limits r
     WHERE r.tenant_id = NEW.tenant_id AND r.key = NEW.rate_limit_key AND r.logged > r.limit_value;
END;
