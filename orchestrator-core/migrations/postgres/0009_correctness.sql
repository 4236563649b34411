-- Correctness: invariants the database holds by construction.

-- One active task per agent. The claim statement's NOT EXISTS guard cannot
-- see a concurrent claim that has not committed yet (PostgreSQL, READ
-- COMMITTED); a unique partial index can: the second claim for an agent waits
-- for the first to commit and then fails with a unique violation, and the
-- claim engine retries it (and gets the held task back).
--
-- A database written before this index may hold agents with two active
-- tasks: keep each agent's earliest claim and put the others back to pending.
UPDATE tasks SET state = 'pending', assigned_agent_id = NULL, assigned_worker_id = NULL,
    claimed_at = NULL, started_at = NULL
WHERE state IN ('claimed', 'in_progress') AND assigned_agent_id IS NOT NULL
  AND EXISTS (SELECT 1 FROM tasks k
              WHERE k.assigned_agent_id = tasks.assigned_agent_id
                AND k.state IN ('claimed', 'in_progress')
                AND k.id <> tasks.id
                AND (COALESCE(k.claimed_at, k.created_at) < COALESCE(tasks.claimed_at, tasks.created_at)
                     OR (COALESCE(k.claimed_at, k.created_at) = COALESCE(tasks.claimed_at, tasks.created_at)
                         AND k.id < tasks.id)));
DROP INDEX tasks_held_by_agent;
CREATE UNIQUE INDEX tasks_held_by_agent ON tasks (assigned_agent_id) WHERE state IN ('claimed', 'in_progress');

-- `GET /logs?trace_id=`: one trace's rows without walking the tenant's log.
CREATE INDEX logs_trace ON logs (tenant_id, trace_id, txid, id) WHERE trace_id IS NOT NULL;
