-- The flow-limit trigger of 0020/0021 fires only on the moves its function
-- acts on: into a held state (claimed, in_progress) from another, and out
-- of one for a task with a concurrency key. It fired on every change of
-- state, so a start (claimed -> in_progress) and the completion of a task
-- without a key each called the PL/pgSQL function to do nothing: two of
-- the three calls a plain task's lifecycle made, all on the one writer's
-- backend. The condition is the function's own branches, so what the
-- trigger does is unchanged; SQLite's triggers (0021) have had these
-- conditions from the start.
DROP TRIGGER tasks_flow_limits ON tasks;
CREATE TRIGGER tasks_flow_limits AFTER UPDATE OF state ON tasks
    FOR EACH ROW WHEN (
        OLD.state IS DISTINCT FROM NEW.state
        AND ((NEW.state IN ('claimed', 'in_progress')
              AND OLD.state NOT IN ('claimed', 'in_progress'))
          OR (NEW.concurrency_key IS NOT NULL
              AND OLD.state IN ('claimed', 'in_progress')
              AND NEW.state NOT IN ('claimed', 'in_progress'))))
    EXECUTE FUNCTION orch_flow_limits();
